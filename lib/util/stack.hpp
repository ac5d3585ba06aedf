#pragma once
// A deep recursion on a stack of its own: the walks whose depth the tree
// sets (a chain of thousands of nested folders is one `mkdir -p` away) run
// on a thread with a large stack, so no input can overflow the caller's.

#include <cstddef>
#include <functional>

namespace kai {

// The stack a tree walk gets: 512 MiB of address space, taken only as it
// is used.
inline constexpr std::size_t k_walk_stack = std::size_t{512} << 20;

// Run `f` on a thread with a stack of `bytes` and wait for it. When no such
// thread can be made, `f` runs on the caller's stack.
void run_with_stack(std::size_t bytes, const std::function<void()>& f);

}  // namespace kai
