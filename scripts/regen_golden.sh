#!/usr/bin/env bash
# Regenerate the golden review site that tests/site/test_site_golden.py compares against.
#
#   bash scripts/regen_golden.sh
#
# Run it after an intended change to the site's output (templates, theme,
# page producers, graphs), then review `git diff tests/golden` like any other
# change: the golden copy is how output changes become visible in review.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
rm -rf tests/golden/unsupported-gain
mkdir -p tests/golden
"$PY" -m bundler build example_bundles/unsupported-gain -o tests/golden/unsupported-gain \
  --trust-key example_bundles/demo-key.pub -j 1 -q
echo "golden site: tests/golden/unsupported-gain ($(find tests/golden/unsupported-gain -type f | wc -l) files)"
