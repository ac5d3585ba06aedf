#include "lib/gate/always_allow.hpp"

#include <fmt/format.h>

#include "lib/paths/glob.hpp"
#include "lib/config/policy.hpp"
#include "lib/run/tree_scripts.hpp"
#include "lib/gate/runs.hpp"
#include "lib/shell/shell.hpp"
#include "lib/config/trust.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/time.hpp"

namespace kai::gate {

namespace {

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\u{:04X}", u);
    else
      out += c;
  }
  return out + "\"";
}

// A glob that matches `rel` and nothing else: anchored at root, its
// wildcard characters escaped.
std::string exact_glob(std::string_view rel) {
  std::string out = "/";
  for (char c : rel) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The config with `rule` added after every rule it has, as the file would
// read once the rule is appended.
Config with_rule(const Config& cfg, const AllowRule& rule) {
  Config c = cfg;
  PolicyRule r;
  r.action = rule.action;
  r.path = rule.path;
  r.command = rule.command;
  r.exact = !rule.command.empty();
  r.files = rule.files;
  r.decision = "allow";
  r.origin = "kaicoder.toml (always allow)";
  c.rules.push_back(std::move(r));
  return c;
}

std::optional<AllowRule> run_rule(const Workspace& ws, const Proposal& p) {
  if (p.network) return std::nullopt;  // network is granted run by run
  const ShellContext ctx = shell_context(ws, p.cwd);
  const Classification c = p.shell.empty() ? classify_argv(p.argv, ctx) : classify_shell(p.shell, ctx);
  // Only what the policy may ever allow: an ordinary, fully understood command.
  if (c.verdict != RunVerdict::ask || !c.understood) return std::nullopt;
  AllowRule rule{"run", "", command_text(p), tree_scripts(ws, c.leaves, p.cwd)};
  for (const auto& [rel, blob] : rule.files)
    if (blob.empty()) return std::nullopt;  // a file it runs is missing: nothing to bind to
  if (decide(with_rule(ws.cfg, rule), "run", rule.command, &rule.files).decision != Decision::allow)
    return std::nullopt;
  return rule;
}

std::optional<AllowRule> file_rule(const Workspace& ws, const Proposal& p) {
  if (is_protected(ws.cfg, p.path) || path_tier(ws.cfg, p.path) != Tier::normal) return std::nullopt;
  AllowRule rule{std::string(to_string(p.kind)), exact_glob(p.path), "", {}};
  if (!validate_glob(rule.path) || !glob_match(rule.path, p.path)) return std::nullopt;
  if (decide(with_rule(ws.cfg, rule), rule.action, p.path).decision != Decision::allow) return std::nullopt;
  return rule;
}

}  // namespace

std::string AllowRule::toml(const std::string& note) const {
  std::string out = fmt::format("\n# {}\n[[policy.rule]]\naction = {}\n", note, toml_string(action));
  if (action == "run") {
    out += fmt::format("command = {}\nexact = true\n", toml_string(command));
    if (!files.empty()) {
      out += "files = {";
      for (size_t i = 0; i < files.size(); ++i)
        out += fmt::format("{} {} = {}", i == 0 ? "" : ",", toml_string(files[i].first), toml_string(files[i].second));
      out += " }\n";
    }
  } else {
    out += fmt::format("path = {}\n", toml_string(path));
  }
  return out + "decision = \"allow\"\n";
}

std::string AllowRule::words() const {
  if (action != "run") return fmt::format("{} {}", action, path.substr(1));
  std::string out = fmt::format("run \"{}\" exactly", command);
  for (size_t i = 0; i < files.size(); ++i)
    out += fmt::format("{}{} as it is now ({})", i == 0 ? ", while it runs " : " and ", files[i].first,
                       files[i].second.substr(0, 12));
  return out;
}

std::optional<AllowRule> always_rule(const Workspace& ws, const Proposal& p, Tier need, ApplyNow now) {
  if (need != Tier::normal || p.tier != Tier::normal || now != ApplyNow::yes || ws.cfg.mode != "normal")
    return std::nullopt;
  if (p.state != State::pending) return std::nullopt;
  // A team proposal is decided by a signature, clone by clone: a rule in
  // one clone's kaicoder.toml would let the next one past the team.
  if (!p.team.role.empty()) return std::nullopt;
  switch (p.kind) {
    case Kind::run: return run_rule(ws, p);
    case Kind::edit:
    case Kind::write:
    case Kind::del: return file_rule(ws, p);
    case Kind::changeset: return std::nullopt;  // many files: one rule each would be no "this"
  }
  return std::nullopt;
}

Status retrust_root(const Workspace& ws) {
  auto bytes = read_root_config(ws.root);
  if (!bytes) return bytes.error();
  TrustList list(ws.owner_dir);
  auto s = list.record(ws.root, bytes->value_or(""), iso_utc(ws.clock->now()));
  if (!s)
    return make_error(s.error().code, fmt::format("kaicoder.toml was written but not trusted: {}", s.error().message),
                      "trust it yourself with: kaicoder trust");
  return ok_status();
}

Result<std::string> add_allow_rule(Workspace& ws, const AllowRule& rule, const Decider& who, const Proposal& p) {
  // Who may decide the proposal may add its rule; nobody else.
  KAI_TRY(may_decide(ws, who));
  KAI_TRY(not_self_approval(ws, p, who.user));
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto now_p = ws.store.load(p.id, Store::Payloads::none);
  if (!now_p) return now_p.error();
  if (now_p->state != State::pending)
    return make_error(Errc::conflict, fmt::format("proposal {} is {}, not pending; no rule was written", p.id,
                                                  to_string(now_p->state)));
  const int proposal = p.id;
  KAI_TRY(ws.changelog.check_readable());
  auto tg = txn::open_target(ws, std::string(txn::k_root_config), CreateDirs::no, txn::Guard::own_config);
  if (!tg) return tg.error();
  // The rule goes into the file the owner trusted, and nothing else.
  TrustList list(ws.owner_dir);
  auto trusted = list.find(ws.root);
  if (!trusted) return trusted.error();
  if (!tg->current.exists || !*trusted || (*trusted)->digest != config_digest(tg->current.bytes))
    return make_error(Errc::conflict, "kaicoder.toml changed since you trusted it; no rule was written",
                      "look at it and trust it again with: kaicoder trust");
  const TimePoint now = ws.clock->now();
  std::string text = tg->current.bytes;
  if (!text.empty() && text.back() != '\n') text += '\n';
  // The note is one comment line, whatever the command holds.
  std::string note = fmt::format("always allow: {}, answered at proposal {} by {} at {}", rule.words(), proposal,
                                 who.recorded(), iso_utc(now));
  for (char& c : note)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  text += rule.toml(note);
  // What is written must load, and say what was shown.
  auto cfg = parse_config_text(text, "kaicoder.toml");
  if (!cfg) return make_error(Errc::usage, fmt::format("the rule would not load: {}", cfg.error().message));
  if (cfg->rules.empty() || cfg->rules.back().command != rule.command || cfg->rules.back().path != rule.path ||
      cfg->rules.back().files != rule.files)
    return make_error(Errc::usage, "the rule would not read back as it was shown; no rule was written");
  txn::Txn t;
  t.rec.kind = "config";
  t.rec.time = iso_utc(now);
  std::vector<txn::Target> targets;
  targets.push_back(std::move(*tg));
  auto fresh = txn::fresh_txn_id(ws, now, targets);
  if (!fresh) return fresh.error();
  t.rec.id = std::move(*fresh);
  t.rec.files.push_back(txn::change_of(targets[0], text, targets[0].current.mode & 07777u, t.rec.id));
  t.entry = txn::make_entry(ws, t, "edit", std::string(action_name(Kind::edit)));
  t.entry.summary = ws.redact(fmt::format("always allow {}: a rule added to kaicoder.toml", rule.words()));
  t.entry.why = fmt::format("the owner answered 'a' (always allow) at proposal {}", proposal);
  t.entry.approver = who.recorded();
  KAI_TRY(txn::execute(ws, t, targets, {text}, txn::Durability::each));
  KAI_TRY(retrust_root(ws));
  return t.rec.id;
}

}  // namespace kai::gate
