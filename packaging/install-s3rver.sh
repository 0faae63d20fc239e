#!/usr/bin/env bash
# Installs s3rver (an S3-compatible server, from the npm registry) for the
# tests of s3:// locations, into a folder of its own: $TDSTUDIO_TOOLS_DIR
# (default ~/.cache/tdstudio)/s3rver. Node and npm come from Debian when
# this machine has no npm. Safe to run again: it does nothing when s3rver is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="3.7.1"
dir="${TDSTUDIO_TOOLS_DIR:-$HOME/.cache/tdstudio}/s3rver"
[ -f "$dir/node_modules/s3rver/package.json" ] &&
    grep -q "\"version\": \"$version\"" "$dir/node_modules/s3rver/package.json" && exit 0
command -v npm >/dev/null || "$here/install-deps.sh" nodejs npm
mkdir -p "$dir"
echo "Installing s3rver $version into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "s3rver@$version" >&2
