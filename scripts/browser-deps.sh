#!/usr/bin/env bash
# Installs what the browser test of the review page needs (tests/e2e/
# test_browser.cpp): Chromium from Debian's packages and playwright-core from
# npm, pinned, into <build-dir>/browser/node_modules (no browser download:
# the test points playwright at /usr/bin/chromium). Needs root (or sudo) for
# apt. Does nothing when both are there.
#
#   scripts/browser-deps.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/browser-deps.sh BUILD_DIR}
# 1.65 runs on Node 20 (Debian 12's nodejs is 18: NodeSource's 20 or later
# is needed) and drives Debian's Chromium 15x over CDP.
playwright_version=1.65.1

missing=()
for p in chromium nodejs npm; do
  command -v "${p/nodejs/node}" >/dev/null 2>&1 && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "browser test: node $node_major is too old for playwright-core $playwright_version; it will be skipped" >&2
  exit 0
fi
mkdir -p "$build/browser"
if [ "$(node -p "try { require('$build/browser/node_modules/playwright-core/package.json').version } catch (e) { '' }")" != "$playwright_version" ]; then
  (cd "$build/browser" && npm install --no-audit --no-fund --silent "playwright-core@$playwright_version")
fi
