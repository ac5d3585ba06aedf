#pragma once
// An HTTP request and response as the review page's handlers see them:
// plain data, parsed by the server loop in cmd/serve.cpp (cpp-httplib) and
// built by the tests without any socket.

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kai::web {

struct Request {
  std::string method;                        // GET, POST, …
  std::string path;                          // decoded, without the query
  std::map<std::string, std::string> query;  // decoded query parameters
  std::map<std::string, std::string> form;   // decoded x-www-form-urlencoded body fields
  // Header names in lower case. A header sent twice holds both values
  // joined by a newline, so it never equals one expected value.
  std::map<std::string, std::string> headers;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  std::string field(const std::string& name) const {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  }
};

struct Response {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type
  std::string body;

  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return {};
  }
};

}  // namespace kai::web
