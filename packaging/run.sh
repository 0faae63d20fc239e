#!/usr/bin/env bash
# The README's run command: installs what is missing, builds, and opens
# tdstudio on PATH, or on the bundled demo dataset without one.
# usage: packaging/run.sh [PATH] [tdstudio options...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/build.sh" default
if [ $# -eq 0 ]; then
    set -- "$root/build/resources/demo.tdz"
fi
exec "$root/build/app/tdstudio" "$@"
