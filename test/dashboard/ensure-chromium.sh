#!/usr/bin/env bash
# Test setup for the dashboard's browser test: Debian's chromium at /usr/bin/chromium.
# A no-op when it is already there; otherwise installs it with apt-get (needs root or sudo).
# Never fails the build: where chromium cannot be installed, the browser test skips and says why.
set -uo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no apt-get on this machine; the dashboard browser test will be skipped" >&2
  exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "ensure-chromium: not root and no passwordless sudo; the dashboard browser test will be skipped" >&2
    exit 0
  fi
fi
echo "ensure-chromium: installing Debian's chromium for the dashboard browser test"
if ! { "${as_root[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium; } >/dev/null; then
  echo "ensure-chromium: apt-get could not install chromium; the dashboard browser test will be skipped" >&2
fi
exit 0
