#pragma once
// HTML for the review page. Everything an agent wrote (paths, diffs,
// commands, why, review text) reaches the page only through shown(): its
// hidden characters spelled out as on the terminal (lib/util/text), then
// HTML-escaped, so no byte of it can become markup, script or a lookalike.

#include <string>
#include <string_view>

#include "lib/util/text.hpp"
#include "lib/web/http.hpp"

namespace kai::web {

// &, <, >, " and ' as entities. For kaicoder's own text and for values
// already made visible.
std::string escape(std::string_view text);

// Untrusted text for the page: make_visible(text, allow), then escape().
std::string shown(std::string_view text, Allow allow = Allow::tab_newline);

// How a page keeps itself current (app.js): `swap` replaces its <main>
// when the store changes; `watch` only says that what it shows is out of
// date and disables its buttons (a diff must not change under the reader).
enum class Live { none, swap, watch };

// A whole document: title, the navigation, `main_html` inside <main>.
// `watch_id`/`watch_digest`/`watch_state` name what a `watch` page shows.
struct PageMeta {
  PageMeta(std::string t, Live l = Live::none, int id = 0, std::string dg = {}, std::string st = {})
      : title(std::move(t)), live(l), watch_id(id), watch_digest(std::move(dg)), watch_state(std::move(st)) {}
  std::string title;
  Live live = Live::none;
  int watch_id = 0;
  std::string watch_digest, watch_state;
};
std::string document(const PageMeta& meta, std::string_view main_html);

Response html_response(int status, std::string body);
// A page that says what went wrong and what to do next.
Response error_page(int status, std::string_view title, std::string_view message, std::string_view hint = {});
// 303 See Other to `location` (a path on this server).
Response redirect(std::string_view location);

// A unified diff as a table of lines, each classed for its colour (header,
// hunk, added, removed, context) and marked with + and − for readers who
// do not see colour. Hidden characters are made visible. `label` names the
// region for screen readers (made visible and escaped too).
std::string diff_html(std::string_view diff_text, std::string_view label = "diff");

}  // namespace kai::web
