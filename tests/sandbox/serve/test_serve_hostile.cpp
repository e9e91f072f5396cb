// SPDX-License-Identifier: Apache-2.0
// serve under hostile input: every line is answered, ids come back byte for byte, limits are named,
// and the process is alive afterwards with nothing lost that it had accepted.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/bounded_json.hpp"
#include "sanitizers.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using leap_test::no_gpu_config;
using nlohmann::json;

namespace {

std::string nested(std::size_t levels, const std::string& inner) {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

// The raw text of the response's id: everything between {"id": and the first comma after it is not
// enough for arrays, so take the member the way the server's own scanner does.
std::string raw_id(const std::string& response) {
  const std::optional<std::string_view> id = sb::detail::raw_member(response, "id");
  REQUIRE(id.has_value());
  return std::string(*id);
}

struct ServeRun {
  int exit_code = -1;
  long max_rss_kb = 0;
  std::vector<std::string> lines;
};

// Runs leap-sandbox serve with `input` (a file) on stdin; waits for it and reads its peak RSS.
ServeRun run_serve(const leap_test::TempDir& dir, const std::string& input_file, std::vector<std::string> args) {
  const std::string out_file = (dir.path / "out.txt").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int in = ::open(input_file.c_str(), O_RDONLY);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open("/dev/null", O_WRONLY);
    if (in < 0 || out < 0 || err < 0) _exit(120);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::setenv("LEAP_SANDBOX_CACHE_DIR", (dir.path / "cache").c_str(), 1);
    std::vector<char*> argv;
    std::string program = LEAP_SANDBOX_CLI;
    std::string serve = "serve";
    argv.push_back(program.data());
    argv.push_back(serve.data());
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    _exit(121);
  }
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(pid, &status, 0, &usage) == pid);
  ServeRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1000 - (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  run.max_rss_kb = usage.ru_maxrss;
  std::istringstream in(leap_test::read_file(out_file));
  for (std::string line; std::getline(in, line);) run.lines.push_back(line);
  return run;
}

}  // namespace

TEST_CASE("request handler: ids come back byte for byte, whatever JSON value they are", "[sandbox][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  for (const std::string id :
       {"123456789012345678901234567890", "-0.0e+00", "3.0e0", "\"\\u00e9\\n\"", "[1, {\"a\" : null}]",
        "{\"k\": [true, false]}", "null", "18446744073709551616", "1E400x"}) {
    const std::string line = "{\"op\": \"info\", \"id\": " + id + "}";
    const std::string response = handler.handle(line);
    if (id == "1E400x") {  // not JSON at all: the id cannot be known
      CHECK(raw_id(response) == "null");
      CHECK(json::parse(response).at("code") == "parse_error");
      continue;
    }
    CHECK(raw_id(response) == id);
    CHECK(json::parse(response).at("ok") == true);
  }
  // The last of repeated ids, as the parser keeps it; an id spelled with an escape in its key.
  CHECK(raw_id(handler.handle(R"({"id": 1, "op": "info", "id": 2})")) == "2");
  CHECK(raw_id(handler.handle(R"({"\u0069d": "esc", "op": "info"})")) == "\"esc\"");
}

TEST_CASE("request handler: each hostile line gets its own error code, and the handler goes on", "[sandbox][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator, sb::RequestLimits{64 << 10, 64});
  auto code = [&](const std::string& line) {
    const json r = json::parse(handler.handle(line));
    CHECK(r.at("ok") == false);
    return std::make_pair(r.at("code").get<std::string>(), r.at("id").dump());
  };
  // Numbers out of range, ids and values nested 30 000 deep: parse errors, not crashes.
  CHECK(code(R"({"id": 1, "op": "info", "x": 1e400})") ==
        std::make_pair(std::string("parse_error"), std::string("null")));
  CHECK(code("{\"id\": " + nested(30000, "1") + ", \"op\": \"info\"}").first == "parse_error");
  CHECK(code("{\"id\": 2, \"op\": \"eval\", \"task\": " + nested(30000, "") + ", \"source\": \"\"}").first ==
        "parse_error");
  CHECK_THAT(json::parse(handler.handle(nested(65, ""))).at("error").get<std::string>(), Catch::Contains("64 levels"));
  // A line over the limit: too large, named with the limit, id kept when the line starts with it.
  const json big =
      json::parse(handler.handle(R"({"id": "big", "op": "compile", "source": ")" + std::string(70 << 10, 'x') + "\"}"));
  CHECK(big.at("code") == "request_too_large");
  CHECK(big.at("id") == "big");
  CHECK_THAT(big.at("error").get<std::string>(), Catch::Contains("over the limit of 65536 bytes"));
  // JSON that is not a request; a request whose id is null is a different thing from a bad line.
  CHECK(code("[1, 2]") == std::make_pair(std::string("invalid_request"), std::string("null")));
  CHECK(code(R"({"op": "info"})").first == "invalid_request");
  CHECK(code(R"({"id": null, "op": "dance"})") == std::make_pair(std::string("bad_request"), std::string("null")));
  // Bad requests keep their id: a size expression 50 000 parentheses deep, a spec 100 levels deep.
  const std::string deep_expr(50000, '(');
  const json spec = {{"name", "t"},
                     {"entry", "t"},
                     {"sizes", {{"n", 1}}},
                     {"launch", {{"grid", deep_expr + "1" + std::string(50000, ')')}, {"block", 1}}},
                     {"params", {{{"name", "y"}, {"dtype", "float32"}, {"role", "out"}, {"shape", {"n"}}}}},
                     {"reference", "x"}};
  CHECK(code(json{{"id", 9}, {"op", "eval"}, {"task", spec}, {"source", ""}}.dump()).first == "request_too_large");
  const sb::RequestHandler roomy(evaluator);
  const json deep = json::parse(roomy.handle(json{{"id", 9}, {"op", "eval"}, {"task", spec}, {"source", ""}}.dump()));
  CHECK(deep.at("id") == 9);
  CHECK(deep.at("code") == "bad_request");
  CHECK_THAT(deep.at("error").get<std::string>(), Catch::Contains("longer than the limit"));
  CHECK(code(R"({"id": 10, "op": "compile", "source": "x", "arch": 5})").first == "bad_request");
  CHECK(code(R"({"id": 11, "op": "compile", "source": "x", "arch": "sm_1"})").first == "bad_request");
  CHECK(code(R"({"id": 12, "op": "eval", "task": {"name": "x"}, "source": ""})").first == "bad_request");
  // Still answering.
  CHECK(json::parse(handler.handle(R"({"id": "after", "op": "info"})")).at("ok") == true);
  CHECK_THROWS_AS(sb::RequestHandler(evaluator, sb::RequestLimits{100, 64}), std::invalid_argument);
}

TEST_CASE("cli serve: the issue's attack lines, one after another, are all answered and serve exits 0",
          "[sandbox][serve][cli]") {
  leap_test::TempDir dir;
  std::string in;
  in += R"({"id": 1, "op": "info"})"
        "\n";
  in += R"({"id": 2, "op": "info", "x": 1e400})"
        "\n";
  in += "{\"id\": " + nested(100000, "0") + ", \"op\": \"info\"}\n";
  in += "{\"id\": 3, \"op\": \"eval\", \"task\": {\"name\": " + nested(100000, "") + "}, \"source\": \"\"}\n";
  in += R"({"id": 123456789012345678901234567890, "op": "info"})"
        "\n";
  in += R"({"id": "huge", "op": "compile", "source": ")" + std::string(3 << 20, 'a') + "\"}\n";  // 3 MiB, limit 1 MiB
  in += R"({"id": null, "op": "info"})"
        "\n";
  in += "not json\n";
  in += R"({"id": "last", "op": "info"})"
        "\n";
  const std::string input = dir.write("in.txt", in).string();
  const ServeRun r = run_serve(dir, input, {"--max-request-bytes", "1048576", "-j", "2"});
  CHECK(r.exit_code == 0);
  REQUIRE(r.lines.size() == 9);
  std::map<std::string, json> by_id;
  std::vector<std::string> null_codes;
  for (const std::string& line : r.lines) {
    const json j = json::parse(line);
    if (j.at("id").is_null()) null_codes.push_back(j.value("code", "ok"));
    else by_id[raw_id(line)] = j;
  }
  std::sort(null_codes.begin(), null_codes.end());
  // 1e400, the deep id, the deep task and "not json" are parse errors; the request whose id was null is answered.
  CHECK(null_codes == std::vector<std::string>{"ok", "parse_error", "parse_error", "parse_error", "parse_error"});
  CHECK(by_id.at("1").at("ok") == true);
  CHECK(by_id.at("123456789012345678901234567890").at("ok") == true);
  CHECK(by_id.at("\"huge\"").at("code") == "request_too_large");
  CHECK(by_id.at("\"last\"").at("ok") == true);
}

TEST_CASE("cli serve: an oversized line is never held whole in memory", "[sandbox][serve][cli]") {
  leap_test::TempDir dir;
  const std::string small = dir.write("small.txt", "{\"id\": 1, \"op\": \"info\"}\n").string();
  const std::string big = dir.write("big.txt", "{\"id\": 1, \"op\": \"info\"}\n{\"id\": 2, \"source\": \"" +
                                                   std::string(96 << 20, 'a') + "\"}\n")
                              .string();
  const ServeRun base = run_serve(dir, small, {});
  const ServeRun huge = run_serve(dir, big, {});
  CHECK(base.exit_code == 0);
  CHECK(huge.exit_code == 0);
  REQUIRE(huge.lines.size() == 2);
  CHECK(json::parse(huge.lines[1]).at("code") == "request_too_large");
  // A 96 MiB line read through a 4 MiB limit: peak memory grows by far less than the line (under a
  // sanitizer, by far less than the line plus the sanitizer's share of it).
  INFO("peak RSS " << base.max_rss_kb << " KiB with a small request, " << huge.max_rss_kb
                   << " KiB with the 96 MiB line");
  CHECK(huge.max_rss_kb - base.max_rss_kb < static_cast<long>(leap_test::k_rss_factor) * 32 * 1024);
}

// With one handler and a queue of one, serve stops reading while both are taken: at any moment it has
// consumed at most the requests it answered, plus the one in the handler, the one in the queue, the
// one it is reading and its 64 KiB read buffer. A serve that read ahead without bound would drain the
// pipe as fast as it is written, whatever it had answered.
TEST_CASE("cli serve: a full queue stops serve reading, and every request is still answered", "[sandbox][serve][cli]") {
  leap_test::TempDir dir;
  constexpr int k_requests = 24;
  const std::string padding(64 << 10, 'x');  // each request line is a little over 64 KiB
  std::string input;
  std::size_t line_bytes = 0;
  for (int i = 0; i < k_requests; ++i) {
    const json request = {
        {"id", i},
        {"op", "compile"},
        {"source", "// " + padding + "\n__global__ void k" + std::to_string(i) + "(float* y) { y[0] = 1; }\n"}};
    const std::string line = request.dump() + "\n";
    line_bytes = std::max(line_bytes, line.size());
    input += line;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a serve that died shows as EPIPE below, not as this test's death
  int in[2];
  REQUIRE(::pipe(in) == 0);
  const std::string out_file = (dir.path / "out.txt").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open("/dev/null", O_WRONLY);
    if (out < 0 || err < 0) _exit(120);
    ::dup2(in[0], 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::close(in[1]);
    ::setenv("LEAP_SANDBOX_CACHE_DIR", (dir.path / "cache").c_str(), 1);
    ::execl(LEAP_SANDBOX_CLI, LEAP_SANDBOX_CLI, "serve", "-j", "1", "--queue", "1", static_cast<char*>(nullptr));
    _exit(121);
  }
  // The test keeps its own copy of the read end, to see how much of the pipe serve has not read.
  REQUIRE(::fcntl(in[1], F_SETFL, O_NONBLOCK) == 0);
  const auto answered = [&] {
    const std::string out = leap_test::read_file(out_file);
    return static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  };
  std::size_t written = 0;
  std::size_t checks = 0;
  std::size_t most_consumed_ahead = 0;  // consumed beyond what was answered, in request lines
  while (written < input.size()) {
    const ssize_t n = ::write(in[1], input.data() + written, input.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    REQUIRE(errno == EAGAIN);  // the pipe is full: how much has serve taken out of it?
    int unread = 0;
    REQUIRE(::ioctl(in[0], FIONREAD, &unread) == 0);
    const std::size_t consumed = written - static_cast<std::size_t>(unread);
    const std::size_t done = answered();  // read after: it only grows, so the bound only loosens
    const std::size_t ahead = consumed > done * line_bytes ? consumed - done * line_bytes : 0;
    most_consumed_ahead = std::max(most_consumed_ahead, ahead);
    // The handler's line, the queued line, the line the reader is pushing and the rest of its buffer.
    CHECK(consumed <= (done + 3) * line_bytes + (64 << 10));
    ++checks;
    ::usleep(20000);
  }
  ::close(in[1]);
  ::close(in[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  INFO("checks while the pipe was full: " << checks << ", most consumed ahead of the answers: " << most_consumed_ahead
                                          << " bytes");
  CHECK(checks > 0);  // the writer did wait on serve
  std::istringstream out(leap_test::read_file(out_file));
  std::vector<bool> seen(k_requests, false);
  for (std::string line; std::getline(out, line);) {
    const json j = json::parse(line);
    CHECK(j.at("ok") == true);
    seen.at(j.at("id").get<std::size_t>()) = true;
  }
  CHECK(std::count(seen.begin(), seen.end(), true) == k_requests);
}
