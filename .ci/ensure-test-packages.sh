#!/usr/bin/env bash
# The Debian packages some tests use, installed by .ci/run before `npm test` (plain `npm test`
# installs nothing). A no-op when every program is present; otherwise apt-get installs the missing
# packages (needs root or passwordless sudo). Never fails the build: a test whose program is still
# missing is skipped and says so.
#   chromium    /usr/bin/chromium   the dashboard's browser test (test/dashboard/browser.system.test.ts)
#   prometheus  promtool            the alert rules' unit tests (test/observability/alert-rules.test.ts)
#   pgbouncer   pgbouncer           the transaction-pooler test (test/db/transaction-pooler.system.test.ts); Debian 12 ships 1.18
set -uo pipefail

has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

missing=()
has chromium || missing+=(chromium)
has promtool || missing+=(prometheus)
has pgbouncer || missing+=(pgbouncer)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

say() { echo "ensure-test-packages: $*" >&2; }
if ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get on this machine; the tests that need ${missing[*]} will be skipped"
  exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    say "not root and no passwordless sudo; the tests that need ${missing[*]} will be skipped"
    exit 0
  fi
fi
say "installing ${missing[*]} with apt-get"
"${as_root[@]}" apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the package lists there are"
# One package at a time: one that cannot be installed does not keep the others out.
for package in "${missing[@]}"; do
  if ! DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$package" >/dev/null 2>&1; then
    say "apt-get could not install $package; the tests that need it will be skipped"
  fi
done
exit 0
