#!/usr/bin/env bash
# Idempotent setup: system packages (only when missing), a virtualenv in .venv,
# and review-bundler installed into it (editable, with the test extras).
#   WITH_BROWSER=1 also installs Debian's Chromium, Firefox ESR and WebKitGTK (with its
#   WebDriver and Xvfb) for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
fc-list 2>/dev/null | grep -i "DejaVuSans" >/dev/null || missing+=(fonts-dejavu-core)
if [ "${WITH_BROWSER:-0}" = "1" ] && [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
if [ "${WITH_BROWSER:-0}" = "1" ] && [ ! -x /usr/bin/firefox-esr ]; then
  missing+=(firefox-esr)
fi
# WebKit (Safari's engine): WebKitGTK's MiniBrowser and its WebDriver, on an Xvfb display
if [ "${WITH_BROWSER:-0}" = "1" ] && [ ! -x /usr/bin/WebKitWebDriver ]; then
  missing+=(webkit2gtk-driver)
fi
if [ "${WITH_BROWSER:-0}" = "1" ] && [ ! -x /usr/bin/Xvfb ]; then
  missing+=(xvfb)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
# An editable install compiles nothing; with PYTHONDONTWRITEBYTECODE set (as on
# these machines) every run would compile every module again (about 0.1 s).
.venv/bin/python -m compileall -q bundler >/dev/null
