#pragma once
// Text shown to the person who decides must be what it is: control
// characters, bidirectional overrides, zero-width characters and line
// separators could hide, reorder or forge what they see, so there is one
// scanner that finds them (and invalid UTF-8) and one way to spell them out.
// The run checker refuses commands that hold one, paths refuse them, and
// everything printed to a terminal shows them escaped.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kai {

// Which ordinary layout characters the caller lets through.
enum class Allow {
  nothing,      // one line: tab, newline and CR are escaped too
  tab,          // one line, tab kept
  tab_newline,  // text of many lines: tab and newline kept, and CR before LF
  script,       // a shell script: tab and newline kept, CR never (the shell
                // makes it part of a word, so CRLF does not read as it runs)
};

// One hidden character: where it starts, how many bytes it takes, what it is.
struct HiddenChar {
  size_t at = 0;
  size_t len = 1;
  uint32_t cp = 0;       // code point; the byte itself for invalid UTF-8
  bool invalid = false;  // a byte that is not part of valid UTF-8
  // "escape", "carriage return", "bidirectional control", "invisible
  // character", "line separator", "control character", "invalid UTF-8".
  std::string_view kind;
};

// The first hidden character at or after byte `from`: C0 controls (except
// what `allow` keeps), DEL, C1 controls U+0080–U+009F (NEL included), bidi
// controls (U+200E/F, U+202A–U+202E, U+2066–U+2069, U+061C), zero-width and
// other invisible characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E,
// U+00AD, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0), the line and
// paragraph separators U+2028/U+2029, and bytes that are not valid UTF-8.
std::optional<HiddenChar> find_hidden(std::string_view text, Allow allow = Allow::tab_newline, size_t from = 0);

// "U+202E" (at least four hex digits).
std::string code_point_name(uint32_t cp);

// `text` with every hidden character replaced by a stable printable form:
// `\e` for ESC, `\r`, `\n`, `\t` where not allowed, `\x7f` and `\xNN` for
// other C0 controls and for invalid bytes, `<U+XXXX>` for the rest (C1
// controls included). Printable ASCII and valid UTF-8 letters of any script
// pass unchanged, so the result of make_visible is its own make_visible.
std::string make_visible(std::string_view text, Allow allow = Allow::tab_newline);

// Byte offset of the first byte that is not part of valid UTF-8, if any.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// For a field an agent writes into a record (why, summary, agent name):
// "<what> is not valid UTF-8 (byte N)" when it is not, else nullopt.
std::optional<std::string> not_utf8(std::string_view what, std::string_view text);

// True when make_visible would change `text`.
bool has_hidden_characters(std::string_view text, Allow allow = Allow::tab_newline);

// Characters (UTF-8 code points; a stray byte counts as one) in `text`.
size_t utf8_length(std::string_view text);

// `text` cut to at most `max` characters, the last of them "…" when cut.
std::string cut_to_length(std::string_view text, size_t max);

// Base64 (standard or URL-safe alphabet) decoded; whitespace is skipped and
// the text ends at the first '='. nullopt when a character is outside both
// alphabets.
std::optional<std::string> base64_decode(std::string_view s);
// Standard base64 with '=' padding, which base64_decode reads back.
std::string base64_encode(std::string_view bytes);

}  // namespace kai
