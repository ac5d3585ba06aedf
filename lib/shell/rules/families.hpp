#pragma once
// Internal to lib/shell/rules/: the shape of the family tables
// (families.cpp), the rule that reads a command against them
// (family_rule.cpp) and the readers of database statements
// (statements.cpp).

#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

// How a store's whole content is named (a `@root` condition): deleting it is
// deleting everything, like `rm -rf /`.
enum class Store {
  none,
  url,     // scheme://bucket, scheme://bucket/, scheme://bucket/*
  rclone,  // remote:, remote:/
  mc,      // alias/bucket, alias/bucket/
  borg,    // a repository without ::archive
};

// What else a matched verb does.
enum class Act {
  none,
  dest,  // the last word, when a local path, is written (a download, a sync)
  sql,   // the tool's SQL options hold statements to judge (wrangler d1 execute --command)
  exec,  // what follows `--` is a command it runs here (op run -- CMD)
};

struct Verb {
  // Command words separated by spaces; alternative paths separated by
  // ", "; within a word, alternatives separated by '|'; `*` any one word;
  // `**` any words (at most three); `x*` a prefix, `*x` a suffix.
  std::string_view path;
  // Conditions, all required, each with alternatives separated by '|': an
  // option (`-f`, `--force`, `-X:DELETE` an option with that value),
  // `!--keep` an option that must be absent, `@root` a store root named.
  std::string_view when;
  V verdict;  // ask: a known form that needs no warning (stops the search)
  std::string_view reason;
  Act act = Act::none;
};

// How the tool reads SQL, Redis or MongoDB commands.
enum class Dialect { none, sql, redis, mongo };

struct Tool {
  std::string_view family;
  std::string_view programs;  // names, space-separated
  std::string_view values;    // options that take a value, skipped when finding the command words
  std::string_view dry;       // options that make it only describe what it would do
  std::vector<Verb> verbs;    // the first that matches decides
  Store store = Store::none;
  Dialect lang = Dialect::none;
  std::string_view text_opts = {};  // options whose value is SQL / commands / script text
  std::string_view file_opts = {};  // options whose value is a file of them
  size_t text_pos = 0;              // the positional (1-based) that holds SQL: sqlite3 DB 'SQL' is 2
  bool dash_verbs = false;          // command words are options (hadoop fs -rm, tarsnap -d)
};

// Every family's tools, in the order their rows are tried.
const std::vector<Tool>& tools();

// SQL (with psql, mysql and sqlite3 meta commands), Redis commands and
// MongoDB shell text: destroying statements are findings on `c`.
void judge_sql(Walker& w, Call& c, const Field& text);
void judge_redis(Walker& w, Call& c, const std::vector<std::string>& words);
void judge_mongo(Walker& w, Call& c, const Field& text);

}  // namespace kai::shell
