#include "lib/util/stack.hpp"

#include <pthread.h>
#include <sys/resource.h>

namespace kai {

namespace {
void* call(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

// The caller's stack is big enough for k_shallow_depth levels of a walk
// (a few KiB each, more under the sanitizers) with room to spare.
bool roomy_stack() {
  rlimit l{};
  return ::getrlimit(RLIMIT_STACK, &l) == 0 && (l.rlim_cur == RLIM_INFINITY || l.rlim_cur >= (rlim_t{1} << 20));
}
}  // namespace

void run_with_stack(std::size_t bytes, const std::function<void()>& f) {
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0) return f();
  pthread_t t;
  const bool made = ::pthread_attr_setstacksize(&attr, bytes) == 0 &&
                    ::pthread_create(&t, &attr, call, const_cast<std::function<void()>*>(&f)) == 0;
  ::pthread_attr_destroy(&attr);
  if (!made) return f();
  ::pthread_join(t, nullptr);
}

void run_shallow_first(std::size_t bytes, const std::function<bool(std::size_t max_depth)>& walk) {
  if (roomy_stack() && walk(k_shallow_depth)) return;
  run_with_stack(bytes, [&] { (void)walk(0); });
}

}  // namespace kai
