#pragma once
// Everything kaicoder prints goes through here, so that no secret leaves the
// process: text is passed through the redactor on its way out.

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/redact.hpp"

namespace kai::cmd {

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

template <typename... T>
void out(fmt::format_string<T...> f, T&&... args) {
  write_text(fmt::format(f, std::forward<T>(args)...));
}

template <typename... T>
void err(fmt::format_string<T...> f, T&&... args) {
  write_stderr(fmt::format(f, std::forward<T>(args)...));
}

}  // namespace kai::cmd
