// `kaicoder serve` in the kaicoder binary: the options are parsed here (for
// help, completion and usage errors), then the whole command line goes to
// the review page's server program, kaicoder-serve (cmd/serve_main.cpp),
// which does all the rest. Only that program links the HTTP server, so the
// other commands never load it and the libraries it brings.
//
// The program is looked up beside the running kaicoder (/proc/self/exe),
// never on PATH or from the environment, which the agent may have set: in
// the same folder (a build tree), else in ../libexec/kaicoder/ (the
// package). It must be a regular file of the same owner as kaicoder itself
// and writable by no one else.

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cmd/serve_options.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/text.hpp"

#ifndef KAICODER_LIBEXEC_FROM_BIN
#define KAICODER_LIBEXEC_FROM_BIN "../libexec/kaicoder"
#endif

namespace kai::cmd {

namespace {

constexpr const char* k_server_name = "kaicoder-serve";

// Where the server program is, or why it cannot be used.
Result<std::filesystem::path> find_server(const std::filesystem::path& self) {
  if (self.empty())
    return make_error(Errc::io, "cannot tell where kaicoder is installed (/proc/self/exe is unreadable)",
                      "run kaicoder serve where /proc is mounted");
  struct stat me{};
  if (::stat(self.c_str(), &me) != 0)
    return make_error(Errc::io, fmt::format("cannot read kaicoder's own file: {}", errno_text(errno)));
  const std::filesystem::path dir = self.parent_path();
  const std::filesystem::path candidates[] = {dir / k_server_name, dir / KAICODER_LIBEXEC_FROM_BIN / k_server_name};
  for (const auto& c : candidates) {
    struct stat st{};
    if (::stat(c.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != me.st_uid || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
      return make_error(Errc::denied,
                        fmt::format("the review page's server program '{}' is not one kaicoder can trust: it must be "
                                    "a file of kaicoder's own owner that no one else can write",
                                    make_visible(c.lexically_normal().string(), Allow::nothing)),
                        "reinstall kaicoder");
    return c.lexically_normal();
  }
  return make_error(Errc::io,
                    fmt::format("the review page's server program is not installed (looked for {} beside '{}' and in "
                                "{})",
                                k_server_name, make_visible(dir.string(), Allow::nothing), KAICODER_LIBEXEC_FROM_BIN),
                    "reinstall kaicoder: the package puts it in /usr/libexec/kaicoder/");
}

}  // namespace

RunFn setup_serve_door(CLI::App& sub) {
  auto a = std::make_shared<ServeArgs>();
  add_serve_options(sub, *a);
  return [a](Session& s) {
    auto server = find_server(s.env().self_exe);
    if (!server) return report(s, server.error());
    std::vector<std::string> args = s.argv();
    if (args.empty()) args.emplace_back("kaicoder");
    args[0] = "kaicoder";  // its messages name the command the person typed
    std::vector<char*> ptrs;
    for (auto& x : args) ptrs.push_back(x.data());
    ptrs.push_back(nullptr);
    std::fflush(stdout);
    ::execv(server->c_str(), ptrs.data());
    return report(s, make_error(Errc::io,
                                fmt::format("cannot start the review page's server program '{}': {}",
                                            make_visible(server->string(), Allow::nothing), errno_text(errno)),
                                "reinstall kaicoder"));
  };
}

}  // namespace kai::cmd
