#pragma once
// Text shown to the person who decides must be what it is: control
// characters, bidirectional overrides and zero-width characters could hide or
// reorder what they see, so they are spelled out before display.

#include <string>
#include <string_view>

namespace kai {

// `text` with C0 controls (except tab and newline), DEL, ESC sequences,
// Unicode bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C) and
// zero-width characters (U+200B–U+200D, U+2060, U+FEFF) replaced by visible
// forms: ^[ for ESC, ^M for CR, <U+202E> for the others. A CR before a
// newline is kept: CRLF files must stay readable.
std::string make_visible(std::string_view text);

// True when make_visible would change `text`.
bool has_hidden_characters(std::string_view text);

// Characters (UTF-8 code points; a stray byte counts as one) in `text`.
size_t utf8_length(std::string_view text);

// `text` cut to at most `max` characters, the last of them "…" when cut.
std::string cut_to_length(std::string_view text, size_t max);

}  // namespace kai
