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

# node and npm may come from elsewhere than Debian (Debian 12's nodejs is 18):
# only what is not there at all is installed.
wanted=(chromium)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || wanted+=(nodejs npm)
"$(dirname "$0")/deps.sh" --only "${wanted[@]}"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "browser test: node $node_major is too old for playwright-core $playwright_version; it will be skipped" >&2
  exit 0
fi
mkdir -p "$build/browser"
build=$(cd "$build" && pwd)  # node's require takes a relative name for a package
if [ "$(node -p "try { require('$build/browser/node_modules/playwright-core/package.json').version } catch (e) { '' }")" != "$playwright_version" ]; then
  (cd "$build/browser" && npm install --no-audit --no-fund --silent "playwright-core@$playwright_version")
fi
