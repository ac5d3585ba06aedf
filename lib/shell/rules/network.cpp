// The network: downloads, uploads, remote shells and copies, raw sockets, mail.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

// The file a download without an explicit name is saved as: the last part
// of the URL's path (wget URL, curl -O URL).
Field url_file(const Field& url, const Field* dir) {
  std::string path = url.value.substr(0, url.value.find_first_of("?#"));
  std::string name = path_basename(path);
  if (dir) name = dir->value + "/" + name;
  return with_value(url, name);
}
}  // namespace

void rule_curl(Walker& w, Call& c) {
  // clang-format off
  Opts o = parse_opts(c.argv, 1,
                      Spec{"AbcCdDeEFHKmoPQrtTuUwxXYyz",
                           {"--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "--form",
                            "--form-string", "--upload-file", "--output", "--output-dir", "--request", "--header", "--user",
                            "--config", "--cookie", "--cookie-jar", "--dump-header", "--trace", "--trace-ascii", "--url",
                            "--proxy", "--referer", "--user-agent", "--max-time", "--connect-timeout", "--retry", "--cacert",
                            "--cert", "--key", "--resolve", "--libcurl", "--write-out", "--stderr", "--netrc-file", "--range",
                            "--continue-at", "--interface", "--local-port", "--limit-rate", "--max-filesize"}});
  // clang-format on
  if (o.has({"-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F",
             "--form", "--form-string", "-T", "--upload-file"}))
    w.find(c, V::confirm, "sends data over the network");
  if (const Field* m = o.value({"-X", "--request"}))
    if (one_of(ascii_lower(m->value), {"post", "put", "patch", "delete"}))
      w.find(c, V::confirm, "sends a " + m->value + " request");
  if (o.has({"-K", "--config"})) w.unknown(c, "reads curl options from a file");
  for (const Field* f :
       o.values({"-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl", "--stderr"}))
    if (f->value != "-") w.write(c, *f);
  if (const Field* d = o.value({"--output-dir"})) w.write(c, *d);
  std::optional<Field> saved;
  for (const Field* out : o.values({"-o", "--output"})) {
    if (out->value == "-") continue;
    w.write(c, *out);
    saved = *out;
  }
  if (o.has({"-O", "--remote-name", "--remote-name-all", "-J"})) {
    w.find(c, V::confirm, "saves a download into a file");
    if (!o.pos.empty()) saved = url_file(c.argv[o.pos.back()], o.value({"--output-dir"}));
  }
  w.download(c, saved);
}

void rule_wget(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
      Spec{"aADeiIlOoPQRtTUwXB",
           {"--output-document", "--output-file", "--append-output", "--directory-prefix", "--input-file",
            "--post-data", "--post-file", "--body-data", "--body-file", "--method", "--execute", "--header",
            "--user-agent", "--tries", "--timeout", "--user", "--password", "--load-cookies", "--save-cookies"}});
  if (o.has({"--post-data", "--post-file", "--body-data", "--body-file"}))
    w.find(c, V::confirm, "sends data over the network");
  if (const Field* m = o.value({"--method"}))
    if (one_of(ascii_lower(m->value), {"post", "put", "patch", "delete"}))
      w.find(c, V::confirm, "sends a " + m->value + " request");
  if (o.has({"-e", "--execute"})) w.unknown(c, "wget -e runs configuration commands");
  for (const Field* f : o.values({"-o", "--output-file", "-a", "--append-output", "--save-cookies"})) w.write(c, *f);
  std::optional<Field> saved;
  const Field* doc = o.value({"-O", "--output-document"});
  if (doc && doc->value != "-") {
    w.write(c, *doc);
    saved = *doc;
  } else if (!doc) {
    w.find(c, V::confirm, "saves a download into a file");
    const Field* dir = o.value({"-P", "--directory-prefix"});
    if (dir) w.write(c, *dir);
    if (!o.pos.empty()) saved = url_file(c.argv[o.pos.back()], dir);
  }
  w.download(c, saved);
}

void rule_http_client(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"POST", "PUT", "PATCH", "DELETE", "--form", "-f"}) || v.find(":=") != std::string::npos ||
        (v.find('=') != std::string::npos && !sw(v, "-") && v.find("://") == std::string::npos) || v.find('@') == 0)
      w.find(c, V::confirm, "sends data over the network");
  }
  w.download(c, std::nullopt);
}

namespace {

bool remote_path(const Field& f) {
  size_t colon = f.value.find(':');
  size_t slash = f.value.find('/');
  return sw(f.value, "rsync://") ||
         (colon != std::string::npos && colon > 0 && (slash == std::string::npos || colon < slash));
}

void ssh_options(Walker& w, Call& c, const Opts& o) {
  for (const Field* opt : o.values({"-o"})) {
    std::string key = ascii_lower(opt->value.substr(0, opt->value.find_first_of("= ")));
    size_t at = opt->value.find_first_of("= ");
    if (one_of(key, {"proxycommand", "localcommand", "knownhostscommand", "remotecommand", "match"}) &&
        at != std::string::npos)
      w.judge(c, "ssh -o " + key, with_value(*opt, std::string(trim(opt->value.substr(at + 1)))));
    if (one_of(key, {"proxyjump", "include"})) w.unknown(c, "ssh -o " + key + " cannot be judged");
  }
}
}  // namespace

void rule_ssh(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"BbcDEeFIiJLlmOopQRSWw", {}, true});
  ssh_options(w, c, o);
  w.find(c, V::confirm, "runs commands on another machine");
  w.download(c, std::nullopt);
  if (o.rest + 1 < c.argv.size()) {
    w.run_shell(c, joined(c.argv, o.rest + 1), {});
    c.wrapper = false;
  }
}

void rule_scp(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"cFiJloPSDX", {}});
  ssh_options(w, c, o);
  bool remote = false;
  for (size_t i : o.pos) remote = remote || remote_path(c.argv[i]);
  if (remote || c.name == "sftp") w.find(c, V::confirm, "copies files over the network");
  if (o.has({"-b"}) && c.name == "sftp") w.unknown(c, "sftp runs a batch file");
  if (c.name == "scp" && o.pos.size() >= 2 && !remote_path(c.argv[o.pos.back()])) w.write(c, c.argv[o.pos.back()]);
}

void rule_rsync(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
      Spec{"eBfTM",
           {"--rsh", "--rsync-path", "--filter", "--exclude", "--exclude-from", "--include", "--include-from",
            "--files-from", "--temp-dir", "--backup-dir", "--suffix", "--log-file", "--password-file", "--out-format",
            "--chmod", "--chown", "--compare-dest", "--copy-dest", "--link-dest"}});
  bool remote = false;
  for (size_t i : o.pos) remote = remote || remote_path(c.argv[i]);
  if (remote) w.find(c, V::confirm, "copies files over the network");
  if (o.pos.size() < 2) return;
  const Field& dest = c.argv[o.pos.back()];
  if (o.has({"--remove-source-files"}))  // the files it sends are deleted
    for (size_t k = 0; k + 1 < o.pos.size(); ++k)
      if (!remote_path(c.argv[o.pos[k]])) judge_deletion(w, c, c.argv[o.pos[k]], true);
  if (remote_path(dest)) return;
  w.write(c, dest);
  bool deletes = std::any_of(o.opts.begin(), o.opts.end(), [](const Opt& x) { return sw(x.name, "--delete"); });
  if (!deletes) return;
  Reach r = deletion_reach(w, dest);
  if (r.kind == Reach::root || r.kind == Reach::guarded || r.kind == Reach::runtime)
    w.find(c, V::blocked,
           "recursive deletion (rsync --delete) of " + (r.kind == Reach::root ? "the root itself" : r.what) + " ('" +
               dest.value + "')");
  else
    w.find(c, V::confirm, "deletes files in '" + dest.value + "' that the source does not have (rsync --delete)");
}

void rule_netcat(Walker& w, Call& c) {
  w.find(c, V::confirm, "opens a network connection that can send data");
  w.download(c, std::nullopt);
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    std::optional<Field> prog;
    if (one_of(f.value, {"-e", "-c", "--exec", "--sh-exec", "--lua-exec"}) && i + 1 < c.argv.size()) prog = c.argv[++i];
    std::string low = ascii_lower(f.value);
    for (std::string_view kind : {"exec:", "system:"}) {
      size_t at = low.find(kind);
      if (at != std::string::npos) {
        std::string cmd = f.value.substr(at + kind.size());
        prog = with_value(f, cmd.substr(0, cmd.find(',')));
      }
    }
    if (!prog) continue;
    std::string program = basename_of(trim(prog->value).substr(0, trim(prog->value).find(' ')));
    if (is_shell(program) || interpreter(program)) {
      w.find(c, V::blocked, "connects a shell to the network");
    } else {
      w.judge(c, c.name + " " + f.value, *prog);
    }
  }
}

void rule_mail(Walker& w, Call& c) { w.find(c, V::confirm, "sends mail"); }

// ssh-keygen -f FILE writes a key pair there, unless it only reads one.
void rule_ssh_keygen(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"abCEfFIJjKmNnOPrRsSttVwYZz", {}});
  if (o.has({"-l", "-y", "-F", "-R", "-B", "-Q", "-H"})) return;
  if (const Field* f = o.value({"-f"})) {
    w.write(c, *f);
    Field pub = *f;
    pub.value += ".pub";
    w.write(c, pub);
  } else {
    w.write(c, literal_field("~/.ssh/id_" + std::string(o.value({"-t"}) ? o.value({"-t"})->value : "ed25519")));
  }
}

void rule_openssl(Walker& w, Call& c) {
  if (c.argv.size() < 2) return;
  std::string_view sub = c.argv[1].value;
  if (sub == "s_client") w.download(c, std::nullopt);
  bool decode = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "-d"; });
  if ((sub == "base64" || sub == "enc") && decode) {
    bool any_file = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "-in"; });
    if (!any_file && c.in.text) {
      if (std::optional<std::string> out = base64_decode(*c.in.text)) {
        c.info.output = out;
        c.info.output_computed = true;
      }
    }
  }
  for (size_t i = 1; i + 1 < c.argv.size(); ++i)
    if (c.argv[i].value == "-out") w.write(c, c.argv[i + 1]);
}

}  // namespace kai::shell
