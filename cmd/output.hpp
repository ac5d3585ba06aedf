#pragma once
// Everything kaicoder prints goes through here, so that no secret leaves the
// process and nothing an agent wrote can drive the terminal: text is passed
// through the redactor on its way out, and every string given to out() or
// err() has its hidden characters made visible (lib/util/text.hpp) unless
// it is marked as kaicoder's own.
//
//   out("  path:     {}\n", p.path);          // one line: \n, \e, <U+202E> escaped
//   out("{}", Lines{format_entry(e)});        // many lines: newlines kept
//   out("{}{}{}", Trusted{bold}, id, Trusted{reset});  // kaicoder's own colours

#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/paths/redact.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

// Text kaicoder composed itself (colour codes, a diff already made
// visible and then coloured): printed as is.
struct Trusted {
  std::string_view text;
};
// Text of many lines that is shown as lines (a changelog entry, output
// under a heading): tab and newline kept, every other hidden character
// made visible.
struct Lines {
  std::string_view text;
};

namespace detail {
// What out()/err() format in place of each argument: strings made visible
// on one line, Lines on many, Trusted untouched, anything else as it is.
template <typename T>
auto shown(T&& v) {
  using D = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<D, Trusted>)
    return v.text;
  else if constexpr (std::is_same_v<D, Lines>)
    return make_visible(v.text, Allow::tab_newline);
  else if constexpr (std::is_convertible_v<const D&, std::string_view>)
    return make_visible(std::string_view(v), Allow::nothing);
  else
    return std::remove_cvref_t<T>(std::forward<T>(v));
}
template <typename T>
using shown_t = decltype(shown(std::declval<T>()));
template <typename... T>
std::string format_shown(fmt::format_string<shown_t<T>...> f, T&&... args) {
  return fmt::vformat(f, fmt::make_format_args(shown(std::forward<T>(args))...));
}
}  // namespace detail

// The redactor in force; set once the environment (and later the root's
// secret files) are known. May be null before that.
void set_redactor(const Redactor* r);
std::string redacted(std::string_view text);
void write_stdout(std::string_view text);
void write_stderr(std::string_view text);
// Every string inside `j`, redacted (JSON escaping would hide a value from a
// text search, so redaction happens before dumping).
nlohmann::json redacted_json(nlohmann::json j);

// With --json, stdout carries only the JSON object; what a person should
// still see (the diff before a prompt) goes to stderr instead.
void send_text_to_stderr(bool yes);
void write_text(std::string_view text);

// Bytes of a file or of a command's output: on a terminal with every hidden
// character made visible (newlines and tabs kept); into a pipe or a file
// unchanged, where a program reads them. fd 1 follows send_text_to_stderr.
void write_content(std::string_view bytes, int fd = 1);

// While one is alive, what is printed is held and leaves in one write when
// the outermost one ends, or as soon as something goes to the other stream,
// so the order stays. A terminal's stdout is line-buffered: a changeset's
// list of 300 files was 300 writes, each waking the terminal's reader. Ends
// before anything that waits for a person (a prompt flushes what it
// follows).
class Batch {
public:
  Batch();
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
};

template <typename... T>
void out(fmt::format_string<detail::shown_t<T>...> f, T&&... args) {
  write_text(detail::format_shown<T...>(f, std::forward<T>(args)...));
}

template <typename... T>
void err(fmt::format_string<detail::shown_t<T>...> f, T&&... args) {
  write_stderr(detail::format_shown<T...>(f, std::forward<T>(args)...));
}

}  // namespace kai::cmd
