#!/usr/bin/env bash
# Fuzzes the shell classifier, the import scanners, the patch parsers and
# MCP sessions for a bounded time, split between them: a clang build of
# their own in build-fuzz/ (libFuzzer with AddressSanitizer and
# UndefinedBehaviorSanitizer), seeded from tests/fuzz/. Installs what is
# missing first. CI runs it after the tests and the package; it is not part
# of scripts/test.sh, whose cores it would share.
#
#   scripts/fuzz.sh [SECONDS]   default 30
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --fuzz
seconds=${1:-30}
echo "== fuzz the shell classifier, the import scanners, the patch parsers and MCP sessions for ${seconds} s"
FUZZ_OUT="$PWD/build-fuzz" tests/fuzz/run.sh "$seconds"
