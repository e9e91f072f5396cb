// SPDX-License-Identifier: Apache-2.0
// nlohmann/json adapters for the gate and rollout types, and StepMetrics as one JSON line per step.
//
// Formats:
//   Expansion, GateReason  their names: "expand", "prune_easy", ...; "in_band", "too_few_failures", ...
//   GateDecision  {"expansion": "expand", "reason": "in_band"}
//   GroupStats    {"size": 8, "n_correct": 3, "n_wrong_answer": 2, "n_runtime_error": 1, "n_timeout": 0,
//                  "n_compile_error": 2}
//   StepMetrics   {"step": 0, "tasks": 4, "group_size": 8, "max_turns": 3, "trajectories": 32,
//                  "accuracy_at_turn": [0.25, 0.375, 0.4375],
//                  "groups_by_expansion": {"expand": 2, "prune_easy": 1, ...every Expansion},
//                  "groups_by_reason": {"in_band": 2, ...every GateReason},
//                  "evaluations": 50, "evaluations_per_turn": [32, 12, 6], "policy_errors": 0,
//                  "environment_errors": 0, "environment_retries": 0, "masked_trajectories": 0,
//                  "completion_tokens": 51200, "feedback_tokens": 800,
//                  "advantage_rms": 0.48, "solved_later": 5, "solved_later_negative": 2,
//                  "solved_later_negative_share": 0.4, "wall_seconds": 1.25}
// Reading is strict about types and names the field on error (leap::json_error); unknown keys are
// ignored, and missing counts in groups_by_* read as 0. The advantage fields, environment_retries and
// masked_trajectories are optional (lines written before they existed read as 0); the share is derived
// from the two counts, not read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "leap/gate.hpp"
#include "leap/json.hpp"
#include "leap/step_metrics.hpp"

namespace leap {

namespace detail::json_io {

inline Expansion read_expansion(const json& value, const std::string& field) {
  if (value.is_string()) {
    for (Expansion expansion : all_expansions) {
      if (to_string(expansion) == value.get_ref<const std::string&>()) return expansion;
    }
  }
  fail(field, "expected one of \"expand\", \"prune_easy\", \"prune_catastrophic\", \"prune_budget\"", value);
}

inline GateReason read_reason(const json& value, const std::string& field) {
  if (value.is_string()) {
    for (std::size_t i = 0; i < gate_reason_count; ++i) {
      const auto reason = static_cast<GateReason>(i);
      if (to_string(reason) == value.get_ref<const std::string&>()) return reason;
    }
  }
  fail(field, "expected a gate reason such as \"in_band\" or \"too_few_failures\"", value);
}

inline std::int64_t read_int_field(const json& object, const char* type_name, const char* key, std::int64_t min,
                                   std::int64_t max) {
  return read_integer(*member(object, type_name, key, true), field_name(type_name, key), min, max);
}

}  // namespace detail::json_io

inline void to_json(nlohmann::json& j, Expansion expansion) { j = std::string(to_string(expansion)); }
inline void from_json(const nlohmann::json& j, Expansion& expansion) {
  expansion = detail::json_io::read_expansion(j, "Expansion");
}

inline void to_json(nlohmann::json& j, GateReason reason) { j = std::string(to_string(reason)); }
inline void from_json(const nlohmann::json& j, GateReason& reason) {
  reason = detail::json_io::read_reason(j, "GateReason");
}

inline void to_json(nlohmann::json& j, const GateDecision& decision) {
  j = nlohmann::json{{"expansion", decision.expansion}, {"reason", decision.reason}};
}
inline void from_json(const nlohmann::json& j, GateDecision& decision) {
  using namespace detail::json_io;
  const json& object = require_object(j, "GateDecision");
  decision.expansion = read_expansion(*member(object, "GateDecision", "expansion", true), "GateDecision.expansion");
  decision.reason = read_reason(*member(object, "GateDecision", "reason", true), "GateDecision.reason");
}

inline void to_json(nlohmann::json& j, const GroupStats& stats) {
  j = nlohmann::json{{"size", stats.size},
                     {"n_correct", stats.n_correct},
                     {"n_wrong_answer", stats.n_wrong_answer},
                     {"n_runtime_error", stats.n_runtime_error},
                     {"n_timeout", stats.n_timeout},
                     {"n_compile_error", stats.n_compile_error}};
}
inline void from_json(const nlohmann::json& j, GroupStats& stats) {
  using namespace detail::json_io;
  const json& object = require_object(j, "GroupStats");
  constexpr std::int64_t max = std::numeric_limits<int>::max();
  GroupStats read;
  read.size = static_cast<int>(read_int_field(object, "GroupStats", "size", 0, max));
  read.n_correct = static_cast<int>(read_int_field(object, "GroupStats", "n_correct", 0, max));
  read.n_wrong_answer = static_cast<int>(read_int_field(object, "GroupStats", "n_wrong_answer", 0, max));
  read.n_runtime_error = static_cast<int>(read_int_field(object, "GroupStats", "n_runtime_error", 0, max));
  read.n_timeout = static_cast<int>(read_int_field(object, "GroupStats", "n_timeout", 0, max));
  read.n_compile_error = static_cast<int>(read_int_field(object, "GroupStats", "n_compile_error", 0, max));
  stats = read;
}

inline void to_json(nlohmann::json& j, const StepMetrics& metrics) {
  nlohmann::json by_expansion = nlohmann::json::object();
  for (Expansion expansion : all_expansions)
    by_expansion[std::string(to_string(expansion))] = metrics.groups(expansion);
  nlohmann::json by_reason = nlohmann::json::object();
  for (std::size_t i = 0; i < gate_reason_count; ++i) {
    const auto reason = static_cast<GateReason>(i);
    by_reason[std::string(to_string(reason))] = metrics.groups(reason);
  }
  j = nlohmann::json{{"step", metrics.step},
                     {"tasks", metrics.tasks},
                     {"group_size", metrics.group_size},
                     {"max_turns", metrics.max_turns},
                     {"trajectories", metrics.trajectories},
                     {"accuracy_at_turn", metrics.accuracy_at_turn},
                     {"groups_by_expansion", by_expansion},
                     {"groups_by_reason", by_reason},
                     {"evaluations", metrics.evaluations},
                     {"evaluations_per_turn", metrics.evaluations_per_turn},
                     {"policy_errors", metrics.policy_errors},
                     {"environment_errors", metrics.environment_errors},
                     {"environment_retries", metrics.environment_retries},
                     {"masked_trajectories", metrics.masked_trajectories},
                     {"completion_tokens", metrics.completion_tokens},
                     {"feedback_tokens", metrics.feedback_tokens},
                     {"advantage_rms", metrics.advantage_rms},
                     {"solved_later", metrics.solved_later},
                     {"solved_later_negative", metrics.solved_later_negative},
                     {"solved_later_negative_share", metrics.solved_later_negative_share()},
                     {"wall_seconds", metrics.wall_seconds}};
}

inline void from_json(const nlohmann::json& j, StepMetrics& metrics) {
  using namespace detail::json_io;
  const json& object = require_object(j, "StepMetrics");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  StepMetrics read;
  const json& step = *member(object, "StepMetrics", "step", true);
  if (!step.is_number_unsigned() && !(step.is_number_integer() && step.get<std::int64_t>() >= 0)) {
    fail("StepMetrics.step", "expected an integer >= 0", step);
  }
  read.step = step.get<std::uint64_t>();
  read.tasks = static_cast<int>(read_int_field(object, "StepMetrics", "tasks", 0, int_max));
  read.group_size = static_cast<int>(read_int_field(object, "StepMetrics", "group_size", 0, int_max));
  read.max_turns = static_cast<int>(read_int_field(object, "StepMetrics", "max_turns", 0, int_max));
  read.trajectories = static_cast<int>(read_int_field(object, "StepMetrics", "trajectories", 0, int_max));
  const json& accuracy = *member(object, "StepMetrics", "accuracy_at_turn", true);
  if (!accuracy.is_array()) fail("StepMetrics.accuracy_at_turn", "expected an array of numbers", accuracy);
  for (const json& value : accuracy) {
    if (!value.is_number()) fail("StepMetrics.accuracy_at_turn", "expected an array of numbers", accuracy);
    read.accuracy_at_turn.push_back(value.get<double>());
  }
  const auto read_counts = [&](const char* key, auto& counts, auto name_of) {
    const json& table = *member(object, "StepMetrics", key, true);
    if (!table.is_object()) fail(field_name("StepMetrics", key), "expected an object of counts", table);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const auto found = table.find(std::string(name_of(i)));
      if (found == table.end()) continue;
      counts[i] =
          static_cast<int>(read_integer(*found, detail::concat("StepMetrics.", key, ".", name_of(i)), 0, int_max));
    }
  };
  read_counts("groups_by_expansion", read.groups_by_expansion,
              [](std::size_t i) { return to_string(static_cast<Expansion>(i)); });
  read_counts("groups_by_reason", read.groups_by_reason,
              [](std::size_t i) { return to_string(static_cast<GateReason>(i)); });
  read.evaluations = read_int_field(object, "StepMetrics", "evaluations", 0, big);
  const json& per_turn = *member(object, "StepMetrics", "evaluations_per_turn", true);
  if (!per_turn.is_array()) fail("StepMetrics.evaluations_per_turn", "expected an array of integers", per_turn);
  for (const json& value : per_turn)
    read.evaluations_per_turn.push_back(read_integer(value, "StepMetrics.evaluations_per_turn", 0, big));
  read.policy_errors = read_int_field(object, "StepMetrics", "policy_errors", 0, big);
  read.environment_errors = read_int_field(object, "StepMetrics", "environment_errors", 0, big);
  if (member(object, "StepMetrics", "environment_retries", false) != nullptr)
    read.environment_retries = read_int_field(object, "StepMetrics", "environment_retries", 0, big);
  if (member(object, "StepMetrics", "masked_trajectories", false) != nullptr) {
    read.masked_trajectories =
        static_cast<int>(read_int_field(object, "StepMetrics", "masked_trajectories", 0, int_max));
  }
  read.completion_tokens =
      static_cast<std::uint64_t>(read_int_field(object, "StepMetrics", "completion_tokens", 0, big));
  read.feedback_tokens = static_cast<std::uint64_t>(read_int_field(object, "StepMetrics", "feedback_tokens", 0, big));
  if (const json* rms = member(object, "StepMetrics", "advantage_rms", false)) {
    if (!rms->is_number() || !(rms->get<double>() >= 0.0))
      fail("StepMetrics.advantage_rms", "expected a number >= 0", *rms);
    read.advantage_rms = rms->get<double>();
  }
  if (member(object, "StepMetrics", "solved_later", false) != nullptr) {
    read.solved_later = static_cast<int>(read_int_field(object, "StepMetrics", "solved_later", 0, int_max));
  }
  if (member(object, "StepMetrics", "solved_later_negative", false) != nullptr) {
    read.solved_later_negative =
        static_cast<int>(read_int_field(object, "StepMetrics", "solved_later_negative", 0, read.solved_later));
  }
  const json& wall = *member(object, "StepMetrics", "wall_seconds", true);
  if (!wall.is_number()) fail("StepMetrics.wall_seconds", "expected a number", wall);
  read.wall_seconds = wall.get<double>();
  metrics = std::move(read);
}

// One line of a JSON-lines log: the metrics as compact JSON, newline-terminated.
inline std::string to_json_line(const StepMetrics& metrics) { return nlohmann::json(metrics).dump() + '\n'; }

}  // namespace leap
