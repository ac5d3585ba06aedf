#include "lib/store/proposal.hpp"

#include <array>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/store/journal.hpp"
#include "lib/util/git.hpp"
#include "lib/shell/shell.hpp"

namespace kai {
using json = nlohmann::json;

namespace {
constexpr std::array<std::string_view, 5> k_kinds = {"edit", "write", "delete", "run", "changeset"};
constexpr std::array<std::string_view, 5> k_action_names = {"edit_file", "write_file", "delete_file", "run_shell",
                                                            "apply_changeset"};
constexpr std::array<std::string_view, 8> k_states = {"pending", "approved", "applied",     "rejected",
                                                      "timeout", "failed",   "rolled-back", "held"};
constexpr std::array<std::string_view, 4> k_channels = {"terminal", "web", "spool", "team"};
}  // namespace

std::string_view to_string(Kind k) { return k_kinds[static_cast<size_t>(k)]; }
std::string_view to_string(State s) { return k_states[static_cast<size_t>(s)]; }
std::string_view action_name(Kind k) { return k_action_names[static_cast<size_t>(k)]; }

std::optional<int> parse_proposal_id(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  if (text.size() > 1 && text.front() == '0') return std::nullopt;
  int id = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id;
}

Result<int> read_proposal_id(std::string_view text) {
  if (auto id = parse_proposal_id(text)) return *id;
  return make_error(Errc::usage,
                    fmt::format("'{}' is not a proposal id: ids are decimal numbers like 8, written in digits only "
                                "(no sign, spaces, leading zeros or exponent)",
                                text.substr(0, 64)),
                    "kaicoder list shows the ids");
}

std::optional<Kind> parse_kind(std::string_view s) {
  for (size_t i = 0; i < k_kinds.size(); ++i)
    if (k_kinds[i] == s) return static_cast<Kind>(i);
  return std::nullopt;
}

std::optional<State> parse_state(std::string_view s) {
  for (size_t i = 0; i < k_states.size(); ++i)
    if (k_states[i] == s) return static_cast<State>(i);
  return std::nullopt;
}

std::string_view to_string(Channel c) { return k_channels[static_cast<size_t>(c)]; }

std::optional<Channel> parse_channel(std::string_view s) {
  for (size_t i = 0; i < k_channels.size(); ++i)
    if (k_channels[i] == s) return static_cast<Channel>(i);
  return std::nullopt;
}

std::string change_name(const Change& c) {
  return c.op == "rename" ? fmt::format("{} \u2192 {}", c.path, c.to) : c.path;
}

std::string change_verdicts(const Change& c) {
  std::string out = fmt::format("risk {} \u00b7 {}", to_string(c.risk), to_string(c.decision));
  if (c.tier == Tier::confirm) out += " \u00b7 confirm";
  if (c.validation != "none") out += fmt::format(" \u00b7 validate {}", c.validation);
  if (c.base.exists && c.after_exists && (c.base.mode & 0111u) != (c.after_mode & 0111u))
    out += fmt::format(" \u00b7 mode {:o} \u2192 {:o}", c.base.mode, c.after_mode);
  return out;
}

std::string loaded_digest(const Proposal& p) {
  if (p.sealed == SealCheck::ok && p.payloads_loaded && !p.payload_changed && !p.sealed_payload_digest.empty())
    return p.sealed_payload_digest;
  return digest(p);
}

namespace {

// What digest() hashes, in one length-prefixed form, handed to `out` piece
// by piece. With `raw`, a change's result is given as its bytes (the memo's
// form below) instead of its blob id (the digest's own).
template <class Out>
void digest_input(const Proposal& p, bool raw, Out&& out) {
  // Length prefixes keep "ab"+"c" and "a"+"bc" apart.
  auto put = [&out](std::string_view field, std::string_view head, std::string_view body = {}) {
    out(fmt::format("{}:{}:", field, head.size() + body.size()));
    out(head);
    out(body);
    out("\n");
  };
  put("kind", to_string(p.kind));
  put("path", p.path);
  put("target", p.target);
  put("replacement", p.replacement);
  put("content", p.content);
  for (const auto& a : p.argv) put("arg", a);
  put("shell", p.shell);
  put("cwd", p.cwd);
  put("timeout", std::to_string(p.timeout));
  // Only when asked for, so that the digests of records without it stay as they were.
  if (p.network) put("network", "on");
  if (p.replace_all) put("replace_all", std::to_string(p.occurrences));
  for (const Change& c : p.changes) {
    put("op", c.op);
    put("file", c.path);
    put("to", c.to);
    put("base", fmt::format("{} {} {:o}", c.base.exists, c.base.blob, c.base.mode));
    if (raw)
      put("after", fmt::format("{} {:o} ", c.after_exists, c.after_mode),
          c.after_exists ? std::string_view(c.after) : std::string_view());
    else
      put("after", fmt::format("{} {} {:o}", c.after_exists, c.after_exists ? blob_id(c.after) : "", c.after_mode));
  }
}

// The last digest computed, with its input in the raw form (each change's
// resulting bytes as they are, not their blob id): one command digests the
// same proposal several times (loaded, sealed, indexed, loaded again after
// the question), and comparing its bytes where they lie costs a small part
// of hashing them. Equal bytes, equal digest: nothing is assumed of the
// callers. One entry, shared by the threads of a server; an input over
// k_digest_memo_bytes is not kept.
struct DigestMemo {
  std::mutex mutex;
  std::string input;
  std::string digest;
};
constexpr size_t k_digest_memo_bytes = size_t{64} << 20;

DigestMemo& digest_memo() {
  static DigestMemo m;
  return m;
}

// Whether p's raw input is `input`, compared piece by piece, unbuilt.
bool same_input(const Proposal& p, std::string_view input) {
  size_t at = 0;
  bool same = true;
  digest_input(p, true, [&](std::string_view v) {
    if (!same) return;
    same = input.size() - at >= v.size() && input.compare(at, v.size(), v) == 0;
    at += v.size();
  });
  return same && at == input.size();
}

}  // namespace

std::string digest(const Proposal& p) {
  DigestMemo& memo = digest_memo();
  {
    std::lock_guard<std::mutex> hold(memo.mutex);
    if (!memo.digest.empty() && same_input(p, memo.input)) return memo.digest;
  }
  std::string in;
  digest_input(p, false, [&in](std::string_view v) { in.append(v); });
  std::string d = blob_id(in);
  size_t size = 0;
  digest_input(p, true, [&size](std::string_view v) { size += v.size(); });
  if (size <= k_digest_memo_bytes) {
    std::string raw;
    raw.reserve(size);
    digest_input(p, true, [&raw](std::string_view v) { raw.append(v); });
    std::lock_guard<std::mutex> hold(memo.mutex);
    memo.input = std::move(raw);
    memo.digest = d;
  }
  return d;
}

json to_json(const Validation& v) {
  json checks = json::array();
  for (const auto& c : v.checks)
    checks.push_back({{"pattern", c.pattern},
                      {"command", c.command},
                      {"status", c.status},
                      {"exit_code", c.exit_code},
                      {"timed_out", c.timed_out},
                      {"output", c.output}});
  return {{"status", v.status}, {"checks", checks}};
}

json to_json(const Review& r) {
  return {{"status", r.status}, {"exit_code", r.exit_code}, {"text", r.text}, {"advisory", true}};
}

namespace {

// Records written before validation and review existed load as "none".
Validation validation_from(const json& j) {
  Validation v;
  if (!j.is_object()) return v;
  v.status = j.value("status", "none");
  for (const auto& c : j.value("checks", json::array()))
    v.checks.push_back({c.value("pattern", ""), c.value("command", ""), c.value("status", ""), c.value("exit_code", 0),
                        c.value("timed_out", false), c.value("output", "")});
  return v;
}

Review review_from(const json& j) {
  Review r;
  if (!j.is_object()) return r;
  r.status = j.value("status", "none");
  r.exit_code = j.value("exit_code", 0);
  r.text = j.value("text", "");
  return r;
}

}  // namespace

namespace {

json changes_json(const std::vector<Change>& changes) {
  // Built in place, member by member: a changeset's record holds thousands
  // of these, and an initializer list copies each value it is given.
  json out = json::array();
  auto& all = out.get_ref<json::array_t&>();
  all.reserve(changes.size());
  for (const Change& c : changes) {
    json e = json::object();
    auto& o = e.get_ref<json::object_t&>();
    o.emplace("op", c.op);
    o.emplace("path", c.path);
    o.emplace("to", c.to);
    o.emplace("base", side_json(FileSide{c.base.exists, c.base.blob, c.base.mode}));
    o.emplace("after_exists", c.after_exists);
    o.emplace("after_mode", c.after_mode);
    o.emplace("size", c.after.size());
    o.emplace("added", c.added);
    o.emplace("removed", c.removed);
    o.emplace("binary", c.binary);
    o.emplace("risk", to_string(c.risk));
    o.emplace("risk_reason", c.risk_reason);
    o.emplace("tier", to_string(c.tier));
    o.emplace("tier_reason", c.tier_reason);
    o.emplace("decision", to_string(c.decision));
    o.emplace("decision_rule", c.decision_rule);
    o.emplace("validation", c.validation);
    all.push_back(std::move(e));
  }
  return out;
}

std::vector<Change> changes_from(const json& j) {
  std::vector<Change> out;
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    Change c;
    c.op = e.value("op", "");
    c.path = e.value("path", "");
    c.to = e.value("to", "");
    const json b = e.value("base", json::object());
    c.base = {b.value("exists", false), b.value("blob", ""), b.value("mode", 0644u)};
    c.after_exists = e.value("after_exists", true);
    c.after_mode = e.value("after_mode", 0644u);
    c.after.resize(e.value("size", size_t{0}));  // the bytes are a payload: Store::load fills them
    c.added = e.value("added", size_t{0});
    c.removed = e.value("removed", size_t{0});
    c.binary = e.value("binary", false);
    c.risk = parse_risk(e.value("risk", "low")).value_or(Risk::high);
    c.risk_reason = e.value("risk_reason", "");
    c.tier = parse_tier(e.value("tier", "normal")).value_or(Tier::confirm);
    c.tier_reason = e.value("tier_reason", "");
    c.decision = parse_decision(e.value("decision", "ask")).value_or(Decision::ask);
    c.decision_rule = e.value("decision_rule", "");
    c.validation = e.value("validation", "none");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

json to_json(const Proposal& p) {
  json j = json{
      {"id", p.id},
      {"kind", to_string(p.kind)},
      {"status", to_string(p.state)},
      {"path", p.path},
      {"why", p.why},
      {"agent", p.agent},
      {"summary", p.summary},
      {"created", p.created},
      {"base", {{"exists", p.base.exists}, {"blob", p.base.blob}, {"mode", p.base.mode}}},
      {"cwd", p.cwd},
      {"timeout", p.timeout},
      {"network", p.network},
      {"decided_by", p.decided_by},
      {"decided_at", p.decided_at},
      {"approved_digest", p.approved_digest},
      {"reason", p.reason},
      {"rollback_id", p.rollback_id},
      {"backup", p.backup},
      {"result", p.result},
      {"outcome_code", p.outcome_code},
      {"risk", to_string(p.risk)},
      {"risk_reason", p.risk_reason},
      {"tier", to_string(p.tier)},
      {"tier_reason", p.tier_reason},
      {"decision", to_string(p.decision)},
      {"decision_rule", p.decision_rule},
      {"validation", to_json(p.validation)},
      {"review", to_json(p.review)},
  };
  if (!p.decided_by.empty()) j["channel"] = to_string(p.channel);
  // Only when used, so that records of other proposals stay as they were.
  if (p.replace_all) {
    j["replace_all"] = true;
    j["occurrences"] = p.occurrences;
  }
  if (p.kind == Kind::changeset) j["changes"] = changes_json(p.changes);
  // Only when set, so a record from before two-user mode keeps its bytes and seal.
  if (p.proposer_uid >= 0) j["proposer_uid"] = p.proposer_uid;
  if (!p.effects_digest.empty()) j["effects_digest"] = p.effects_digest;
  if (!p.held_since.empty()) j["held_since"] = p.held_since;
  // Team mode only, so that every other record keeps its bytes and seal.
  if (!p.team.role.empty())
    j["team"] = {{"role", p.team.role},       {"origin", p.team.origin}, {"remote_id", p.team.remote_id},
                 {"commit", p.team.commit},   {"base", p.team.base},     {"kind", p.team.kind},
                 {"expires", p.team.expires}, {"pushed", p.team.pushed}, {"decision", p.team.decision},
                 {"signer", p.team.signer}};
  return j;
}

Result<Proposal> from_json(const json& j) {
  try {
    Proposal p;
    p.id = j.at("id").get<int>();
    auto kind = parse_kind(j.at("kind").get<std::string>());
    auto state = parse_state(j.at("status").get<std::string>());
    if (!kind || !state) return make_error(Errc::io, "unknown kind or status");
    p.kind = *kind;
    p.state = *state;
    p.path = j.value("path", "");
    p.why = j.value("why", "");
    p.agent = j.value("agent", "");
    p.proposer_uid = j.value("proposer_uid", -1L);
    p.summary = j.value("summary", "");
    p.created = j.value("created", "");
    if (j.contains("base")) {
      const auto& b = j.at("base");
      p.base.exists = b.value("exists", false);
      p.base.blob = b.value("blob", "");
      p.base.mode = b.value("mode", 0644u);
    }
    p.cwd = j.value("cwd", "");
    p.timeout = j.value("timeout", 0L);
    p.network = j.value("network", false);
    p.decided_by = j.value("decided_by", "");
    p.decided_at = j.value("decided_at", "");
    // Records from before the channel was stored were decided at a terminal.
    auto channel = parse_channel(j.value("channel", "terminal"));
    if (!channel) return make_error(Errc::io, "unknown decision channel");
    p.channel = *channel;
    p.approved_digest = j.value("approved_digest", "");
    p.reason = j.value("reason", "");
    p.rollback_id = j.value("rollback_id", "");
    p.backup = j.value("backup", "");
    p.result = j.value("result", "");
    p.outcome_code = j.value("outcome_code", 0);
    p.effects_digest = j.value("effects_digest", "");
    p.held_since = j.value("held_since", "");
    // A value kaicoder never writes is read the cautious way.
    p.risk = parse_risk(j.value("risk", "low")).value_or(Risk::high);
    p.risk_reason = j.value("risk_reason", "");
    p.tier = parse_tier(j.value("tier", "normal")).value_or(Tier::confirm);
    p.tier_reason = j.value("tier_reason", "");
    p.decision = parse_decision(j.value("decision", "ask")).value_or(Decision::ask);
    p.decision_rule = j.value("decision_rule", "");
    if (j.contains("validation")) p.validation = validation_from(j.at("validation"));
    if (j.contains("review")) p.review = review_from(j.at("review"));
    p.replace_all = j.value("replace_all", false);
    p.occurrences = j.value("occurrences", size_t{0});
    if (j.contains("changes")) p.changes = changes_from(j.at("changes"));
    if (j.contains("team")) {
      const json& t = j.at("team");
      p.team.role = t.value("role", "");
      if (p.team.role != "published" && p.team.role != "remote") return make_error(Errc::io, "unknown team role");
      p.team.origin = t.value("origin", "");
      p.team.remote_id = t.value("remote_id", 0);
      p.team.commit = t.value("commit", "");
      p.team.base = t.value("base", "");
      p.team.kind = t.value("kind", "");
      p.team.expires = t.value("expires", "");
      p.team.pushed = t.value("pushed", false);
      p.team.decision = t.value("decision", "");
      p.team.signer = t.value("signer", "");
    }
    return p;
  } catch (const std::exception& e) {
    return make_error(Errc::io, fmt::format("malformed proposal record: {}", e.what()));
  }
}

std::string command_text(const Proposal& p) { return p.shell.empty() ? quote_argv(p.argv) : p.shell; }

nlohmann::json proposal_object(const Proposal& p) {
  nlohmann::json j = to_json(p);
  if (p.kind == Kind::run) {
    j["argv"] = p.argv;
    j["shell"] = p.shell;
    j["command"] = command_text(p);
  }
  return j;
}

}  // namespace kai
