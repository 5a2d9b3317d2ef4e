#!/usr/bin/env bash
# pywb for the replay test (tests/test_warc_pywb.py), in its own venv .venv-pywb at the
# repository root: pywb 2.10.0 pins redis==2.10.6 and the project needs redis>=5, so it cannot
# share the test venv (and older pywb fails to build gevent). From PyPI: 20-60 s on
# CPython 3.11. Kept while it runs and the pins are unchanged; run from anywhere. The test finds
# it at $SITECRAWL_PYWB_VENV or .venv-pywb, and fails naming this script when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-pywb
pins=.ci/pywb-requirements.txt  # pywb 2.10.0 and the dependencies verified with it
if ! cmp -s "$pins" "$venv/pins.txt" || ! "$venv/bin/wayback" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q -r "$pins"
  cp "$pins" "$venv/pins.txt"  # installed: kept until the pins change
fi
"$venv/bin/wayback" --version
