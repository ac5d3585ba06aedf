# Shared by the benchmark scripts (sourced, never run on its own).
#
#   bench_setup NAME BUILD_DIR DRIVER TOOL...
#
# checks that each TOOL and /usr/bin/time exist, makes sure BUILD_DIR holds
# an up-to-date libkaicoder_core.a (configuring it as a Release build of only
# that library when it has no build), creates a temporary $work folder removed at exit,
# compiles bench/DRIVER.cpp against the library into $driver (with
# $BENCH_LIBS too, for a driver that needs more of the library's own
# dependencies), and sets $build_type. $root must be the source tree.

bench_setup() {
  local name=$1 build=$2 src=$3
  bench_name=$name
  shift 3
  local tool
  for tool in g++ pkg-config "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not found" >&2; exit 1; }
  done
  [[ -x /usr/bin/time ]] || { echo "$name: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
  # Always brought up to date: a driver linked against a library older than
  # the headers it includes would measure nonsense, or crash.
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
  fi
  cmake --build "$build" --target kaicoder_core -j"$(nproc)" >/dev/null
  # kaicoder_core and the pure libraries it links (lib/shell, lib/util/text)
  core_libs=("$build/libkaicoder_core.a" "$build/libkaicoder_shell.a" "$build/libkaicoder_text.a")
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  work=$(mktemp -d "${TMPDIR:-/tmp}/kai-$name-XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  driver=$work/$src
  # shellcheck disable=SC2046
  g++ -std=c++20 -O2 -I"$root" "$root/bench/$src.cpp" "${core_libs[@]}" \
    $(pkg-config --libs libgit2 tomlplusplus) -lfmt ${BENCH_LIBS:-} -o "$driver"
}

# time_cmd NAME DIR CMD...: runs CMD in DIR under /usr/bin/time, appends
# "cpu wall" (seconds) to $work/NAME.times; its stdout goes to $work/NAME.out.
time_cmd() {
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && /usr/bin/time -f '%U %S %e' -o "$work/usage" "$@" >"$work/$name.out" 2>"$work/$name.err") ||
    { echo "$bench_name: $name failed:" >&2; cat "$work/$name.err" >&2; exit 1; }
  tail -n 1 "$work/usage" | awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' >>"$work/$name.times"
}
# time_median NAME: the line of $work/NAME.times with the median CPU time.
time_median() { sort -n -k1,1 "$work/$1.times" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'; }
