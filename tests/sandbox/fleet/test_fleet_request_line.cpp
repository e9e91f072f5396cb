// SPDX-License-Identifier: Apache-2.0
// The client's request writer (request_line, parse_request_text) against the sandbox's own line
// reader (answer_request_line, what serve and a fleet member run), without a Redis: a request the
// reader could not read is refused, naming the field, and one just inside each limit is written
// exactly as given and read back. Refused lines are shown to be ones the reader answers parse_error
// ("id": null: no client can tell which request it was) or request_too_large, unread.
#include <catch2/catch.hpp>
#include <leap/sandbox/request_encoding_error.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/bounded_json.hpp"
#include "protocol/request_codec.hpp"
#include "protocol/request_line.hpp"

namespace sb = leap::sandbox;
namespace pd = leap::sandbox::detail;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// What the sandbox's reader answers a line: the response object. The op answers {} for any request.
json read_back(const std::string& line, const sb::RequestLimits& limits = {}) {
  return json::parse(pd::answer_request_line(line, limits, [](const json&) { return json::object(); }));
}

// The reader's response to `line` is its answer, not a refusal naming no request.
void check_read(const std::string& line, const sb::RequestLimits& limits = {}) {
  const json response = read_back(line, limits);
  INFO(response.dump());
  CHECK(response.at("ok") == true);
  CHECK(response.at("id") == 1);
}

// The reader refuses `line` unread: parse_error with "id": null, the answer a client cannot match to
// its request, or request_too_large.
void check_unreadable(const std::string& line, const char* code, const sb::RequestLimits& limits = {}) {
  const json response = read_back(line, limits);
  INFO(response.dump());
  CHECK(response.at("ok") == false);
  CHECK(response.at("code") == code);
  if (std::string(code) == "parse_error") CHECK(response.at("id").is_null());
}

// The request_line refusal of `request`: its field and problem.
sb::RequestEncodingError refusal(const json& request, const sb::RequestLimits& limits = {}) {
  try {
    (void)pd::request_line(request, limits);
  } catch (const sb::RequestEncodingError& e) {
    return e;
  }
  FAIL("request_line sent " << request.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 200));
  throw std::logic_error("unreachable");
}

json eval_with(json task, const std::string& source) {
  json request = pd::eval_request(std::move(task), source);
  pd::set_request_id(request, 1);
  return request;
}

// A task spec whose "shape" is an array nested `levels` deep: the request is level 1, the task
// level 2, "shape" level 3, so the request nests levels + 2 deep.
json nested_task(int levels) {
  json inner = json::array();
  for (int i = 1; i < levels; ++i) {
    json outer = json::array();
    outer.push_back(std::move(inner));
    inner = std::move(outer);
  }
  json task = {{"name", "t"}};
  task["shape"] = std::move(inner);
  return task;
}

}  // namespace

TEST_CASE("UTF-8 is checked by the reader's own rules: overlong forms, surrogates and past U+10FFFF refused") {
  const std::vector<std::string> valid = {"plain",
                                          "\xC3\xA9",
                                          "\xE2\x82\xAC",
                                          "\xF0\x9D\x84\x9E",
                                          "\xF4\x8F\xBF\xBF",
                                          "\xED\x9F\xBF",
                                          "\xEE\x80\x80",
                                          "\xEF\xBF\xBF",
                                          std::string(1, '\0'),
                                          "seventeen bytes!!\xC3\xA9 and more ascii after it"};
  const std::vector<std::string> invalid = {
      "\xFF",         "\xC0\x80",         "\xC1\xBF",         "\xE0\x80\x80",     "\xED\xA0\x80",
      "\xED\xBF\xBF", "\xF0\x80\x80\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82",
      "\x80",         "abcdefgh\xC3(",    "ok \xF0\x9D\x84"};
  for (const std::string& text : valid) {
    INFO(json(text).dump());
    CHECK(pd::invalid_utf8_at(text) == std::string::npos);
    const json request = eval_with("softmax", text);
    const std::string line = pd::request_line(request, {});
    CHECK(json::parse(line).at("source") == text);  // exactly as given
    check_read(line);
  }
  for (const std::string& text : invalid) {
    const std::size_t at = pd::invalid_utf8_at(text);
    INFO(json(text).dump(-1, ' ', false, json::error_handler_t::replace) << " at " << at);
    CHECK(at != std::string::npos);
    // The line as written without the check: the reader cannot read it, so it is answered "id": null.
    check_unreadable(R"({"id": 1, "op": "eval", "task": "softmax", "source": ")" + text + "\"}", "parse_error");
    const sb::RequestEncodingError e = refusal(eval_with("softmax", text));
    CHECK(e.field() == "source");
    CHECK_THAT(e.problem(), Contains("is not valid UTF-8"));
    CHECK_THAT(e.what(), Contains("field 'source' is not valid UTF-8"));
  }
  // Where it is: byte, offset and line, so a long source's bad byte can be found.
  const sb::RequestEncodingError where = refusal(eval_with("softmax", "// one\n// two \xFE\n"));
  CHECK_THAT(where.problem(), Contains("byte 0xFE at offset 14 (line 2)"));
}

TEST_CASE("a request the sandbox could not read is refused by the request writer, naming the field") {
  SECTION("NaN and infinities, which the old writer sent as null") {
    for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()}) {
      json task = {{"name", "t"}, {"inputs", json::array({{{"shape", {4}}}, {{"range", {0.0, bad}}}})}};
      const sb::RequestEncodingError e = refusal(eval_with(task, "k"));
      CHECK(e.field() == "task.inputs[1].range[1]");
      CHECK_THAT(e.problem(), Contains("JSON has no NaN or Infinity"));
    }
    check_unreadable(R"({"id": 1, "op": "eval", "task": {"tolerance": NaN}, "source": "k"})", "parse_error");
  }
  SECTION("a key that is not valid UTF-8 is said of its object") {
    const json task = {{"name", "t"}, {"headers", {{"ok.cuh", "x"}, {"bad\xC3.cuh", "y"}}}};
    const sb::RequestEncodingError e = refusal(eval_with(task, "k"));
    CHECK(e.field() == "task.headers");
    CHECK_THAT(e.problem(), Contains("has a key \"bad"));
    CHECK_THAT(e.problem(), Contains("is not valid UTF-8"));
  }
  SECTION("a key that is no plain name is quoted in the path") {
    const json task = {{"name", "t"}, {"a key", {{"x-y", "\xFF"}}}};
    CHECK(refusal(eval_with(task, "k")).field() == "task[\"a key\"][\"x-y\"]");
  }
  SECTION("nesting: 64 levels are sent and read, 65 are refused") {
    const std::string deepest = pd::request_line(eval_with(nested_task(62), "k"), {});
    CHECK(pd::json_text_depth(deepest, 100) == 64);
    check_read(deepest);
    const json past = eval_with(nested_task(63), "k");
    check_unreadable(past.dump(), "parse_error");
    const sb::RequestEncodingError e = refusal(past);
    std::string path = "task.shape";
    for (int i = 0; i < 62; ++i) path += "[0]";
    CHECK(e.field() == path);
    CHECK_THAT(e.problem(), Contains("nests arrays and objects 65 levels deep"));
    CHECK_THAT(e.problem(), Contains("limit of 64"));
    // Deeper than any stack: refused by the walk, without recursion.
    const sb::RequestEncodingError very_deep = refusal(eval_with(nested_task(200000), "k"));
    CHECK_THAT(very_deep.problem(), Contains("65 levels deep"));
  }
  SECTION("a line past the limit names its largest member; the line at the limit is sent and read") {
    const sb::RequestLimits limits{.max_request_bytes = 1024};
    const std::size_t envelope = pd::request_line(eval_with("softmax", ""), limits).size();
    const std::string fits(1024 - envelope, 'x');
    const std::string at_limit = pd::request_line(eval_with("softmax", fits), limits);
    CHECK(at_limit.size() == 1024);
    check_read(at_limit, limits);
    const json past = eval_with("softmax", fits + "x");
    check_unreadable(past.dump(), "request_too_large", limits);
    sb::RequestEncodingError e = refusal(past, limits);
    CHECK(e.field() == "source");
    CHECK_THAT(e.problem(), Contains("a request line of 1025, past the sandbox's limit of 1024 bytes"));
    // A task that is the larger part takes the blame: the trainer's, not the candidate's.
    const json big_task = {{"name", "t"}, {"description", std::string(900, 'd')}};
    e = refusal(eval_with(big_task, std::string(200, 's')), limits);
    CHECK(e.field() == "task");
  }
}

TEST_CASE("JSON text a caller gives is refused naming where it stops being JSON the sandbox reads") {
  struct Case {
    const char* text;
    const char* field;
    const char* says;
  };
  for (const Case& c : {Case{R"({"name": "t", "tolerance": NaN})", "task.tolerance", "no NaN or Infinity"},
                        Case{R"({"name": "t", "inputs": [{"range": [0, -Infinity]}]})", "task.inputs[0].range[1]",
                             "no NaN or Infinity"},
                        Case{R"({"name": "t", "scale": 1e400})", "task.scale", "number overflow"},
                        Case{"{\"name\": \"t\xFF\"}", "task.name", "ill-formed UTF-8"},
                        Case{R"({"name": "t",})", "task", "is not JSON the sandbox can read"}}) {
    INFO(c.text);
    try {
      (void)pd::parse_request_text(c.text, "task");
      FAIL("parsed");
    } catch (const sb::RequestEncodingError& e) {
      CHECK(e.field() == c.field);
      CHECK_THAT(e.problem(), Contains(c.says));
      CHECK(pd::invalid_utf8_at(e.what()) == std::string::npos);  // the message is text
    }
    // What the reader answers the same value inside a request: a line it cannot read.
    check_unreadable(std::string(R"({"id": 1, "op": "eval", "source": "k", "task": )") + c.text + "}", "parse_error");
  }
  CHECK(pd::parse_request_text(R"({"op": "info"})", "").at("op") == "info");
}

TEST_CASE("the client reads an answer to a line the sandbox could not read: id null, with its code") {
  const auto unreadable = pd::read_response(json::parse(read_back("{\"id\": 1, \"x\": NaN}").dump()));
  REQUIRE(unreadable);
  CHECK_FALSE(unreadable->id);
  CHECK_FALSE(unreadable->ok);
  CHECK(unreadable->code == "parse_error");
  const auto answered = pd::read_response(json::parse(read_back(R"({"id": 1, "op": "info"})").dump()));
  REQUIRE(answered);
  CHECK(answered->id == 1u);
  CHECK(answered->ok);
  CHECK(answered->code.empty());
  for (const char* other : {R"({"id": "1", "ok": true})", R"({"id": -1, "ok": true})", R"({"ok": true})", "[1]"}) {
    CHECK_FALSE(pd::read_response(json::parse(other)));
  }
}
