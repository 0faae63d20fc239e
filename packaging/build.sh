#!/usr/bin/env bash
# Configures (once) and builds tdstudio in build/ (incremental on later runs).
# usage: packaging/build.sh [PRESET]    (default, or asan)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-default}"
"$root/packaging/install-deps.sh"
"$root/packaging/install-s3rver.sh"
cd "$root"
builddir="build"
[ "$preset" = "asan" ] && builddir="build-asan"
if [ ! -f "$builddir/build.ninja" ]; then
    cmake --preset "$preset" >&2
fi
cmake --build --preset "$preset" >&2
