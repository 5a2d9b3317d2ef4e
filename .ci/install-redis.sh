#!/usr/bin/env bash
# redis-server for the distributed-crawl tests (they start their own on a free loopback port;
# a missing redis-server fails them, it does not skip them). Debian's package, installed only
# when the machine lacks it. Idempotent; run as root (CI is). Called from .ci/run before pytest.
set -euo pipefail

if ! command -v redis-server >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  # The package starts a system service on 6379; the tests never use it.
fi
redis-server --version
