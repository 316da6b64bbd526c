from bundler.cli import main

raise SystemExit(main())
