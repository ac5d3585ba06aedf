// Database statements read where a client is given them: SQL (and the
// meta commands of psql, mysql and sqlite3 that run shells or write files),
// Redis commands and MongoDB shell text. Dropping a whole database is
// blocked; dropping tables, emptying them and deleting or changing every
// row is confirm, with the statement in the reason.

#include "lib/shell/rules/families.hpp"

namespace kai::shell {

namespace {

// SQL text without comments and string literals, split into statements.
std::vector<std::string> sql_statements(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      while (i < s.size() && s[i] != '\n') ++i;
      cur += ' ';
    } else if (ch == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? s.size() : e + 1;
      cur += ' ';
    } else if (ch == '\'' || ch == '"' || ch == '`') {
      size_t e = i + 1;
      while (e < s.size() && s[e] != ch) e += s[e] == '\\' ? 2 : 1;
      cur += ch == '\'' ? std::string("''") : std::string(s.substr(i, std::min(e, s.size()) - i + 1));
      i = e;
    } else if (ch == ';') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> upper_words(std::string_view s) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : std::string(s) + " ") {
    if (is_alpha(ch) || is_digit(ch) || ch == '_' || ch == '.' || ch == '$') {
      w += static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  return out;
}

// The literal that follows `key` in a statement: COPY ... TO PROGRAM 'cmd'.
std::optional<std::string> literal_after(std::string_view original, std::string_view key) {
  std::string upper = ascii_lower(original);
  size_t at = upper.find(ascii_lower(key));
  if (at == std::string::npos) return std::nullopt;
  size_t q = original.find('\'', at);
  if (q == std::string_view::npos) return std::nullopt;
  size_t e = original.find('\'', q + 1);
  if (e == std::string_view::npos) return std::nullopt;
  return std::string(original.substr(q + 1, e - q - 1));
}

void judge_statement(Walker& w, Call& c, std::string_view original, const std::string& stripped) {
  std::vector<std::string> u = upper_words(stripped);
  if (u.empty()) return;
  auto has = [&](std::string_view word) { return std::find(u.begin(), u.end(), word) != u.end(); };
  std::string first = u[0];
  if (first == "WITH") {  // a CTE that changes data
    for (std::string_view verb : {"DELETE", "UPDATE", "INSERT", "MERGE"})
      if (has(verb)) first = std::string(verb);
  }
  std::string shown_stmt = std::string(trim(shown(std::string(trim(original)))));
  if (first == "DROP") {
    std::string what = u.size() > 1 ? u[1] : "";
    if (what == "IF" && u.size() > 2) what = u[2];
    if (one_of(what, {"DATABASE", "SCHEMA", "KEYSPACE", "OWNED"})) {
      w.find(c, V::blocked, "drops a whole database or schema, without a way back (" + shown_stmt + ")");
    } else {
      w.find(c, V::confirm, "drops database objects and their data (" + shown_stmt + ")");
    }
  } else if (first == "TRUNCATE") {
    w.find(c, V::confirm, "empties tables (" + shown_stmt + ")");
  } else if (first == "DELETE" || (first == "DETACH" && has("DELETE")) || (first == "MATCH" && has("DELETE"))) {
    if (!has("WHERE") && !has("LIMIT") && first == "DELETE") {
      w.find(c, V::confirm, "deletes every row of a table: DELETE without WHERE (" + shown_stmt + ")");
    } else {
      w.find(c, V::confirm, "deletes rows (" + shown_stmt + ")");
    }
  } else if (first == "UPDATE") {
    w.find(c, V::confirm,
           std::string(has("WHERE") ? "changes rows" : "changes every row of a table: UPDATE without WHERE") + " (" +
               shown_stmt + ")");
  } else if (first == "ALTER" && has("DROP")) {
    w.find(c, V::confirm, "drops columns, constraints or partitions and their data (" + shown_stmt + ")");
  } else if (first == "COPY" && has("PROGRAM")) {
    if (std::optional<std::string> cmd = literal_after(original, "program"))
      w.judge(c, "COPY ... PROGRAM", literal_field(*cmd), Walker::Feed::none);
    w.find(c, V::confirm, "runs a command on the database server (" + shown_stmt + ")");
  } else if (has("XP_CMDSHELL") || has("SYS_EXEC") || has("SYS_EVAL")) {
    w.find(c, V::confirm, "runs a command on the database server (" + shown_stmt + ")");
  } else if (one_of(first, {"INSERT",   "REPLACE",     "MERGE",   "UPSERT",    "CREATE",  "ALTER",   "GRANT",
                            "REVOKE",   "RENAME",      "COMMENT", "COPY",      "LOAD",    "VACUUM",  "REINDEX",
                            "CLUSTER",  "REFRESH",     "CALL",    "EXEC",      "EXECUTE", "DO",      "IMPORT",
                            "OPTIMIZE", "SHUTDOWN",    "KILL",    "FLUSH",     "PURGE",   "RESET",   "SET",
                            "MERGE",    "CREATE_USER", "DETACH",  "ATTACH",    "UNDROP",  "RESTORE", "BACKUP",
                            "LOCK",     "UNLOCK",      "INSTALL", "UNINSTALL", "PRAGMA",  "REMOVE"})) {
    if (first == "SET" || first == "PRAGMA") {
      if (!has("WRITABLE_SCHEMA") && !has("GLOBAL") && !has("PASSWORD")) return;
    }
    if (first == "REMOVE" && !has("FROM")) return;
    w.find(c, V::confirm, "changes the database (" + shown_stmt + ")");
  } else if (first == "SELECT" && (has("OUTFILE") || has("DUMPFILE"))) {
    w.find(c, V::confirm, "writes a file on the database server (" + shown_stmt + ")");
  }
}

// psql, mysql and sqlite3 commands that are not SQL: shell escapes, output
// files, scripts read from files.
bool meta_command(Walker& w, Call& c, std::string_view line) {
  std::string_view t = trim(line);
  auto shell = [&](std::string_view cmd, std::string_view what) {
    w.judge(c, c.name + " " + std::string(what), literal_field(std::string(trim(cmd))), Walker::Feed::none);
  };
  auto file_or_pipe = [&](std::string_view arg, std::string_view what) {
    arg = trim(arg, " \t'\"");
    if (arg.starts_with("|")) {
      shell(arg.substr(1), what);
    } else if (!arg.empty()) {
      w.write(c, literal_field(std::string(arg)));
    }
  };
  if (t.starts_with("\\!")) {
    shell(t.substr(2), "\\!");
  } else if (t.starts_with("\\o") || t.starts_with("\\g ") || t.starts_with("\\T")) {
    size_t sp = t.find_first_of(" \t");
    if (sp != std::string_view::npos) file_or_pipe(t.substr(sp), t.substr(0, sp));
  } else if (t.starts_with("\\i") || t.starts_with("\\.") || t.starts_with("\\gexec") || t.starts_with("\\e")) {
    w.unknown(c, "runs statements from a file or built at run time (" + std::string(t.substr(0, t.find(' '))) + ")");
  } else if (t.starts_with("\\copy") && ascii_lower(t).find("program") != std::string::npos) {
    if (std::optional<std::string> cmd = literal_after(t, "program")) shell(*cmd, "\\copy ... program");
  } else if (t.starts_with("\\")) {
    return true;  // \d, \l, \dt ...: they describe
  } else if (t.starts_with(".shell") || t.starts_with(".system")) {
    shell(t.substr(t.find_first_of(" \t") == std::string_view::npos ? t.size() : t.find_first_of(" \t")), ".shell");
  } else if (t.starts_with(".output") || t.starts_with(".once") || t.starts_with(".backup") || t.starts_with(".save") ||
             t.starts_with(".excel")) {
    size_t sp = t.find_first_of(" \t");
    if (sp != std::string_view::npos) {
      std::string_view arg = trim(t.substr(sp));
      while (arg.starts_with("-")) arg = trim(arg.substr(std::min(arg.find(' '), arg.size())));  // .once -x
      file_or_pipe(arg, t.substr(0, sp));
    }
  } else if (t.starts_with(".read") || t.starts_with(".load")) {
    std::string_view arg = trim(t.substr(std::min(t.find(' '), t.size())), " \t'\"");
    if (arg.starts_with("|")) {
      shell(arg.substr(1), ".read |");
    } else {
      w.unknown(c, "runs statements or loads code from a file (" + std::string(t.substr(0, 5)) + ")");
    }
  } else if (t.starts_with(".restore") || t.starts_with(".import") || t.starts_with(".recover")) {
    w.find(c, V::confirm, "overwrites or fills the database from a file (" + std::string(t) + ")");
  } else if (t.starts_with(".")) {
    return true;
  } else {
    std::string low = ascii_lower(t);
    for (std::string_view mysql : {"system ", "pager ", "tee ", "source "}) {
      if (!low.starts_with(mysql)) continue;
      std::string_view arg = t.substr(mysql.size());
      if (mysql == "system ") shell(arg, "system");
      if (mysql == "pager ") w.judge(c, c.name + " pager", literal_field(std::string(trim(arg))), Walker::Feed::data);
      if (mysql == "tee ") file_or_pipe(arg, "tee");
      if (mysql == "source ") w.unknown(c, "runs statements from a file (source)");
      return true;
    }
    return false;
  }
  return true;
}

}  // namespace

void judge_sql(Walker& w, Call& c, const Field& text) {
  // meta commands are one a line; the rest is SQL
  std::string sql;
  size_t start = 0;
  const std::string& t = text.value;
  while (start <= t.size()) {
    size_t end = t.find('\n', start);
    if (end == std::string::npos) end = t.size();
    std::string_view line = std::string_view(t).substr(start, end - start);
    std::string_view lt = trim(line);
    bool meta = (lt.starts_with("\\") || lt.starts_with(".") ||
                 one_of(ascii_lower(lt.substr(0, lt.find(' '))), {"system", "pager", "tee", "source"})) &&
                meta_command(w, c, line);
    if (!meta) sql += std::string(line) + "\n";
    start = end + 1;
  }
  std::vector<std::string> stripped = sql_statements(sql);
  // the original text of each statement, for reasons and COPY ... PROGRAM
  std::vector<std::string> originals;
  {
    std::string cur;
    bool in_quote = false;
    char q = 0;
    for (char ch : sql) {
      if (in_quote) {
        cur += ch;
        if (ch == q) in_quote = false;
      } else if (ch == '\'' || ch == '"') {
        in_quote = true;
        q = ch;
        cur += ch;
      } else if (ch == ';') {
        originals.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    originals.push_back(cur);
  }
  for (size_t k = 0; k < stripped.size(); ++k)
    judge_statement(w, c, k < originals.size() ? originals[k] : stripped[k], stripped[k]);
}

void judge_redis(Walker& w, Call& c, const std::vector<std::string>& words) {
  if (words.empty()) return;
  // redis-cli --cluster call HOST:PORT COMMAND ...: the command on every node
  if (ascii_lower(words[0]) == "call" && words.size() > 2)
    return judge_redis(w, c, std::vector<std::string>(words.begin() + 2, words.end()));
  std::string cmd = ascii_lower(words[0]);
  std::string sub = words.size() > 1 ? ascii_lower(words[1]) : "";
  std::string shown_cmd = shown(quote_argv(words));
  if (one_of(cmd, {"flushall", "flushdb"})) {
    w.find(c, V::blocked, "deletes every key of the database, without a way back (" + shown_cmd + ")");
  } else if (one_of(cmd, {"eval", "evalsha", "eval_ro", "fcall", "function"}) || (cmd == "script" && sub == "load")) {
    std::string body;
    for (size_t k = 1; k < words.size(); ++k) body += ascii_lower(words[k]) + " ";
    if (body.find("flushall") != std::string::npos || body.find("flushdb") != std::string::npos) {
      w.find(c, V::blocked, "a script deletes every key of the database, without a way back (" + shown_cmd + ")");
    } else {
      w.find(c, V::confirm, "runs a script that may change data (" + shown_cmd + ")");
    }
  } else if (one_of(cmd, {"del",
                          "unlink",
                          "hdel",
                          "srem",
                          "zrem",
                          "zremrangebyscore",
                          "zremrangebyrank",
                          "zremrangebylex",
                          "lrem",
                          "ltrim",
                          "xdel",
                          "xtrim",
                          "getdel",
                          "expire",
                          "pexpire",
                          "expireat",
                          "pexpireat",
                          "rename",
                          "renamenx",
                          "migrate",
                          "lpop",
                          "rpop",
                          "spop",
                          "zpopmin",
                          "zpopmax",
                          "blpop",
                          "brpop",
                          "move",
                          "swapdb",
                          "restore",
                          "json.del",
                          "ft.dropindex"})) {
    w.find(c, V::confirm, "deletes or moves keys or values (" + shown_cmd + ")");
  } else if (one_of(cmd, {"shutdown", "debug", "slaveof", "replicaof", "failover", "bgrewriteaof", "save", "bgsave",
                          "module", "acl", "client"}) ||
             (cmd == "config" && one_of(sub, {"set", "rewrite", "resetstat"})) ||
             (cmd == "cluster" && one_of(sub, {"reset", "forget", "flushslots", "delslots", "failover"})) ||
             (cmd == "script" && sub == "flush")) {
    if (cmd == "client" && !one_of(sub, {"kill", "pause", "no-evict"})) return;
    if (cmd == "acl" && !one_of(sub, {"deluser", "setuser", "load", "save"})) return;
    if (cmd == "module" && !one_of(sub, {"load", "unload", "loadex"})) return;
    w.find(c, V::confirm, "changes or stops the Redis server (" + shown_cmd + ")");
  } else if (one_of(cmd, {"set",      "setex", "psetex",    "setnx",       "mset",     "msetnx", "append", "incr",
                          "incrby",   "decr",  "decrby",    "incrbyfloat", "hset",     "hmset",  "hsetnx", "hincrby",
                          "lpush",    "rpush", "lset",      "linsert",     "sadd",     "smove",  "zadd",   "zincrby",
                          "xadd",     "copy",  "publish",   "persist",     "setrange", "getset", "pfadd",  "geoadd",
                          "json.set", "lmove", "rpoplpush", "sort"})) {
    w.find(c, V::confirm, "changes data (" + shown_cmd + ")");
  }
}

void judge_mongo(Walker& w, Call& c, const Field& text) {
  const std::string& t = text.value;
  std::string shown_text = shown(t);
  if (t.find("dropDatabase") != std::string::npos) {
    w.find(c, V::blocked, "drops a whole database, without a way back (" + shown_text + ")");
    return;
  }
  for (std::string_view d : {".drop(", "dropCollection", ".deleteMany(", ".remove(", ".deleteOne(", "findOneAndDelete",
                             "dropIndex", "dropUser", "dropAllUsers", "dropRole", "dropAllRoles", "dropSearchIndex"})
    if (t.find(d) != std::string::npos) {
      w.find(c, V::confirm, "deletes collections, documents, indexes or users (" + shown_text + ")");
      return;
    }
  for (std::string_view d : {".insert", ".update", ".replaceOne", ".bulkWrite", "createCollection", "renameCollection",
                             "createUser", "updateUser", "shutdownServer", "adminCommand", ".findOneAndUpdate",
                             ".findOneAndReplace", "createIndex", ".save(", "runCommand", "setFeatureCompatibility"})
    if (t.find(d) != std::string::npos) {
      w.find(c, V::confirm, "changes data (" + shown_text + ")");
      return;
    }
  for (std::string_view js : {"require(", "child_process", "process.", "fs.", "eval(", "load("})
    if (t.find(js) != std::string::npos) {
      w.opaque(c, t);
      return;
    }
}

}  // namespace kai::shell
