// kaicoder trust: the owner, at the terminal, trusts a root whose
// kaicoder.toml came from elsewhere (a clone) or changed since they trusted
// it. Shows what changed (or all of it), asks, records it.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "lib/config/config.hpp"
#include "lib/config/trust.hpp"
#include "lib/diff/diff.hpp"
#include "lib/store/mac.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

namespace {

// What the owner reads before they answer: a diff against the bytes they
// trusted last, or the whole file. Every hidden character is made visible.
void show_review(const TrustReview& r) {
  const std::string cfg = make_visible((r.root / "kaicoder.toml").string());
  std::string body;
  if (r.previous) {
    DiffOptions o;
    o.full = true;
    auto d = diff_buffers("kaicoder.toml", *r.previous, r.current, 0644, o);
    out("{} changed since you trusted it:\n\n", cfg);
    body = d ? d->text : r.current;
  } else {
    if (r.state == Trust::changed)
      out("{} changed since you trusted it; the copy you trusted is gone, so here is all of it:\n\n", cfg);
    else
      out("{} has never been trusted by you; here is all of it:\n\n", cfg);
    body = r.current;
  }
  std::string shown = make_visible(body);
  size_t start = 0;
  while (start < shown.size()) {
    size_t nl = shown.find('\n', start);
    if (nl == std::string::npos) nl = shown.size();
    out("  | {}\n", std::string_view(shown).substr(start, nl - start));
    start = nl + 1;
  }
  out("\n");
}

}  // namespace

RunFn setup_trust(CLI::App&) {
  return [](Session& s) {
    auto r = review_trust(s.env());
    if (!r) return report(s, r.error());
    if (r->state == Trust::trusted) {
      // A trusted root whose owner lost the key that seals its records: only
      // the owner, at the terminal, makes a new one. Records sealed with the
      // old key stay unverified; pending proposals are proposed again.
      bool new_key = false;
      if (auto k = load_key(s.env().user_config_dir); !k && k.error().code == Errc::not_found) {
        if (auto yes =
                owner_says_yes(fmt::format("kaicoder's key in {} is missing. Make a new one? Records sealed with "
                                           "the old key will no longer verify.",
                                           make_visible(s.env().user_config_dir.string())),
                               "kaicoder trust");
            !yes)
          return report(s, yes.error());
        auto made = create_key(s.env().user_config_dir);
        if (!made) return report(s, made.error());
        new_key = *made;
      }
      if (s.json())
        emit(s, {{"root", r->root.string()}, {"trusted", true}, {"changed", false}, {"new_key", new_key}});
      else
        out("{} is already trusted; kaicoder.toml is as you trusted it{}\n", r->root.string(),
            new_key ? "; a new key is in place" : "");
      return k_exit_ok;
    }
    send_text_to_stderr(s.json());
    {
      Pager pager(s, Paging::before_prompt);  // the file, paged when longer than the screen
      show_review(*r);
    }
    std::fflush(stdout);
    send_text_to_stderr(false);
    // A config every command would then refuse is not offered for trust.
    if (auto c = load_config({ConfigFile{r->root / "kaicoder.toml", ConfigRole::trusted, r->current}}); !c)
      return report(s, make_error(c.error().code, c.error().message,
                                  "fix kaicoder.toml, then run 'kaicoder trust' again: every command would refuse it "
                                  "as it is"));
    if (auto yes = owner_says_yes(fmt::format("Trust {} with this kaicoder.toml?", make_visible(r->root.string())),
                                  "kaicoder trust");
        !yes)
      return report(s, yes.error());
    if (auto ok = accept_trust(s.env(), *r, iso_utc(s.clock().now())); !ok) return report(s, ok.error());
    if (s.json())
      emit(s, {{"root", r->root.string()}, {"trusted", true}, {"changed", true}});
    else
      out("trusted {}\n", r->root.string());
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
