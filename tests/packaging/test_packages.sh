#!/usr/bin/env bash
# Builds the Debian packages, unpacks them into a temporary root, and checks
# them as an installation: the installed tdstudio --info on a fixture, the
# .desktop file (desktop-file-validate), the MIME type (update-mime-database
# and a lookup of *.tdz), and a consumer project built with
# find_package(tensordict COMPONENTS torch) against the unpacked files: one
# program with the core only, one with the torch part.
# usage: test_packages.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
source="$2"
fixtures="$source/tests/fixtures/tensordict-0.14"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$build"
cpack -G DEB -B "$work/debs" > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
ls "$work"/debs/*.deb
for pkg in tdstudio libtensordict0 libtensordict-torch0 libtensordict-dev; do
    deb=$(ls "$work"/debs/${pkg}_*.deb)
    echo "== $pkg: $(dpkg-deb -f "$deb" Depends)"
    dpkg -x "$deb" "$work/root"
done
root="$work/root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
export LD_LIBRARY_PATH="$root/usr/lib/$multiarch"

# The installed application, run without a display.
out=$(env -u DISPLAY QT_QPA_PLATFORM= "$root/usr/bin/tdstudio" --info "$fixtures/simple" --sha256)
echo "$out"
grep -q '\["b", "c"\]  tensor  torch.float32  shape \[3, 2\]' <<<"$out"
grep -q f46913286d895f62d646314f400fc3d7a543cf34eb4ae56df87f43dc4582a36b <<<"$out"
"$root/usr/bin/tdstudio" --version | grep '^libtensordict ' >/dev/null
# The window, from the module installed in the package's library folder.
QT_QPA_PLATFORM=offscreen "$root/usr/bin/tdstudio" "$fixtures/simple" --screenshot "$work/window.png"
test -s "$work/window.png"

# Desktop integration.
desktop-file-validate "$root/usr/share/applications/tdstudio.desktop"
test -f "$root/usr/share/icons/hicolor/scalable/apps/tdstudio.svg"
mkdir -p "$work/mime/packages"
cp "$root/usr/share/mime/packages/tdstudio.xml" "$work/mime/packages/"
cp /usr/share/mime/packages/freedesktop.org.xml "$work/mime/packages/"
update-mime-database "$work/mime"
grep -q 'application/x-tensordict-archive:\*.tdz' "$work/mime/globs"
grep -q 'application/x-tensordict-archive application/zip' "$work/mime/subclasses"
for glob in 'x-pytorch-checkpoint:\*.pt' 'x-pytorch-checkpoint:\*.pth' 'x-safetensors:\*.safetensors' \
    'x-npy:\*.npy' 'x-npz:\*.npz'; do
    grep -q "application/$glob\$" "$work/mime/globs"
done

# A consumer of the installed library and its CMake package config.
cmake -S "$source/tests/packaging/consumer" -B "$work/consumer" -G Ninja \
    -DCMAKE_PREFIX_PATH="$root/usr" -DCMAKE_BUILD_TYPE=Release > "$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer" >> "$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
grep -q "$root/usr/lib/$multiarch/libtensordict.so" "$work/consumer/build.ninja"
sum=$("$work/consumer/consumer" "$fixtures/archive_simple.tdz" b c)
echo "consumer: $sum"
test "$sum" = "sum 6"
sum=$("$work/consumer/consumer_core" "$fixtures/archive_simple.tdz" b c)
echo "consumer_core: $sum"
test "$sum" = "sum 6"
# The core alone never brings libtorch in, nor does the application or its package.
fail() { echo "error: $*" >&2; exit 1; }
if ldd "$work/consumer/consumer_core" | grep -E 'libtorch|libc10'; then fail "consumer_core loads libtorch"; fi
window_module="$root/usr/lib/$multiarch/tdstudio/tdstudio-window.so"
for binary in "$root/usr/bin/tdstudio" "$window_module"; do
    if ldd "$binary" | grep -E 'libtorch|libc10|libopencv|libQt5'; then fail "$binary loads libtorch"; fi
done
# The command line loads no GUI library; the package depends on those the window needs.
if ldd "$root/usr/bin/tdstudio" | grep -E 'libQt6(Gui|Widgets)'; then fail "tdstudio loads Qt Gui"; fi
dpkg-deb -f "$(ls "$work"/debs/tdstudio_*.deb)" Depends | grep -q libqt6widgets6 ||
    fail "the tdstudio package does not depend on Qt Widgets"
# libcurl is loaded with the first HTTP request: no command loads it at start,
# so the package names it.
if ldd "$root/usr/bin/tdstudio" | grep -q libcurl; then fail "tdstudio loads libcurl at start"; fi
dpkg-deb -f "$(ls "$work"/debs/libtensordict0_*.deb)" Depends | grep -q libcurl4 ||
    fail "libtensordict0 does not depend on libcurl4"
ldd "$work/consumer/consumer" | grep libtorch >/dev/null || fail "consumer does not link libtorch"
for pkg in tdstudio libtensordict0; do
    if dpkg-deb -f "$(ls "$work"/debs/${pkg}_*.deb)" Depends | grep -q torch; then fail "$pkg depends on libtorch"; fi
done
echo "packages OK"
