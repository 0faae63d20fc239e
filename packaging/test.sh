#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every
# test suite through ctest on a headless Qt platform. Exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/build.sh" default
cd "$root"
export QT_QPA_PLATFORM=offscreen
ctest --preset default --timeout 900 "$@"
