#include "lib/store/grade.hpp"

namespace kai {

std::string_view to_string(Risk r) {
  switch (r) {
    case Risk::low: return "low";
    case Risk::medium: return "medium";
    case Risk::high: return "high";
  }
  return "high";
}

std::string_view to_string(Tier t) { return t == Tier::confirm ? "confirm" : "normal"; }

std::string_view to_string(Decision d) {
  switch (d) {
    case Decision::allow: return "allow";
    case Decision::ask: return "ask";
    case Decision::deny: return "deny";
  }
  return "deny";
}

std::optional<Risk> parse_risk(std::string_view s) {
  if (s == "low") return Risk::low;
  if (s == "medium") return Risk::medium;
  if (s == "high") return Risk::high;
  return std::nullopt;
}

std::optional<Tier> parse_tier(std::string_view s) {
  if (s == "normal") return Tier::normal;
  if (s == "confirm") return Tier::confirm;
  return std::nullopt;
}

std::optional<Decision> parse_decision(std::string_view s) {
  if (s == "allow") return Decision::allow;
  if (s == "ask") return Decision::ask;
  if (s == "deny") return Decision::deny;
  return std::nullopt;
}

}  // namespace kai
