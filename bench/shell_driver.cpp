// The command checker (lib/shell.hpp): what its tables know, and how much
// CPU it takes to classify a command.
//
//   shell_driver coverage           per family: programs and verbs, from the tables
//   shell_driver speed [ROUNDS]     CPU time per classification of typical commands
//
// speed classifies each command of a fixed corpus ROUNDS times (default
// 200) in this process and prints, per command and for the whole corpus,
// the median and the 99th percentile of the CPU time of one classification
// (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)), in microseconds.

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/shell.hpp"

namespace {

kai::ShellContext context() {
  kai::ShellContext ctx;
  ctx.root = "/home/dev/project";
  ctx.home = "/home/dev";
  ctx.check_write_target = [](const std::string& p) -> kai::Status {
    if (p.find(".git") != std::string::npos || p == "kaicoder.toml")
      return kai::make_error(kai::Errc::denied, "'" + p + "' is on the never-write list");
    if (!p.empty() && p[0] == '/' && p.rfind("/home/dev/project/", 0) != 0)
      return kai::make_error(kai::Errc::denied, "'" + p + "' is outside the root");
    return kai::ok_status();
  };
  ctx.is_secret = [](const std::string& p) { return p.find(".env") != std::string::npos; };
  ctx.extra_blocked = {"terraform destroy*"};
  ctx.protected_processes = {"postgres", ":5432"};
  return ctx;
}

// What agents run most, and some of the longer forms the tables see.
const std::vector<std::string> k_corpus = {
    "ls -la",
    "git status",
    "git diff --stat HEAD~1",
    "cargo test --workspace",
    "npm run build && npm test",
    "pytest -x tests/ -k 'not slow'",
    "grep -rn 'TODO' src | sort | uniq -c | head -20",
    "find . -name '*.py' -not -path './.venv/*' | xargs wc -l",
    "cd build && cmake .. -G Ninja && ninja -j4",
    "rm -rf build/ dist/ *.egg-info",
    "sed -i 's/old_name/new_name/g' src/*.c",
    "git add -A && git commit -m 'fix: handle empty input' && git push origin feature/x",
    "docker compose up -d --build && docker compose logs -f web",
    "kubectl -n staging rollout restart deploy/api && kubectl -n staging get pods",
    "aws s3 sync ./public s3://my-site --delete --exclude '*.map'",
    "terraform plan -out=tf.plan && terraform show -json tf.plan | jq '.resource_changes | length'",
    "psql -h localhost -U app -d app -c 'SELECT count(*) FROM users WHERE created_at > now() - interval \\'1 day\\''",
    "npx prettier --write 'src/**/*.{ts,tsx}' && npx eslint --fix src",
    "curl -fsSL https://example.com/api/v1/items | jq '.items[] | .id'",
    "for f in src/*.ts; do npx tsc --noEmit \"$f\" || echo \"$f\" >> failed.txt; done",
    "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"version\"])' < package.json",
    "parallel -j4 'gzip -9 {}' ::: logs/*.log",
    "git -C vendor/lib log --oneline -5",
    "helm upgrade --install api ./charts/api -n prod -f values.prod.yaml --atomic",
    "sudo systemctl restart nginx && journalctl -u nginx -n 50 --no-pager",
};

double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

int coverage() {
  std::vector<kai::FamilyCoverage> cov = kai::checker_coverage();
  size_t programs = 0, verbs = 0;
  std::printf("%-28s %8s %8s  %s\n", "family", "programs", "verbs", "programs (first ones)");
  for (const kai::FamilyCoverage& f : cov) {
    std::string names;
    for (size_t i = 0; i < f.programs.size() && names.size() < 60; ++i) names += (i ? " " : "") + f.programs[i];
    if (names.size() >= 60) names += " ...";
    std::printf("%-28s %8zu %8zu  %s\n", f.family.c_str(), f.programs.size(), f.verbs, names.c_str());
    programs += f.programs.size();
    verbs += f.verbs;
  }
  std::printf("%-28s %8zu %8zu\n", "total", programs, verbs);
  return 0;
}

int speed(int rounds) {
  const kai::ShellContext ctx = context();
  std::vector<double> all;
  std::printf("%10s %10s %-10s  %s\n", "median us", "p99 us", "verdict", "command");
  for (const std::string& cmd : k_corpus) {
    std::vector<double> times;
    kai::Classification c;
    for (int r = 0; r < rounds; ++r) {
      double start = cpu_us();
      c = kai::classify_shell(cmd, ctx);
      times.push_back(cpu_us() - start);
    }
    all.insert(all.end(), times.begin(), times.end());
    std::string shown = cmd.size() > 70 ? cmd.substr(0, 67) + "..." : cmd;
    std::printf("%10.1f %10.1f %-10s  %s\n", percentile(times, 0.5), percentile(times, 0.99),
                std::string(kai::to_string(c.verdict)).c_str(), shown.c_str());
  }
  std::printf("%10.1f %10.1f %-10s  %s\n", percentile(all, 0.5), percentile(all, 0.99), "", "(all commands)");
  std::printf("max %.1f us over %zu classifications\n", *std::max_element(all.begin(), all.end()), all.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "coverage") return coverage();
  if (mode == "speed") return speed(argc > 2 ? std::max(1, std::atoi(argv[2])) : 200);
  std::fprintf(stderr, "usage: shell_driver coverage | speed [ROUNDS]\n");
  return 2;
}
