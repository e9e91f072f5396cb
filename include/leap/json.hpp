// SPDX-License-Identifier: Apache-2.0
// nlohmann/json adapters for leap's types: `nlohmann::json j = outcome;` and `j.get<leap::Outcome>()`.
//
// Formats (round trips are exact; doubles are written with all their digits):
//   Verdict     its name: "compile_error" | "runtime_error" | "timeout" | "wrong_answer" | "correct"
//   Outcome     {"solved_turn": 1, "best_verdict": "correct", "speedup": 1.5, "tokens": 900}
//   KernelOrder {"by_turn": true, "by_severity": false, "speedup_tolerance": -1.0, "token_tolerance": -1.0,
//                "tokens_only_when_solved": true, "turn_weight": 1.0}
//               (every key optional: missing keys keep their default)
//   Turn        {"verdict": "wrong_answer", "speedup": null, "tokens": 300, "feedback": "...", "payload": ...}
//               ("payload" only when the payload type is not NoPayload)
//   Trajectory  {"turns": [Turn, ...]}
// A speedup that is NaN is written as null; +-infinity as "inf" / "-inf". Unknown keys are ignored.
// A malformed document throws leap::json_error naming the field, e.g. "Outcome.solved_turn".
#pragma once

#if !__has_include(<nlohmann/json.hpp>)
#error \
    "leap/json.hpp needs nlohmann/json 3.11: link leap::json (find_package(leap COMPONENTS json)), not leap::leap alone"
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "leap/detail/error.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/trajectory.hpp"
#include "leap/verdict.hpp"

namespace leap {

// A JSON document that does not describe a leap type. The message names the field and what was wrong.
class json_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail::json_io {

using nlohmann::json;

[[noreturn]] inline void fail(std::string_view field, std::string_view problem, const json& value) {
  std::string shown = value.dump();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw json_error(concat("leap: JSON field '", field, "': ", problem, ", got ", value.type_name(), " ", shown));
}

inline const json& require_object(const json& document, std::string_view type_name) {
  if (!document.is_object()) fail(type_name, "expected an object", document);
  return document;
}

// The member `key` of `object`, or nullptr when absent (or when `required`, an error naming it).
inline const json* member(const json& object, std::string_view type_name, const char* key, bool required) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (required) throw json_error(concat("leap: JSON field '", type_name, ".", key, "' is missing"));
    return nullptr;
  }
  return &*found;
}

inline std::string field_name(std::string_view type_name, const char* key) { return concat(type_name, ".", key); }

inline bool read_bool(const json& value, const std::string& field) {
  if (!value.is_boolean()) fail(field, "expected true or false", value);
  return value.get<bool>();
}

inline std::int64_t read_integer(const json& value, const std::string& field, std::int64_t min, std::int64_t max) {
  if (!value.is_number_integer()) fail(field, "expected an integer", value);
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    fail(field, concat("expected an integer in [", min, ", ", max, "]"), value);
  }
  const auto number = value.get<std::int64_t>();
  if (number < min || number > max) fail(field, concat("expected an integer in [", min, ", ", max, "]"), value);
  return number;
}

inline double read_tolerance(const json& value, const std::string& field) {
  if (!value.is_number()) fail(field, "expected a number (negative turns the key off)", value);
  return value.get<double>();
}

// Speedups may be unknown (NaN, written as null) or unbounded ("inf").
inline json write_speedup(double speedup) {
  if (std::isnan(speedup)) return nullptr;
  if (std::isinf(speedup)) return speedup > 0 ? "inf" : "-inf";
  return speedup;
}
inline double read_speedup(const json& value, const std::string& field) {
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail(field, "expected a number, null (unknown), \"inf\" or \"-inf\"", value);
}

inline Verdict read_verdict(const json& value, const std::string& field) {
  if (value.is_string()) {
    if (const auto verdict = verdict_from_string(value.get_ref<const std::string&>())) return *verdict;
  }
  fail(field, "expected one of \"compile_error\", \"runtime_error\", \"timeout\", \"wrong_answer\", \"correct\"",
       value);
}

inline std::uint32_t read_tokens(const json& value, const std::string& field) {
  return static_cast<std::uint32_t>(read_integer(value, field, 0, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace detail::json_io

inline void to_json(nlohmann::json& j, Verdict verdict) { j = std::string(to_string(verdict)); }
inline void from_json(const nlohmann::json& j, Verdict& verdict) {
  verdict = detail::json_io::read_verdict(j, "Verdict");
}

inline void to_json(nlohmann::json& j, const Outcome& outcome) {
  j = nlohmann::json{{"solved_turn", outcome.solved_turn},
                     {"best_verdict", outcome.best_verdict},
                     {"speedup", detail::json_io::write_speedup(outcome.speedup)},
                     {"tokens", outcome.tokens}};
}
inline void from_json(const nlohmann::json& j, Outcome& outcome) {
  using namespace detail::json_io;
  const json& object = require_object(j, "Outcome");
  Outcome read;
  read.solved_turn =
      static_cast<int>(read_integer(*member(object, "Outcome", "solved_turn", true),
                                    field_name("Outcome", "solved_turn"), 0, std::numeric_limits<int>::max()));
  read.best_verdict =
      read_verdict(*member(object, "Outcome", "best_verdict", true), field_name("Outcome", "best_verdict"));
  if (const json* value = member(object, "Outcome", "speedup", false)) {
    read.speedup = read_speedup(*value, field_name("Outcome", "speedup"));
  }
  if (const json* value = member(object, "Outcome", "tokens", false)) {
    read.tokens = read_tokens(*value, field_name("Outcome", "tokens"));
  }
  outcome = read;
}

inline void to_json(nlohmann::json& j, const KernelOrder& order) {
  j = nlohmann::json{{"by_turn", order.by_turn},
                     {"by_severity", order.by_severity},
                     {"speedup_tolerance", order.speedup_tolerance},
                     {"token_tolerance", order.token_tolerance},
                     {"tokens_only_when_solved", order.tokens_only_when_solved},
                     {"turn_weight", order.turn_weight}};
}
inline void from_json(const nlohmann::json& j, KernelOrder& order) {
  using namespace detail::json_io;
  const json& object = require_object(j, "KernelOrder");
  KernelOrder read = order;
  auto flag = [&](const char* key, bool& target) {
    if (const json* value = member(object, "KernelOrder", key, false))
      target = read_bool(*value, field_name("KernelOrder", key));
  };
  auto tolerance = [&](const char* key, double& target) {
    if (const json* value = member(object, "KernelOrder", key, false)) {
      target = read_tolerance(*value, field_name("KernelOrder", key));
    }
  };
  flag("by_turn", read.by_turn);
  flag("by_severity", read.by_severity);
  tolerance("speedup_tolerance", read.speedup_tolerance);
  tolerance("token_tolerance", read.token_tolerance);
  flag("tokens_only_when_solved", read.tokens_only_when_solved);
  if (const json* value = member(object, "KernelOrder", "turn_weight", false)) {
    if (!value->is_number() || !(value->get<double>() >= 0.0 && value->get<double>() <= 1.0)) {
      fail(field_name("KernelOrder", "turn_weight"), "expected a number in [0, 1]", *value);
    }
    read.turn_weight = value->get<double>();
  }
  order = read;
}

template <class Payload>
void to_json(nlohmann::json& j, const Turn<Payload>& turn) {
  j = nlohmann::json{{"verdict", turn.verdict},
                     {"speedup", detail::json_io::write_speedup(turn.speedup)},
                     {"tokens", turn.tokens},
                     {"feedback", turn.feedback}};
  if constexpr (!std::is_same_v<Payload, NoPayload>) j["payload"] = turn.payload;
}
template <class Payload>
void from_json(const nlohmann::json& j, Turn<Payload>& turn) {
  using namespace detail::json_io;
  const json& object = require_object(j, "Turn");
  Turn<Payload> read;
  read.verdict = read_verdict(*member(object, "Turn", "verdict", true), field_name("Turn", "verdict"));
  if (const json* value = member(object, "Turn", "speedup", false))
    read.speedup = read_speedup(*value, field_name("Turn", "speedup"));
  if (const json* value = member(object, "Turn", "tokens", false))
    read.tokens = read_tokens(*value, field_name("Turn", "tokens"));
  if (const json* value = member(object, "Turn", "feedback", false)) {
    if (!value->is_string()) fail(field_name("Turn", "feedback"), "expected a string", *value);
    read.feedback = value->get<std::string>();
  }
  if constexpr (!std::is_same_v<Payload, NoPayload>) {
    const json& value = *member(object, "Turn", "payload", true);
    try {
      read.payload = value.get<Payload>();
    } catch (const nlohmann::json::exception& error) {
      fail(field_name("Turn", "payload"), detail::concat("does not convert to the payload type (", error.what(), ")"),
           value);
    }
  }
  turn = std::move(read);
}

template <class Payload>
void to_json(nlohmann::json& j, const Trajectory<Payload>& trajectory) {
  j = nlohmann::json{{"turns", trajectory.turns}};
}
template <class Payload>
void from_json(const nlohmann::json& j, Trajectory<Payload>& trajectory) {
  using namespace detail::json_io;
  const json& object = require_object(j, "Trajectory");
  const json& turns = *member(object, "Trajectory", "turns", true);
  if (!turns.is_array()) fail("Trajectory.turns", "expected an array", turns);
  Trajectory<Payload> read;
  read.turns.reserve(turns.size());
  for (std::size_t i = 0; i < turns.size(); ++i) {
    try {
      read.turns.push_back(turns[i].get<Turn<Payload>>());
    } catch (const json_error& error) {
      throw json_error(detail::concat(error.what(), " (in Trajectory.turns[", i, "])"));
    }
  }
  trajectory = std::move(read);
}

}  // namespace leap
