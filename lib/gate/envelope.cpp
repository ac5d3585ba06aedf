#include "lib/gate/envelope.hpp"

#include <nlohmann/json.hpp>

#include "lib/gate/apply.hpp"
#include "lib/store/changelog.hpp"
#include "lib/diff/diff.hpp"
#include "lib/paths/redact.hpp"

namespace kai {
using json = nlohmann::json;

std::string_view errc_kind(Errc c) {
  switch (c) {
    case Errc::io: return "error";
    case Errc::usage: return "usage";
    case Errc::denied: return "denied";
    case Errc::rejected: return "rejected";
    case Errc::timeout: return "timeout";
    case Errc::conflict: return "conflict";
    case Errc::not_found: return "not_found";
    case Errc::pending: return "pending";
  }
  return "error";
}

json error_object(const Error& e) {
  return {{"code", errc_code(e.code)}, {"kind", errc_kind(e.code)}, {"message", e.message}, {"hint", e.hint}};
}

json diff_object(const FileDiff& d) {
  return {{"binary", d.binary},     {"truncated", d.truncated}, {"added", d.added},
          {"removed", d.removed},   {"hunks", d.hunks},         {"old_blob", d.old_blob},
          {"new_blob", d.new_blob}, {"old_size", d.old_size},   {"new_size", d.new_size}};
}

json entry_object(const Entry& e) {
  return {{"time", e.time},
          {"kind", e.kind},
          {"rollback_id", or_none(e.rollback_id)},
          {"files", e.files},
          {"action", or_none(e.action)},
          {"summary", e.summary},
          {"why", e.why},
          {"backup", or_none(e.backup)},
          {"approver", or_none(e.approver)},
          {"result", e.result},
          {"rollback", or_none(e.rollback)}};
}

json outcome_object(const Outcome& o) {
  return {{"rollback_id", o.rollback_id},
          {"backup", o.backup},
          {"unchanged", o.unchanged},
          {"entry", entry_object(o.entry)}};
}

namespace {
// Every string value of `j`, where it is: only one that could hold a secret
// is copied (an answer holds a changeset's files, hundreds of strings).
void redact_in_place(json& j, const Redactor& r) {
  if (j.is_string()) {
    auto& text = j.get_ref<std::string&>();
    if (r.could_hide(text)) text = r.apply(text);
    return;
  }
  if (j.is_array() || j.is_object())
    for (auto& v : j) redact_in_place(v, r);
}
}  // namespace

json redacted_json(json j, const Redactor& r) {
  redact_in_place(j, r);
  return j;
}

}  // namespace kai
