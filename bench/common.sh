# Shared by the benchmark scripts (sourced, never run on its own).
#
#   bench_setup NAME BUILD_DIR DRIVER TOOL...
#
# checks that each TOOL and /usr/bin/time exist, builds the driver target
# DRIVER (bench/CMakeLists.txt) and the library it links in BUILD_DIR
# (configuring BUILD_DIR as a Release build without the tests when it has no
# build), sets $driver to it, $core_libs to the library's archives and
# $build_type, and creates a temporary $work folder removed at exit. $root
# must be the source tree.

bench_setup() {
  local name=$1 build=$2 src=$3
  bench_name=$name
  shift 3
  local tool
  for tool in cmake g++ pkg-config "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not found" >&2; exit 1; }
  done
  [[ -x /usr/bin/time ]] || { echo "$name: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
  # Always brought up to date: a driver linked against a library older than
  # the headers it includes would measure nonsense, or crash.
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
  fi
  # A build folder this user may not write (another user's, as when a
  # benchmark runs as an ordinary user on root's build) is used as it is.
  if [[ -w $build ]]; then cmake --build "$build" --target "$src" timed -j"$(nproc)" >/dev/null; fi
  # kaicoder_core and the pure libraries it links (lib/shell, lib/util/text)
  core_libs=("$build/libkaicoder_core.a" "$build/libkaicoder_shell.a" "$build/libkaicoder_text.a")
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  work=$(mktemp -d "${TMPDIR:-/tmp}/kai-$name-XXXXXX")
  # shellcheck disable=SC2064
  trap "end_typed_answer; rm -rf '$work'" EXIT
  driver=$build/bench/$src
  timer=$build/bench/timed
}

# time_cmd NAME DIR CMD...: runs CMD in DIR, timed by bench/timed to the
# microsecond (user + system of CMD and every process it waited for, as
# /usr/bin/time counts them, which prints only hundredths: too coarse for a
# command of 0.05 s; and wall time), appends "cpu wall" (seconds) to
# $work/NAME.times; its stdout goes to $work/NAME.out.
# Where the build folder is another user's and has no timer built,
# /usr/bin/time measures, in hundredths.
time_cmd() {
  local name=$1 dir=$2 timing
  shift 2
  if [[ -x ${timer:-} ]]; then timing=("$timer" "$work/usage"); else timing=(/usr/bin/time -f '%U %S %e' -o "$work/usage"); fi
  (cd "$dir" && "${timing[@]}" "$@" >"$work/$name.out" 2>"$work/$name.err") ||
    { echo "$bench_name: $name failed:" >&2; cat "$work/$name.err" "$work/$name.out" | head -c 2000 >&2; exit 1; }
  tail -n 1 "$work/usage" | awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' >>"$work/$name.times"
}
# time_median NAME: the line of $work/NAME.times with the median CPU time.
time_median() { sort -n -k1,1 "$work/$1.times" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'; }

# git with a fixed identity and neither the system's nor the user's config.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git_() { git -c user.name=bench -c user.email=bench@example.com -c init.defaultBranch=main "$@"; }

# bench_private_home: sets home_ns, a command prefix that runs its command
# with $work/home mounted over the real home (kaicoder's key and trusted
# roots are then the benchmark's own), and in_home CMD... that uses it. Not
# root: a user namespace that maps the user to itself keeps the capability
# to mount there; capabilities there count for nothing outside (the file
# system watch, which needs CAP_SYS_ADMIN, is missing as for any owner who
# is not root).
bench_private_home() {
  local real_home ns
  real_home=$(getent passwd "$(id -u)" | cut -d: -f6)
  mkdir -p "$work/home"
  ns=(unshare -m --propagation private)
  [[ $(id -u) -eq 0 ]] || ns=(unshare -c -m --keep-caps --propagation private)
  home_ns=("${ns[@]}" sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$work/home" "$real_home")
}
in_home() { "${home_ns[@]}" "$@"; }

# A person's answer at a pseudo-terminal, for `script -qec CMD /dev/null`:
#
#   typed_answer y                    # then: time_cmd ... script -qec "$kai approve $id" /dev/null <"$typed"
#   time_cmd ...; end_typed_answer
#
# The answer is typed and the keyboard stays open until the command has
# ended, as at a real terminal. Never feed `script` a stdin that ends at
# once (`< <(printf 'y\n')`): util-linux's script (2.38 here), at the end
# of its stdin, stops copying the command's output while the answer is still
# unread: it sleeps 250 ms up to 8 times for the terminal's input to drain
# before it passes the end-of-file on (strace shows the 8 sleeps). A command
# that prints more than the pseudo-terminal holds before it reads the answer
# (approve's diff, rollback's list of files) blocks on its own output for
# those 2 s: a stall of the harness that no person's terminal has.
typed_answer() {
  typed=$work/typed
  rm -f "$typed" && mkfifo "$typed"
  { printf '%s\n' "$1"; exec sleep 120; } >"$typed" &
  typed_pid=$!
}
# Also run at exit (bench_setup's trap), so a failed command leaves no
# process holding the answer open.
end_typed_answer() {
  [[ -n ${typed_pid:-} ]] || return 0
  kill "$typed_pid" 2>/dev/null || true
  wait "$typed_pid" 2>/dev/null || true
  typed_pid=
}
