#!/usr/bin/env bash
# Builds kaicoder's Debian package from this checkout: a release build in a
# folder of its own (build-package/, never the test builds), installed under
# /usr by CPack's DEB generator, with the dependencies dpkg-shlibdeps finds
# for the libraries the binary links (Debian's own packages). Installs what
# is missing first (scripts/deps.sh --package).
#
#   scripts/package.sh          → build-package/kaicoder_<version>-1_<arch>.deb
#   KAICODER_PACKAGE_DIR=DIR    build there instead
#
# Install it with `sudo apt install ./build-package/kaicoder_*.deb`;
# scripts/check-package.sh checks it (what .ci/run does after the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --package

dir=${KAICODER_PACKAGE_DIR:-build-package}
jobs=$(nproc 2>/dev/null || echo 2)
flags=()
command -v ninja >/dev/null && flags+=(-G Ninja)
command -v ccache >/dev/null && flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ -f "$dir/CMakeCache.txt" ]; then
  want=$( [[ " ${flags[*]} " == *" -G Ninja "* ]] && echo Ninja || echo "Unix Makefiles")
  grep -q "^CMAKE_GENERATOR:INTERNAL=$want\$" "$dir/CMakeCache.txt" || rm -rf "$dir"
fi
echo "== release build ($dir)"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DKAICODER_TESTS=OFF \
      "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$jobs"
echo "== package"
rm -f "$dir"/kaicoder_*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
deb=$(ls "$dir"/kaicoder_*.deb)
echo "$deb"
