#!/usr/bin/env bash
# The main job: set everything up, then build the air-quality example's review
# site (verified against the committed demo key) and print where to open it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/review-bundler build example_bundles/air-quality -o _site/air-quality \
  --trust-key example_bundles/demo-key.pub
