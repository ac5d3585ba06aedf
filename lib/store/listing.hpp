#pragma once
// The listing of an archive bucket (archive/<n>/listing): for each archived
// proposal whose record verified when it was written, the fields a full
// listing shows (`kaicoder list`, the review page's list), one line each,
// and one seal over the whole body (Store writes and checks it). A line is
// short and flat, so a listing of many proposals reads one MAC per bucket
// and splits lines, never a record's JSON.
//
// A line: tab-separated fields, each with '\\', tab, newline and carriage
// return escaped (\\\\, \\t, \\n, \\r):
//   id state kind risk tier created agent path summary
//   team-role team-origin team-remote-id shell argc argv... changes listed
//   (op path to) for each of the first `listed` changes
// `changes` is how many files a changeset changes; only the first few are
// named (enough for a list row), so a Proposal read back holds `changes`
// entries of which only the first `listed` have op, path and to.
//
// Usage: std::string l = listing::line(p);  auto q = listing::parse(l);

#include <optional>
#include <string>
#include <string_view>

#include "lib/store/proposal.hpp"

namespace kai::listing {

// The line for `p` (no newline).
std::string line(const Proposal& p);
// The proposal a line lists, with only the listed fields set; nullopt
// when it is not a line line() writes.
std::optional<Proposal> parse(std::string_view line);
// The same into `p`, a Proposal as default-constructed (a listing of many
// fills them where they are kept); false, `p` partly set, when malformed.
bool parse_into(std::string_view line, Proposal& p);
// A tab, then `s` escaped as a line's field is ('\\', tab, newline and
// carriage return); and a field read back (nullopt: a stray backslash).
// The live index's lines (lib/store/store) escape their text fields the same way.
void put_field(std::string& out, std::string_view s);
std::optional<std::string> unescape_field(std::string_view s);
// The id a line starts with; nullopt when it does not.
std::optional<int> id_of(std::string_view line);

// The file: "kaicoder-listing-1 <seal>\n" then the body (the lines, each
// ending in a newline). The seal covers the body's bytes. `head` names
// another sealed file of the same shape (doctor's audit of a bucket).
inline constexpr std::string_view k_head = "kaicoder-listing-1 ";
std::string file(std::string_view seal, std::string_view body, std::string_view head = k_head);
struct Parts {
  std::string_view seal, body;
};
// nullopt when `text` has no header line of that form.
std::optional<Parts> split(std::string_view text, std::string_view head = k_head);

}  // namespace kai::listing
