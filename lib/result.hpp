#pragma once
// The error model of lib/: every public function returns Result<T> or
// Status; no exception crosses the library's API. Errc mirrors the exit codes
// of SPEC §3, and only cmd/main.cpp turns an Errc into a number.

#include <string>
#include <utility>
#include <variant>

namespace kai {

enum class Errc {
  io = 1,         // internal or I/O error
  usage = 2,      // the request itself is malformed
  denied = 3,     // a guardrail or the policy refused
  rejected = 4,   // a human said no
  timeout = 5,    // expired before a decision
  conflict = 6,   // target missing/not unique, stale base, tampered, changed since
  not_found = 7,  // unknown proposal id or rollback id
  pending = 8,    // still waiting for a decision when a bounded wait ran out
};

struct Error {
  Errc code = Errc::io;
  std::string message;  // failure named first, lowercase, no final period
  std::string hint;     // optional "what to do next"
};

inline Error make_error(Errc code, std::string message, std::string hint = {}) {
  return Error{code, std::move(message), std::move(hint)};
}

template <typename T>
class [[nodiscard]] Result {
public:
  Result(T v) : m_v(std::move(v)) {}
  Result(Error e) : m_v(std::move(e)) {}
  explicit operator bool() const { return m_v.index() == 0; }
  bool ok() const { return m_v.index() == 0; }
  T& operator*() { return std::get<0>(m_v); }
  const T& operator*() const { return std::get<0>(m_v); }
  T* operator->() { return &std::get<0>(m_v); }
  const T* operator->() const { return &std::get<0>(m_v); }
  const Error& error() const { return std::get<1>(m_v); }

private:
  std::variant<T, Error> m_v;
};

using Status = Result<std::monostate>;
inline Status ok_status() { return Status{std::monostate{}}; }

}  // namespace kai

// Propagate an error from a Result-returning expression.
#define KAI_TRY(expr)                           \
  do {                                          \
    auto kai_try_r_ = (expr);                   \
    if (!kai_try_r_) return kai_try_r_.error(); \
  } while (0)
