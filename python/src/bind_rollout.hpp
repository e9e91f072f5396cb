// SPDX-License-Identifier: Apache-2.0
// The rollout loop's parts for leap.episode, Python's asynchronous counterpart of leap::run_step:
//
//   GateDecision, AlwaysExpand, NeverExpand, SeverityAwareGate,   the gates beside FailBandGate (bound in
//   BudgetedGate, DifficultyTracker, StepMetrics                  bind_types.hpp) and the step's metrics
//   _assess_groups(gate, stats, task_ids, max_turns)              the gate's decisions, by assess_groups
//   _sample_seed(seed, step, task_id, sample, turn)               SampleKey::seed, as run_step derives it
//   _summarize(verdicts, speedups, tokens)                        one trajectory's Outcome
//   _replay_step(...)                                             run_step itself over the recorded turns
//
// Python runs the turns (the policy and environment are coroutines the C++ loop cannot await). What a
// step computes from them, outcomes, advantages, turn credit and metrics, comes from leap::run_step run
// again over the recorded turns by a replaying policy and environment, with the gate's recorded
// decisions: no line of the loop's arithmetic is written twice, so the two cannot drift apart. The
// replay also checks that run_step asked for exactly the turns Python ran, which proves the schedule.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "array_views.hpp"
#include "bind_types.hpp"
#include "leap/advantage_estimator.hpp"
#include "leap/difficulty_tracker.hpp"
#include "leap/gate.hpp"
#include "leap/gate_policies.hpp"
#include "leap/rollout.hpp"
#include "leap/step_metrics.hpp"
#include "leap/trajectory.hpp"

namespace leap::python {

namespace rollout_detail {

using BandBudget = BudgetedGate<FailBandGate>;

// Calls fn with the C++ gate behind a Python object (by reference: a DifficultyTracker keeps state).
template <class Fn>
decltype(auto) with_gate(const py::handle& gate, Fn&& fn) {
  if (py::isinstance<FailBandGate>(gate)) return fn(gate.cast<FailBandGate&>());
  if (py::isinstance<SeverityAwareGate>(gate)) return fn(gate.cast<SeverityAwareGate&>());
  if (py::isinstance<AlwaysExpand>(gate)) return fn(gate.cast<AlwaysExpand&>());
  if (py::isinstance<NeverExpand>(gate)) return fn(gate.cast<NeverExpand&>());
  if (py::isinstance<BandBudget>(gate)) return fn(gate.cast<BandBudget&>());
  if (py::isinstance<DifficultyTracker>(gate)) return fn(gate.cast<DifficultyTracker&>());
  throw py::type_error(
      detail::concat("leap: ", py::repr(gate).cast<std::string>(),
                     " is not a gate; pass one of leap.FailBandGate, leap.SeverityAwareGate, "
                     "leap.AlwaysExpand, leap.NeverExpand, leap.BudgetedGate, leap.DifficultyTracker"));
}

// The recorded turns of a step, in trajectory order (trajectory = task_index * G + sample), then turn order.
struct Recorded {
  std::vector<int> num_turns;
  std::vector<std::size_t> first_turn;  // offset of each trajectory's turn 1 in the columns below
  std::vector<std::uint8_t> verdicts;
  std::vector<double> speedups;
  std::vector<std::uint32_t> tokens;
  std::vector<std::uint32_t> feedback_tokens;
  std::vector<std::uint8_t> errors;  // 0 none, 1 the policy raised, 2 the environment failed on every attempt
  std::vector<int> retries;          // environment calls made again after an environment failure, per turn
  std::vector<int> asked;            // turns run_step asked for, per trajectory
  std::size_t extra_trajectory = 0;  // the first turn run_step asked for that Python did not run
  int extra_turn = 0;                // (0: none)
};

struct ReplayTask {
  std::uint64_t id = 0;
};

// Thrown into run_step to reproduce a recorded policy failure; its counters and runtime_error turn follow.
struct ReplayedFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReplayPolicy {
  Recorded* recorded;
  std::size_t group_size;
  Completion<> complete(const ReplayTask&, const Trajectory<>&, const SampleKey& key) const {
    const std::size_t trajectory = key.task_index * group_size + static_cast<std::size_t>(key.sample);
    const int turn = key.turn;
    ++recorded->asked[trajectory];
    if (turn > recorded->num_turns[trajectory]) {
      if (recorded->extra_turn == 0) {
        recorded->extra_trajectory = trajectory;
        recorded->extra_turn = turn;
      }
      throw ReplayedFailure("out of script");
    }
    const std::size_t at = recorded->first_turn[trajectory] + static_cast<std::size_t>(turn - 1);
    if (recorded->errors[at] == 1) throw ReplayedFailure("the policy raised");
    return Completion<>{NoPayload{}, recorded->tokens[at]};
  }
};

struct ReplayEnvironment {
  Recorded* recorded;
  std::size_t group_size;
  Evaluation evaluate(const ReplayTask&, const Completion<>&, const SampleKey& key) const {
    const std::size_t trajectory = key.task_index * group_size + static_cast<std::size_t>(key.sample);
    const std::size_t at = recorded->first_turn[trajectory] + static_cast<std::size_t>(key.turn - 1);
    // The recorded environment failures, attempt by attempt: the first `retries` attempts failed, and the
    // last one too when the turn has no verdict.
    if (key.attempt < recorded->retries[at] || recorded->errors[at] == 2)
      return Evaluation::environment_failed("the environment failed");
    return Evaluation{static_cast<Verdict>(recorded->verdicts[at]), recorded->speedups[at], std::string(),
                      recorded->feedback_tokens[at]};
  }
};

// The decisions the step's gate took after turn 1, given back to run_step unchanged (a stateful gate
// must not observe the step twice).
struct RecordedGate {
  const std::vector<GateDecision>* decisions;
  void assess_step(std::span<const GroupCandidate> groups, std::span<GateDecision> out) const {
    for (std::size_t i = 0; i < groups.size(); ++i) out[i] = (*decisions)[groups[i].index];
  }
};

inline py::tuple replay_step(const std::vector<std::uint64_t>& task_ids, int group_size, int max_turns, double gamma,
                             std::uint64_t seed, std::uint64_t step, const std::vector<GateDecision>& decisions,
                             Recorded recorded, const KernelOrder& order, AdvantageNormalization normalization,
                             double epsilon, double wall_seconds, int environment_retries) {
  const RolloutOptions options{group_size, max_turns, gamma, seed, step, environment_retries};
  options.validate();
  const std::size_t count = task_ids.size() * static_cast<std::size_t>(group_size);
  require_length("num_turns", recorded.num_turns.size(), "trajectories", count);
  require_length("decisions", decisions.size(), "tasks", task_ids.size());
  recorded.first_turn.resize(count);
  std::size_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (recorded.num_turns[i] < 1 || recorded.num_turns[i] > max_turns) {
      value_error("num_turns[", i, "] (", recorded.num_turns[i], ") must lie in [1, max_turns (", max_turns, ")]");
    }
    recorded.first_turn[i] = total;
    total += static_cast<std::size_t>(recorded.num_turns[i]);
  }
  for (const auto* column : {&recorded.verdicts, &recorded.errors})
    require_length("a turn column", column->size(), "turns", total);
  require_length("speedups", recorded.speedups.size(), "turns", total);
  require_length("tokens", recorded.tokens.size(), "turns", total);
  require_length("feedback_tokens", recorded.feedback_tokens.size(), "turns", total);
  require_length("retries", recorded.retries.size(), "turns", total);
  for (std::size_t t = 0; t < total; ++t) {
    if (recorded.verdicts[t] > static_cast<std::uint8_t>(Verdict::correct))
      value_error("verdicts[", t, "] is not a Verdict");
    if (recorded.errors[t] > 2) value_error("errors[", t, "] (", int{recorded.errors[t]}, ") is not 0, 1 or 2");
    const int most = recorded.errors[t] == 1 ? 0 : environment_retries;
    if (recorded.retries[t] < 0 || recorded.retries[t] > most ||
        (recorded.errors[t] == 2 && recorded.retries[t] != most))
      value_error("retries[", t, "] (", recorded.retries[t], ") does not fit errors[", t, "] (",
                  int{recorded.errors[t]}, ") and environment_retries (", environment_retries, ")");
  }
  recorded.asked.assign(count, 0);

  std::vector<ReplayTask> tasks(task_ids.size());
  for (std::size_t t = 0; t < tasks.size(); ++t) tasks[t].id = task_ids[t];
  const auto G = static_cast<std::size_t>(group_size);
  StepResult<> result;
  {
    py::gil_scoped_release release;
    result = run_step(tasks, ReplayPolicy{&recorded, G}, ReplayEnvironment{&recorded, G}, RecordedGate{&decisions},
                      RankAdvantage<KernelOrder>{order, normalization, epsilon}, InlineExecutor{}, options);
  }
  if (recorded.extra_turn != 0) {
    throw std::logic_error(detail::concat("leap: run_step asks for turn ", recorded.extra_turn, " of trajectory ",
                                          recorded.extra_trajectory,
                                          ", which the episode runner did not run (a bug "
                                          "in leap.episode: please report it)"));
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (recorded.asked[i] != recorded.num_turns[i]) {
      throw std::logic_error(detail::concat("leap: the episode runner ran ", recorded.num_turns[i],
                                            " turns of trajectory ", i, " where run_step runs ", recorded.asked[i],
                                            " (a bug in leap.episode: please report it)"));
    }
  }
  result.metrics.wall_seconds = wall_seconds;
  std::vector<double> per_turn(result.samples.size());
  for (std::size_t s = 0; s < result.samples.size(); ++s) per_turn[s] = result.samples[s].advantage;
  return py::make_tuple(std::move(result.outcomes), std::move(result.advantages), std::move(per_turn),
                        std::move(result.turn1_stats), std::move(result.metrics));
}

}  // namespace rollout_detail

inline void bind_rollout(py::module_& m) {
  using namespace rollout_detail;

  py::class_<GateDecision>(m, "GateDecision", "A gate's decision on one group and the reason it was taken.")
      .def(py::init([](Expansion expansion, GateReason reason) {
             return GateDecision{expansion, reason};
           }),
           py::arg("expansion"), py::arg("reason"))
      .def_readonly("expansion", &GateDecision::expansion)
      .def_readonly("reason", &GateDecision::reason)
      .def_property_readonly("expands", &GateDecision::expands, "True when the group gets debugging turns")
      .def("__eq__",
           [](const GateDecision& a, const py::object& b) {
             return py::isinstance<GateDecision>(b) && a == b.cast<const GateDecision&>();
           })
      .def("__hash__",
           [](const GateDecision& d) {
             return static_cast<std::size_t>(d.expansion) * 64 + static_cast<std::size_t>(d.reason);
           })
      .def("__repr__", [](const GateDecision& d) {
        return detail::concat("leap.GateDecision(Expansion.", to_string(d.expansion), ", GateReason.",
                              to_string(d.reason), ")");
      });

  py::class_<AlwaysExpand>(m, "AlwaysExpand", "Expands every group: the unpruned multi-turn baseline.")
      .def(py::init<>())
      .def("assess", &AlwaysExpand::assess, py::arg("stats"))
      .def("__repr__", [](const AlwaysExpand&) { return "leap.AlwaysExpand()"; });
  py::class_<NeverExpand>(m, "NeverExpand", "Expands nothing: single-turn training (prune_budget, never_expand).")
      .def(py::init<>())
      .def("assess", &NeverExpand::assess, py::arg("stats"))
      .def("__repr__", [](const NeverExpand&) { return "leap.NeverExpand()"; });

  py::class_<SeverityAwareGate>(m, "SeverityAwareGate",
                                "The fail band, but above it a group is pruned only when compile errors make up "
                                "more than compile_error_share of its failures; otherwise it is expanded.")
      .def(py::init([](const FailBandGate& band, double compile_error_share) {
             SeverityAwareGate gate{band, compile_error_share};
             gate.validate();
             return gate;
           }),
           py::arg("band"), py::arg("compile_error_share") = 0.5)
      .def_static("leap_default", &SeverityAwareGate::leap_default, py::arg("group_size"))
      .def_readonly("band", &SeverityAwareGate::band)
      .def_readonly("compile_error_share", &SeverityAwareGate::compile_error_share)
      .def("assess", &SeverityAwareGate::assess, py::arg("stats"))
      .def("__repr__", [](const SeverityAwareGate& g) {
        return detail::concat("leap.SeverityAwareGate(band=leap.FailBandGate(t_min=", g.band.t_min,
                              ", t_max=", g.band.t_max, "), compile_error_share=", repr_double(g.compile_error_share),
                              ")");
      });

  py::class_<BandBudget>(m, "BudgetedGate",
                         "A step gate: the band proposes, and the groups with the most expected repairs are "
                         "expanded while they fit max_groups / max_evaluations (negative: no limit); the rest "
                         "are pruned with prune_budget (over_budget). Needs the whole step: not for GroupCoordinator.")
      .def(py::init([](const FailBandGate& band, std::int64_t max_groups, std::int64_t max_evaluations) {
             BandBudget gate{band, max_groups, max_evaluations, RepairOdds{}};
             gate.validate();
             return gate;
           }),
           py::arg("band"), py::kw_only(), py::arg("max_groups") = -1, py::arg("max_evaluations") = -1)
      .def_readonly("band", &BandBudget::inner)
      .def_readonly("max_groups", &BandBudget::max_groups)
      .def_readonly("max_evaluations", &BandBudget::max_evaluations)
      .def("__repr__", [](const BandBudget& g) {
        return detail::concat("leap.BudgetedGate(band=leap.FailBandGate(t_min=", g.inner.t_min,
                              ", t_max=", g.inner.t_max, "), max_groups=", g.max_groups,
                              ", max_evaluations=", g.max_evaluations, ")");
      });

  py::class_<DifficultyTracker>(m, "DifficultyTracker",
                                "A step gate that decides from each task's smoothed turn-1 failure rate across steps "
                                "(tasks are told apart by task id). Keeps state: use one tracker for a whole run.")
      .def(py::init([](double smoothing, double easy_below, double hopeless_at, int min_history) {
             return DifficultyTracker(DifficultyTrackerOptions{smoothing, easy_below, hopeless_at, min_history});
           }),
           py::kw_only(), py::arg("smoothing") = DifficultyTrackerOptions{}.smoothing,
           py::arg("easy_below") = DifficultyTrackerOptions{}.easy_below,
           py::arg("hopeless_at") = DifficultyTrackerOptions{}.hopeless_at,
           py::arg("min_history") = DifficultyTrackerOptions{}.min_history)
      .def(
          "fail_rate",
          [](const DifficultyTracker& tracker, std::uint64_t task_id) -> py::object {
            const auto found = tracker.difficulty(task_id);
            return found ? py::object(py::float_(found->fail_rate)) : py::object(py::none());
          },
          py::arg("task_id"), "the task's smoothed turn-1 failure rate, None when never seen")
      .def("__len__", &DifficultyTracker::size);

  py::class_<StepMetrics>(m, "StepMetrics", "What one rollout step did and spent (leap::StepMetrics).")
      .def_readonly("step", &StepMetrics::step)
      .def_readonly("tasks", &StepMetrics::tasks)
      .def_readonly("group_size", &StepMetrics::group_size)
      .def_readonly("max_turns", &StepMetrics::max_turns)
      .def_readonly("trajectories", &StepMetrics::trajectories)
      .def_readonly("accuracy_at_turn", &StepMetrics::accuracy_at_turn, "[t - 1]: fraction solved at or before turn t")
      .def_readonly("evaluations", &StepMetrics::evaluations)
      .def_readonly("evaluations_per_turn", &StepMetrics::evaluations_per_turn)
      .def_readonly("policy_errors", &StepMetrics::policy_errors)
      .def_readonly("environment_errors", &StepMetrics::environment_errors,
                    "environment calls that gave no verdict (raised, or environment_failure), every attempt")
      .def_readonly("environment_retries", &StepMetrics::environment_retries,
                    "environment calls made again after an environment failure")
      .def_readonly("masked_trajectories", &StepMetrics::masked_trajectories,
                    "samples masked: no attempt gave a verdict (not ranked, advantage 0, left out of the loss)")
      .def_readonly("completion_tokens", &StepMetrics::completion_tokens)
      .def_readonly("feedback_tokens", &StepMetrics::feedback_tokens)
      .def_readonly("advantage_rms", &StepMetrics::advantage_rms)
      .def_readonly("solved_later", &StepMetrics::solved_later)
      .def_readonly("solved_later_negative", &StepMetrics::solved_later_negative)
      .def_readonly("wall_seconds", &StepMetrics::wall_seconds)
      .def("groups", py::overload_cast<Expansion>(&StepMetrics::groups, py::const_), py::arg("expansion"),
           "groups the gate gave this expansion")
      .def("groups", py::overload_cast<GateReason>(&StepMetrics::groups, py::const_), py::arg("reason"),
           "groups the gate decided for this reason")
      .def("accuracy_at", &StepMetrics::accuracy_at, py::arg("turn"))
      .def(
          "as_dict",
          [](const StepMetrics& s) {
            py::dict by_expansion;
            for (Expansion e : all_expansions) by_expansion[py::str(std::string(to_string(e)))] = s.groups(e);
            py::dict by_reason;
            for (std::size_t r = 0; r < gate_reason_count; ++r) {
              by_reason[py::str(std::string(to_string(static_cast<GateReason>(r))))] =
                  s.groups(static_cast<GateReason>(r));
            }
            py::dict d;
            d["step"] = s.step;
            d["tasks"] = s.tasks;
            d["group_size"] = s.group_size;
            d["max_turns"] = s.max_turns;
            d["trajectories"] = s.trajectories;
            d["accuracy_at_turn"] = s.accuracy_at_turn;
            d["groups_by_expansion"] = by_expansion;
            d["groups_by_reason"] = by_reason;
            d["evaluations"] = s.evaluations;
            d["evaluations_per_turn"] = s.evaluations_per_turn;
            d["policy_errors"] = s.policy_errors;
            d["environment_errors"] = s.environment_errors;
            d["environment_retries"] = s.environment_retries;
            d["masked_trajectories"] = s.masked_trajectories;
            d["completion_tokens"] = s.completion_tokens;
            d["feedback_tokens"] = s.feedback_tokens;
            d["advantage_rms"] = s.advantage_rms;
            d["solved_later"] = s.solved_later;
            d["solved_later_negative"] = s.solved_later_negative;
            d["wall_seconds"] = s.wall_seconds;
            return d;
          },
          "the metrics as a plain dict, for a logger");

  m.def(
      "_validate_gate", [](const py::object& gate) { with_gate(gate, [](auto& g) { detail::validate_if_able(g); }); },
      py::arg("gate"));
  m.def(
      "_is_group_gate",
      [](const py::object& gate) {
        return with_gate(gate, [](auto& g) { return group_gate<std::remove_cvref_t<decltype(g)>>; });
      },
      py::arg("gate"), "whether the gate decides one group at a time (not a step gate)");
  m.def(
      "_assess_groups",
      [](const py::object& gate, const std::vector<GroupStats>& stats, const std::vector<std::uint64_t>& task_ids,
         int max_turns) {
        require_length("task_ids", task_ids.size(), "stats", stats.size());
        std::vector<GroupCandidate> candidates(stats.size());
        for (std::size_t i = 0; i < stats.size(); ++i) {
          candidates[i] =
              GroupCandidate{i, task_ids[i], stats[i], static_cast<std::int64_t>(stats[i].n_fail()) * (max_turns - 1)};
        }
        std::vector<GateDecision> out(stats.size());
        with_gate(gate, [&](auto& g) {
          detail::validate_if_able(g);
          assess_groups(g, std::span<const GroupCandidate>(candidates), std::span<GateDecision>(out));
        });
        return out;
      },
      py::arg("gate"), py::arg("stats"), py::arg("task_ids"), py::arg("max_turns"),
      "The gate's decisions on a step's groups, as run_step takes them (GroupCandidate per group).");
  m.def(
      "_validate_rollout_options",
      [](int group_size, int max_turns, double gamma) {
        RolloutOptions{group_size, max_turns, gamma, 0, 0}.validate();
      },
      py::arg("group_size"), py::arg("max_turns"), py::arg("gamma"));
  m.def("_sample_seed", &detail::sample_seed, py::arg("seed"), py::arg("step"), py::arg("task_id"), py::arg("sample"),
        py::arg("turn"), "SampleKey::seed as run_step derives it");
  m.def(
      "_summarize",
      [](const std::vector<Verdict>& verdicts, const std::vector<double>& speedups,
         const std::vector<std::uint32_t>& tokens, const std::vector<bool>& environment_failures) {
        require_length("speedups", speedups.size(), "verdicts", verdicts.size());
        require_length("tokens", tokens.size(), "verdicts", verdicts.size());
        if (!environment_failures.empty())
          require_length("environment_failures", environment_failures.size(), "verdicts", verdicts.size());
        Trajectory<> trajectory;
        trajectory.turns.resize(verdicts.size());
        for (std::size_t t = 0; t < verdicts.size(); ++t) {
          trajectory.turns[t].verdict = verdicts[t];
          trajectory.turns[t].speedup = speedups[t];
          trajectory.turns[t].tokens = tokens[t];
          trajectory.turns[t].environment_failure = !environment_failures.empty() && environment_failures[t];
        }
        return summarize(trajectory);
      },
      py::arg("verdicts"), py::arg("speedups"), py::arg("tokens"),
      py::arg("environment_failures") = std::vector<bool>{},
      "one trajectory's Outcome (leap::summarize); a turn without a verdict adds its tokens only");
  m.def(
      "_replay_step",
      [](const std::vector<std::uint64_t>& task_ids, int group_size, int max_turns, double gamma, std::uint64_t seed,
         std::uint64_t step, const std::vector<GateDecision>& decisions, std::vector<int> num_turns,
         std::vector<std::uint8_t> verdicts, std::vector<double> speedups, std::vector<std::uint32_t> tokens,
         std::vector<std::uint32_t> feedback_tokens, std::vector<std::uint8_t> errors, const KernelOrder& order,
         AdvantageNormalization normalization, double epsilon, double wall_seconds, std::vector<int> retries,
         int environment_retries) {
        Recorded recorded;
        recorded.num_turns = std::move(num_turns);
        recorded.verdicts = std::move(verdicts);
        recorded.speedups = std::move(speedups);
        recorded.tokens = std::move(tokens);
        recorded.feedback_tokens = std::move(feedback_tokens);
        recorded.errors = std::move(errors);
        recorded.retries = std::move(retries);
        return replay_step(task_ids, group_size, max_turns, gamma, seed, step, decisions, std::move(recorded), order,
                           normalization, epsilon, wall_seconds, environment_retries);
      },
      py::arg("task_ids"), py::arg("group_size"), py::arg("max_turns"), py::arg("gamma"), py::arg("seed"),
      py::arg("step"), py::arg("decisions"), py::arg("num_turns"), py::arg("verdicts"), py::arg("speedups"),
      py::arg("tokens"), py::arg("feedback_tokens"), py::arg("errors"), py::arg("order"), py::arg("normalization"),
      py::arg("epsilon"), py::arg("wall_seconds"), py::arg("retries"), py::arg("environment_retries"),
      "leap::run_step over recorded turns: (outcomes, advantages, per-turn advantages, turn-1 stats, metrics).");
}

}  // namespace leap::python
