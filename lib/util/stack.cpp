#include "lib/util/stack.hpp"

#include <pthread.h>

namespace kai {

namespace {
void* call(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
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

}  // namespace kai
