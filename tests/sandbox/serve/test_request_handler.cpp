// SPDX-License-Identifier: Apache-2.0
// The request protocol that serve and a fleet worker share, called directly: every line gets exactly
// one response naming its id, and nothing a request contains escapes as an exception.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace sb = leap::sandbox;
using leap_test::no_gpu_config;
using nlohmann::json;

namespace {

json answer(const sb::RequestHandler& handler, const std::string& line) {
  const std::string response = handler.handle(line);
  CHECK(response.find('\n') == std::string::npos);  // one line, whatever the request held
  return json::parse(response);
}

}  // namespace

TEST_CASE("request handler: malformed lines get id null and say why", "[sandbox][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  for (const char* line : {"not json", "[1, 2]", "{\"op\": \"info\"}", "{\"id\": 1", "\"id\""}) {
    const json r = answer(handler, line);
    CHECK(r.at("id").is_null());
    CHECK(r.at("ok") == false);
    CHECK_THAT(r.at("error").get<std::string>(), Catch::StartsWith("malformed request"));
  }
}

TEST_CASE("request handler: bad requests are error responses that keep their id", "[sandbox][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  const json no_op = answer(handler, R"({"id": "a"})");
  CHECK(no_op.at("id") == "a");
  CHECK_THAT(no_op.at("error").get<std::string>(), Catch::Contains("unknown op ''"));
  const json op_not_string = answer(handler, R"({"id": 2, "op": 7})");
  CHECK(op_not_string.at("id") == 2);
  CHECK(op_not_string.at("ok") == false);
  const json no_source = answer(handler, R"({"id": [3], "op": "compile"})");
  CHECK(no_source.at("id") == json::array({3}));
  CHECK_THAT(no_source.at("error").get<std::string>(), Catch::Contains("\"source\""));
  const json unknown_task = answer(handler, R"({"id": 4, "op": "eval", "task": "no_such_task", "source": ""})");
  CHECK_THAT(unknown_task.at("error").get<std::string>(), Catch::Contains("unknown task 'no_such_task'"));
  const json bad_spec = answer(handler, R"({"id": 5, "op": "eval", "task": {"name": 1}, "source": ""})");
  CHECK(bad_spec.at("id") == 5);
  CHECK(bad_spec.at("ok") == false);
  CHECK_FALSE(bad_spec.at("error").get<std::string>().empty());
}

TEST_CASE("request handler: a field an op does not take is refused, naming it", "[sandbox][serve]") {
  sb::Evaluator evaluator;
  const sb::RequestHandler handler(evaluator);
  // The server times every eval and draws its seeds itself: a caller's "seed" or "time" is not obeyed,
  // so it must not be silently accepted either.
  const json seeded = answer(handler, R"({"id": 1, "op": "eval", "task": "softmax", "source": "", "seed": 7})");
  CHECK(seeded.at("id") == 1);
  CHECK(seeded.at("ok") == false);
  CHECK(seeded.at("code") == "bad_request");
  CHECK_THAT(seeded.at("error").get<std::string>(),
             Catch::Contains("eval: unknown field \"seed\"") && Catch::Contains("id, op, task, source, headers"));
  const json untimed = answer(handler, R"({"id": 2, "op": "eval", "task": "softmax", "source": "", "time": false})");
  CHECK_THAT(untimed.at("error").get<std::string>(), Catch::Contains("unknown field \"time\""));
  const json misspelt = answer(handler, R"({"id": 3, "op": "compile", "source": "", "archs": "sm_90"})");
  CHECK_THAT(misspelt.at("error").get<std::string>(), Catch::Contains("compile: unknown field \"archs\""));
  const json info = answer(handler, R"({"id": 4, "op": "info", "verbose": true})");
  CHECK_THAT(info.at("error").get<std::string>(),
             Catch::Contains("info: unknown field \"verbose\" (info takes id, op)"));
  // The fields an op does take still work beside id and op.
  CHECK(answer(handler, R"({"id": 5, "op": "info"})").at("ok") == true);
}

TEST_CASE("request handler: info, compile and eval answer with results", "[sandbox][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  const json info = answer(handler, R"({"id": 1, "op": "info"})");
  REQUIRE(info.at("ok") == true);
  CHECK(info.at("result").at("gpu").at("available") == false);
  CHECK_THAT(info.at("result").at("versions").get<std::string>(), Catch::Contains("NVRTC"));

  const json compiled =
      answer(handler, json{{"id", 2}, {"op", "compile"}, {"source", leap_test::plain_kernel()}}.dump());
  REQUIRE(compiled.at("ok") == true);
  CHECK(compiled.at("result").at("status") == "ok");
  CHECK(compiled.at("result").at("cubin_bytes").get<std::size_t>() > 0);

  const sb::BuiltinTask* softmax = sb::find_builtin_task("softmax");
  REQUIRE(softmax != nullptr);
  const json evaluated = answer(
      handler,
      json{{"id", 3}, {"op", "eval"}, {"task", "softmax"}, {"source", softmax->variant("broken")->source}}.dump());
  REQUIRE(evaluated.at("ok") == true);
  CHECK(evaluated.at("result").at("verdict") == "compile_error");
  CHECK(evaluated.at("result").at("compile").at("status") == "error");
}
