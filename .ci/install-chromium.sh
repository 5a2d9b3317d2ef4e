#!/usr/bin/env bash
# The browser for the report tests: Debian's chromium, driven by Playwright (pip, in the [test]
# extra) through its bundled driver. No browser build is downloaded (never `playwright install`).
# Idempotent; run as root (CI is). Called from .ci/run before pytest.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null
