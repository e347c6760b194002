#!/usr/bin/env bash
# Install the Debian libraries Qt and VTK need and the C compiler of the generated kernels
# (solver.codegen), when missing (as root), or say what to install.
#   tools/system-libs.sh            libraries for headless runs and tests (offscreen Qt, EGL VTK)
#   tools/system-libs.sh --desktop  also the X11/xcb libraries for a real window
set -u
pkgs="libgl1 libegl1 libglib2.0-0 libdbus-1-3 libfontconfig1 libxkbcommon0"
if [ "${1:-}" = "--desktop" ]; then
  pkgs="$pkgs libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 libxkbcommon-x11-0"
fi
command -v dpkg-query >/dev/null 2>&1 || exit 0   # not Debian: nothing we can check
missing=""
# generated kernels need a C compiler (cc, or $CC) with the C library headers
if ! command -v "${CC:-cc}" >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' libc6-dev 2>/dev/null | grep -q "install ok installed"; then
  missing="gcc libc6-dev"
fi
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system libraries:$missing"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
else
  echo "MBS Studio needs these Debian packages:$missing" >&2
  echo "install them with: sudo apt-get install$missing" >&2
  exit 1
fi
