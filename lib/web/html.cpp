#include "lib/web/html.hpp"

#include <fmt/format.h>

#include "lib/diff/diff.hpp"

namespace kai::web {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string shown(std::string_view text, Allow allow) { return escape(make_visible(text, allow)); }

std::string document(const PageMeta& meta, std::string_view main_html) {
  std::string live;
  if (meta.live == Live::swap) live = " data-live=\"swap\"";
  if (meta.live == Live::watch)
    live = fmt::format(" data-live=\"watch\" data-id=\"{}\" data-digest=\"{}\" data-state=\"{}\"", meta.watch_id,
                       escape(meta.watch_digest), escape(meta.watch_state));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n"
      "<title>{} \u2014 kaicoder</title>\n<link rel=\"stylesheet\" href=\"/app.css\">\n"
      "<script src=\"/app.js\" defer></script>\n</head>\n<body{}>\n"
      "<a class=\"skip\" href=\"#main\">Skip to content</a>\n"
      "<header><nav aria-label=\"kaicoder\"><a href=\"/\">Proposals</a> <a href=\"/log\">Changelog</a></nav></header>\n"
      "<div id=\"stale\" class=\"notice\" role=\"status\" aria-live=\"polite\" hidden></div>\n"
      "<main id=\"main\" tabindex=\"-1\">\n{}</main>\n</body>\n</html>\n",
      escape(meta.title), live, main_html);
}

Response html_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response error_page(int status, std::string_view title, std::string_view message, std::string_view hint) {
  std::string main =
      fmt::format("<h1>{}</h1>\n<p class=\"error\" role=\"alert\">{}</p>\n", escape(title), escape(message));
  if (!hint.empty()) main += fmt::format("<p>{}</p>\n", escape(hint));
  return html_response(status, document({std::string(title)}, main));
}

Response redirect(std::string_view location) {
  Response r;
  r.status = 303;
  r.headers.emplace_back("Location", std::string(location));
  r.content_type = "text/plain; charset=utf-8";
  r.body = fmt::format("see {}\n", location);
  return r;
}

namespace {

const char* line_class(std::string_view line) {
  if (line.starts_with("diff --git") || line.starts_with("--- ") || line.starts_with("+++ ") ||
      line.starts_with("index ") || line.starts_with("new file mode") || line.starts_with("deleted file mode") ||
      line.starts_with("old mode") || line.starts_with("new mode"))
    return "meta";
  if (line.starts_with("@@")) return "hunk";
  if (line.starts_with('+')) return "add";
  if (line.starts_with('-')) return "del";
  return "ctx";
}

}  // namespace

std::string diff_html(std::string_view diff_text, std::string_view label) {
  // Made visible first, as on the terminal: one line of the diff stays one
  // line of the page whatever separators the file holds.
  const std::string text = make_visible(diff_text);
  // The words changed within an edited line, as on the terminal.
  const std::vector<std::vector<Span>> spans = intraline_spans(text);
  std::string out = fmt::format("<div class=\"diff\" role=\"region\" aria-label=\"{}\" tabindex=\"0\"><pre>",
                                shown(label, Allow::nothing));
  std::string_view rest(text);
  for (size_t n = 0; !rest.empty(); ++n) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    // Block spans break the lines; a newline as well would double them.
    out += fmt::format("<span class=\"l {}\">", line_class(line));
    if (n < spans.size() && !spans[n].empty() && !line.empty()) {
      out += escape(line.substr(0, 1));
      std::string_view body = line.substr(1);
      size_t at = 0;
      for (const Span& sp : spans[n]) {
        if (sp.begin < at || sp.end > body.size() || sp.begin >= sp.end) continue;
        out += escape(body.substr(at, sp.begin - at));
        out += "<mark>" + escape(body.substr(sp.begin, sp.end - sp.begin)) + "</mark>";
        at = sp.end;
      }
      out += escape(body.substr(at));
    } else {
      out += escape(line);
    }
    out += "</span>";
  }
  out += "</pre></div>\n";
  return out;
}

}  // namespace kai::web
