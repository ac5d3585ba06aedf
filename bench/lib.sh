# Shared by the bench scripts (bash): source it, then call these.

# need_tools BENCH TOOL...: exit naming the first TOOL that is not on PATH.
need_tools() {
  local bench=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$bench: $tool not found" >&2; exit 1; }
  done
}

# core_lib ROOT BUILD: make sure BUILD holds libkaicoder_core.a (if not,
# configure BUILD as a Release build and build only the library), then
# print BUILD's build type.
core_lib() {
  local root=$1 build=$2
  if [[ ! -f $build/libkaicoder_core.a ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
    cmake --build "$build" --target kaicoder_core -j"$(nproc)" >/dev/null
  fi
  sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true
}
