#!/usr/bin/env bash
# Checks the Debian package scripts/package.sh made, without installing it
# on this machine: its fields (dpkg-deb), that every library the binary
# needs comes from a package it depends on, and its contents unpacked into
# a throwaway root: `kaicoder --version`, `kaicoder serve` finding its
# server program in /usr/libexec/kaicoder/, `man -w kaicoder` with MANPATH
# there, the bash completion where bash-completion looks, the zsh and fish
# completions, kaicoder.toml.example and the JSON Schemas.
#
#   scripts/check-package.sh [DEB]    (default: build-package/kaicoder_*.deb)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --package

deb=${1:-$(ls build-package/kaicoder_*.deb 2>/dev/null | head -n 1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "no package: run scripts/package.sh first" >&2; exit 1; }
fail() { echo "package check failed: $*" >&2; exit 1; }

echo "== dpkg-deb --info $deb"
dpkg-deb --info "$deb" >/dev/null || fail "dpkg-deb cannot read it"
[ "$(dpkg-deb -f "$deb" Package)" = kaicoder ] || fail "Package is not kaicoder"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[ -n "$depends" ] || fail "no Depends"
# The package names of Depends, one a line ("libfoo1 (>= 1.2)" is libfoo1).
depends_names=$(tr ',|' '\n\n' <<<"$depends" | sed 's/^ *//; s/[ (].*//')

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
bin="$root/usr/bin/kaicoder"
[ -x "$bin" ] || fail "no /usr/bin/kaicoder"
server="$root/usr/libexec/kaicoder/kaicoder-serve"
[ -x "$server" ] || fail "no /usr/libexec/kaicoder/kaicoder-serve (the review page's server program)"

# Every shared library the binary links belongs to a package named in Depends.
# dpkg knows a library by the path its package shipped it under: with
# /lib merged into /usr/lib, try both spellings.
owner_of() {
  local p found
  for p in "$1" "${1#/usr}" "/usr${1}"; do
    found=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$found" ] && { echo "$found"; return 0; }
  done
  return 1
}
checked=0
while read -r lib; do
  checked=$((checked + 1))
  owner=""
  for candidate in "$lib" "$(realpath "$lib")"; do
    owner=$(owner_of "$candidate") && [ -n "$owner" ] && break
  done
  [ -n "$owner" ] || fail "no Debian package owns $lib"
  grep -qxF -- "$owner" <<<"$depends_names" || fail "$lib comes from $owner, which Depends does not name"
done < <(
  # The libraries each program names itself (NEEDED); theirs come with their packages.
  for program in "$bin" "$server"; do
    resolved=$(ldd "$program")
    readelf -d "$program" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
      while read -r name; do awk -v n="$name" '$1 == n && $3 ~ /^\// { print $3 }' <<<"$resolved"; done
  done
)

[ "$checked" -gt 0 ] || fail "no linked library found to check"
echo "the $checked libraries kaicoder links come from packages it depends on"
echo "== the files, where Debian looks for them"
"$bin" --version | grep -q '^kaicoder ' || fail "kaicoder --version"
"$bin" --version
# `kaicoder serve` hands itself to the server program beside it: with no
# terminal (setsid: none to open), that program refuses (it shows its sign-in address on a
# terminal only), which shows it was found and started.
serve_out=$(cd "$root" && setsid -w "$bin" serve </dev/null 2>&1 >/dev/null) && fail "kaicoder serve ran without a terminal"
grep -q "terminal" <<<"$serve_out" || fail "kaicoder serve did not reach its server program: $serve_out"
page=$(MANPATH="$root/usr/share/man" man -w kaicoder) || fail "man -w kaicoder"
[[ $page == "$root"/usr/share/man/man1/kaicoder.1* ]] || fail "man -w kaicoder found $page"
MANPATH="$root/usr/share/man" man -w kaicoder.toml >/dev/null || fail "man -w kaicoder.toml"
completions=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null || echo /usr/share/bash-completion/completions)
[ -f "$root$completions/kaicoder" ] || fail "no bash completion in $completions"
bash -c "source '$root$completions/kaicoder' && complete -p kaicoder" >/dev/null || fail "bash completion does not load"
[ -f "$root/usr/share/zsh/vendor-completions/_kaicoder" ] || fail "no zsh completion"
[ -f "$root/usr/share/fish/vendor_completions.d/kaicoder.fish" ] || fail "no fish completion"
[ -f "$root/usr/share/kaicoder/kaicoder.toml.example" ] || fail "no kaicoder.toml.example"
ls "$root"/usr/share/kaicoder/schemas/*.schema.json >/dev/null 2>&1 || fail "no JSON Schemas"
for page in man1/kaicoder-approve.1 man1/kaicoder-rollback.1 man5/kaicoder.toml.5 man7/kaicoder-team.7; do
  [ -f "$root/usr/share/man/$page.gz" ] || fail "no $page.gz"
  gzip -t "$root/usr/share/man/$page.gz" || fail "$page.gz is not a whole gzip file"
done
MANPATH="$root/usr/share/man" man -w 7 kaicoder-team >/dev/null || fail "man -w 7 kaicoder-team"
echo "package ok: $deb"
