#pragma once
// How a proposal is graded: its risk, the tier its approval takes, and what
// the policy decided. Enums everywhere; text only where they are printed or
// stored (to_string, parse_*).

#include <optional>
#include <string_view>

namespace kai {

enum class Risk { low, medium, high };
enum class Tier { normal, confirm };
enum class Decision { allow, ask, deny };

std::string_view to_string(Risk r);      // low medium high
std::string_view to_string(Tier t);      // normal confirm
std::string_view to_string(Decision d);  // allow ask deny
std::optional<Risk> parse_risk(std::string_view s);
std::optional<Tier> parse_tier(std::string_view s);
std::optional<Decision> parse_decision(std::string_view s);

}  // namespace kai
