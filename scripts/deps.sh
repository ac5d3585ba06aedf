#!/usr/bin/env bash
# Installs what building and testing kaicoder needs, from Debian's packages.
# Does nothing when everything is already there. Needs root (or sudo).
set -euo pipefail

packages=(build-essential cmake pkg-config git util-linux
          libcli11-dev libtomlplusplus-dev libfmt-dev libgit2-dev libdtl-dev
          catch2 nlohmann-json3-dev
          libmbedtls-dev   # HMAC seals; libgit2-dev already pulls it in
          libcpp-httplib-dev)  # the HTTP server of `kaicoder serve`
if [ "${1:-}" = "--test" ]; then
  # python3-jsonschema checks every --json output against schemas/.
  packages+=(mandoc bash-completion zsh fish time ninja-build ccache python3-jsonschema)
  # setfacl: the two-user case that grants the agent user a file through an ACL.
  # pkill: the cases that make a throwaway user end its processes before userdel.
  packages+=(acl procps)
  # The MCP end-to-end test runs the official SDK client on Node. A node and
  # npm already here (from anywhere) are used as they are: Debian's npm
  # conflicts with a Node installed another way, so Debian's pair comes
  # only when there is neither.
  if ! command -v node >/dev/null && ! command -v npm >/dev/null; then
    packages+=(nodejs npm)
  fi
fi
# `deps.sh --fuzz`: the test packages and clang, whose libFuzzer the fuzz
# targets link (scripts/fuzz.sh).
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(mandoc bash-completion zsh fish time ninja-build ccache clang)
fi
# `deps.sh --tidy`: clang-tidy too (scripts/tidy.sh), which parses lib/ with
# the same headers a build needs.
if [ "${1:-}" = "--tidy" ]; then
  packages+=(clang-tidy)
fi
# `deps.sh --package`: what scripts/package.sh and check-package.sh need
# besides the build: CPack's DEB generator runs dpkg-shlibdeps (dpkg-dev)
# on what `file` says is an ELF file; the check runs man and reads
# bash-completion's folder.
if [ "${1:-}" = "--package" ]; then
  packages+=(dpkg-dev file man-db bash-completion)
fi
# `deps.sh --only P…`: just these (scripts/browser-deps.sh).
if [ "${1:-}" = "--only" ]; then
  shift
  packages=("$@")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
