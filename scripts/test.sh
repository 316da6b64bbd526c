#!/usr/bin/env bash
# The whole test suite: setup (with Chromium for the browser tests), lint,
# type-check, then pytest.  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_BROWSER=1 bash scripts/setup.sh
.venv/bin/ruff check bundler tests bench example_bundles/make
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
