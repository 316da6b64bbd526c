from bundler.cli import run

run()
