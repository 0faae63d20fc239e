#!/usr/bin/env bash
# Regenerates the README's screenshots (resources/screenshots/*.png) from the demo datasets,
# with tdstudio's own --screenshot: each is taken once the window shows what
# was asked. The save dialog's progress is caught by its test, which holds
# a save half-way (its screenshots go to $TDSTUDIO_SCREENSHOT_DIR).
# usage: resources/screenshots/make_screenshots.sh [BUILD_DIR]    (default: build/, built by packaging/build.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
out="$root/resources/screenshots"
tdstudio="$build/app/tdstudio"
demo="$build/resources/demo.tdz"
next="$build/resources/demo-next.tdz"
for f in "$tdstudio" "$demo" "$next" "$build/tests/tst_save_dialog"; do
    [ -e "$f" ] || { echo "make_screenshots: $f is missing; build first (packaging/build.sh)" >&2; exit 1; }
done
export QT_QPA_PLATFORM=offscreen
# The window's size and the preview modes tdstudio remembers live in the
# settings: start from none, so the pictures do not depend on who runs this.
export XDG_CONFIG_HOME
XDG_CONFIG_HOME="$(mktemp -d)"
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

shot() {  # shot NAME ARGS...
    local name="$1"
    shift
    "$tdstudio" "$@" --screenshot "$out/$name.png" 2>/dev/null
    echo "resources/screenshots/$name.png"
}
shot overview "$demo"
shot table "$demo" --select features --view table
shot image "$demo" --select rgb --view image
shot plot "$demo" --select audio --view plot
shot statistics "$demo" --select features --view statistics
shot compare "$demo" --compare "$next" --select rgb

TDSTUDIO_SCREENSHOT_DIR="$out" "$build/tests/tst_save_dialog" \
    dialogStatesAndInlineValidation cancelKeepsTheDestination >/dev/null
mv "$out/save-dialog-archive.png" "$out/save-options.png"
echo "resources/screenshots/save-options.png"
echo "resources/screenshots/save-progress.png"
