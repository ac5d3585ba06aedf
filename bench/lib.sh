# Shared by the bench scripts (bash): source it, then call these.

# need_tools BENCH TOOL...: exit naming the first TOOL that is not on PATH.
need_tools() {
  local bench=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$bench: $tool not found" >&2; exit 1; }
  done
}

# core_lib ROOT BUILD: make sure BUILD holds an up-to-date libkaicoder_core.a
# (a BUILD without one is configured as a Release build; only the library is
# built, since a driver linked against a library older than the headers it
# includes would measure nonsense), then print BUILD's build type.
core_lib() {
  local root=$1 build=$2
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
  fi
  cmake --build "$build" --target kaicoder_core -j"$(nproc)" >/dev/null
  sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true
}
