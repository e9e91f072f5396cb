// SPDX-License-Identifier: Apache-2.0
// The core's value types in Python: Verdict, Outcome, KernelOrder (every field and preset the C++
// struct has, with its defaults read from KernelOrder{}), Expansion, GateReason, GroupStats and
// FailBandGate with a vectorised decide over a batch of groups, AdvantageNormalization.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "array_views.hpp"
#include "leap/advantage_normalization.hpp"
#include "leap/gate.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/verdict.hpp"

namespace leap::python {

// Builds a T from keyword arguments alone: starts from T{} (the C++ defaults) and sets each named
// field through its Python property, so types are checked and an unknown name is an error.
template <class T>
T from_keywords(const py::kwargs& fields, const std::vector<std::string>& names, const char* type_name) {
  py::object instance = py::cast(T{});
  for (const auto& [key, value] : fields) {
    const std::string name = py::str(key);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw py::type_error(detail::concat("leap.", type_name, " has no field '", name, "'; its fields are ", known));
    }
    py::setattr(instance, key, value);
  }
  return instance.cast<T>();
}

inline std::string repr_double(double value) { return py::repr(py::float_(value)).cast<std::string>(); }

inline void bind_types(py::module_& m) {
  py::enum_<Verdict>(m, "Verdict",
                     "How far one candidate kernel got: compile -> run -> check (least to most advanced).")
      .value("compile_error", Verdict::compile_error)
      .value("runtime_error", Verdict::runtime_error)
      .value("timeout", Verdict::timeout)
      .value("wrong_answer", Verdict::wrong_answer)
      .value("correct", Verdict::correct);

  py::class_<Outcome>(m, "Outcome", "The result of one trajectory, as the ranking sees it.")
      .def(py::init([](int solved_turn, Verdict best_verdict, double speedup, std::uint32_t tokens) {
             return Outcome{solved_turn, best_verdict, speedup, tokens};
           }),
           py::kw_only(), py::arg("solved_turn") = Outcome{}.solved_turn,
           py::arg("best_verdict") = Outcome{}.best_verdict, py::arg("speedup") = Outcome{}.speedup,
           py::arg("tokens") = Outcome{}.tokens)
      .def_readwrite("solved_turn", &Outcome::solved_turn, "1-based turn of the first correct kernel; 0 = never solved")
      .def_readwrite("best_verdict", &Outcome::best_verdict, "most advanced verdict any turn reached")
      .def_readwrite("speedup", &Outcome::speedup, "reference time / candidate time; NaN = unknown")
      .def_readwrite("tokens", &Outcome::tokens, "completion tokens over all turns")
      .def("__eq__", [](const Outcome& a, const Outcome& b) { return a == b; })
      .def("__repr__", [](const Outcome& o) {
        return detail::concat("leap.Outcome(solved_turn=", o.solved_turn, ", best_verdict=Verdict.",
                              to_string(o.best_verdict), ", speedup=", repr_double(o.speedup), ", tokens=", o.tokens,
                              ")");
      });

  const std::vector<std::string> order_fields = {
      "by_turn", "by_severity", "speedup_tolerance", "token_tolerance", "tokens_only_when_solved", "turn_weight"};
  py::class_<KernelOrder> order(m, "KernelOrder",
                                "The order that decides each match of the tournament. KernelOrder() is the C++ "
                                "default; set fields by keyword, e.g. KernelOrder(speedup_tolerance=0.05).");
  order.def_readwrite("by_turn", &KernelOrder::by_turn, "both solved: the earlier solved_turn wins")
      .def_readwrite("by_severity", &KernelOrder::by_severity,
                     "both unsolved: wrong_answer > timeout = runtime_error > compile_error")
      .def_readwrite("speedup_tolerance", &KernelOrder::speedup_tolerance,
                     ">= 0 turns the key on: higher speedup wins unless max <= (1 + tol) * min; an unknown "
                     "speedup (NaN, 0 or negative) loses to a known one")
      .def_readwrite("token_tolerance", &KernelOrder::token_tolerance,
                     ">= 0 turns the key on: fewer tokens win unless max <= (1 + tol) * min")
      .def_readwrite("tokens_only_when_solved", &KernelOrder::tokens_only_when_solved,
                     "the token key applies only when both are solved")
      .def_readwrite("turn_weight", &KernelOrder::turn_weight,
                     "in [0, 1]: what a match decided by the turn is worth (1 as published, 0: all successes tie)");
  order
      .def(py::init([order_fields](const py::kwargs& fields) {
        return from_keywords<KernelOrder>(fields, order_fields, "KernelOrder");
      }))
      .def_static("turns_only", &KernelOrder::turns_only,
                  "LEAP's order as published: solved beats unsolved, an "
                  "earlier turn beats a later one");
  order
      .def_static("with_speedup", &KernelOrder::with_speedup, py::arg("tolerance") = 0.05,
                  "turn, then the speedup band")
      .def_static("with_speedup_and_tokens", &KernelOrder::with_speedup_and_tokens, py::arg("speedup_tolerance") = 0.05,
                  py::arg("token_tolerance") = 0.0, "turn, then the speedup band, then fewer tokens");
  order.def("compare", &KernelOrder::compare, py::arg("a"), py::arg("b"), "+1: a beats b, -1: b beats a, 0: tie")
      .def("match", &KernelOrder::match, py::arg("a"), py::arg("b"),
           "what the match is worth to a: +-1, +-turn_weight when the turn decides it, 0 for a tie")
      .def("validate", &KernelOrder::validate, "raises ValueError when a setting is invalid (a NaN tolerance)")
      .def("__eq__",
           [order_fields](const py::object& a, const py::object& b) {
             if (!py::isinstance<KernelOrder>(b)) return false;
             for (const auto& name : order_fields) {
               if (!a.attr(name.c_str()).equal(b.attr(name.c_str()))) return false;
             }
             return true;
           })
      .def("__repr__", [order_fields](const py::object& self) {
        std::string text = "leap.KernelOrder(";
        for (std::size_t i = 0; i < order_fields.size(); ++i) {
          text += (i ? ", " : "") + order_fields[i] + "=" +
                  py::repr(self.attr(order_fields[i].c_str())).cast<std::string>();
        }
        return text + ")";
      });

  py::enum_<AdvantageNormalization>(m, "AdvantageNormalization", "Optional rescaling of a batch of advantages.")
      .value("none", AdvantageNormalization::none)
      .value("group_std", AdvantageNormalization::group_std)
      .value("batch_rms", AdvantageNormalization::batch_rms);

  py::enum_<Expansion>(m, "Expansion", "What happens to a group after turn 1.")
      .value("expand", Expansion::expand)
      .value("prune_easy", Expansion::prune_easy)
      .value("prune_catastrophic", Expansion::prune_catastrophic)
      .value("prune_budget", Expansion::prune_budget);

  py::enum_<GateReason> reasons(m, "GateReason", "Why a gate decided what it did.");
  for (std::size_t r = 0; r < gate_reason_count; ++r) {
    const auto reason = static_cast<GateReason>(r);
    reasons.value(std::string(to_string(reason)).c_str(), reason);
  }

  py::class_<GroupStats>(m, "GroupStats", "Turn-1 verdict counts of one group.")
      .def(py::init([](int size, int n_correct, int n_wrong_answer, int n_runtime_error, int n_timeout,
                       int n_compile_error) {
             return GroupStats{size, n_correct, n_wrong_answer, n_runtime_error, n_timeout, n_compile_error};
           }),
           py::kw_only(), py::arg("size") = 0, py::arg("n_correct") = 0, py::arg("n_wrong_answer") = 0,
           py::arg("n_runtime_error") = 0, py::arg("n_timeout") = 0, py::arg("n_compile_error") = 0)
      .def_readwrite("size", &GroupStats::size)
      .def_readwrite("n_correct", &GroupStats::n_correct)
      .def_readwrite("n_wrong_answer", &GroupStats::n_wrong_answer)
      .def_readwrite("n_runtime_error", &GroupStats::n_runtime_error)
      .def_readwrite("n_timeout", &GroupStats::n_timeout)
      .def_readwrite("n_compile_error", &GroupStats::n_compile_error)
      .def_property_readonly("n_fail", &GroupStats::n_fail)
      .def("__eq__", [](const GroupStats& a, const GroupStats& b) { return a == b; })
      .def("__repr__", [](const GroupStats& s) {
        return detail::concat("leap.GroupStats(size=", s.size, ", n_correct=", s.n_correct,
                              ", n_wrong_answer=", s.n_wrong_answer, ", n_runtime_error=", s.n_runtime_error,
                              ", n_timeout=", s.n_timeout, ", n_compile_error=", s.n_compile_error, ")");
      });

  m.def(
      "group_stats", [](const std::vector<Verdict>& turn1) { return group_stats(turn1); }, py::arg("turn1"),
      "Counts the turn-1 verdicts of one group.");

  py::class_<FailBandGate>(m, "FailBandGate",
                           "The paper's gate: with n_fail turn-1 failures, n_fail < t_min prunes as easy, "
                           "n_fail > t_max as catastrophic, otherwise the group is expanded.")
      .def(py::init([](int t_min, int t_max) {
             FailBandGate gate{t_min, t_max};
             gate.validate();
             return gate;
           }),
           py::arg("t_min"), py::arg("t_max"))
      .def_readonly("t_min", &FailBandGate::t_min)
      .def_readonly("t_max", &FailBandGate::t_max)
      .def_static("leap_default", &FailBandGate::leap_default, py::arg("group_size"),
                  "LEAP's best ablation for groups of G: t_min = ceil(G / 2), t_max = G - 1")
      .def("decide", &FailBandGate::decide, py::arg("stats"))
      .def(
          "decide",
          [](const FailBandGate& gate, int fails, int group_size) {
            if (group_size < 0 || fails < 0 || fails > group_size) {
              value_error("FailBandGate.decide: fails (", fails, ") must lie in [0, group_size (", group_size, ")]");
            }
            return gate.decide(GroupStats{group_size, group_size - fails, 0, 0, 0, 0});
          },
          py::arg("fails"), py::arg("group_size"), "the decision for a group of group_size with `fails` failures")
      .def(
          "assess",
          [](const FailBandGate& gate, const GroupStats& stats) {
            const GateDecision decision = gate.assess(stats);
            return py::make_tuple(decision.expansion, decision.reason);
          },
          py::arg("stats"), "(Expansion, GateReason)")
      .def(
          "decide_batch",
          [](const FailBandGate& gate, const py::object& fails_object, const py::object& sizes_object) {
            gate.validate();
            const IntegerVector fails = integer_vector(fails_object, "fails", "turn-1 failures per group");
            py::array sizes_array;
            const bool one_size = py::isinstance<py::int_>(sizes_object);
            IntegerVector sizes{};
            if (!one_size) {
              sizes = integer_vector(sizes_object, "group_size", "one size per group, or one int for all");
              require_length("group_size", sizes.size, "fails", fails.size);
            }
            const std::int64_t common_size = one_size ? sizes_object.cast<std::int64_t>() : 0;
            py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(fails.size));
            auto* decisions = out.mutable_data();
            {
              py::gil_scoped_release release;
              fails.visit([&](const auto* f) {
                for (std::size_t i = 0; i < fails.size; ++i) {
                  const auto size = one_size
                                        ? common_size
                                        : sizes.visit([&](const auto* s) { return static_cast<std::int64_t>(s[i]); });
                  const auto n_fail = static_cast<std::int64_t>(f[i]);
                  if (n_fail < 0 || n_fail > size || size > INT32_MAX) {  // out is new: nothing of the caller's written
                    value_error("FailBandGate.decide_batch: fails[", i, "] (", n_fail, ") must lie in [0, group_size (",
                                size, ")]");
                  }
                  const int n = static_cast<int>(size);
                  decisions[i] =
                      static_cast<std::uint8_t>(gate.decide(GroupStats{n, n - static_cast<int>(n_fail), 0, 0, 0, 0}));
                }
              });
            }
            return out;
          },
          py::arg("fails"), py::arg("group_size"),
          "Decisions for a batch of groups: fails[i] failures in a group of group_size (one int, or one per group). "
          "Returns a uint8 array of Expansion values (int(leap.Expansion.expand) == 0, ...).")
      .def("__repr__", [](const FailBandGate& g) {
        return detail::concat("leap.FailBandGate(t_min=", g.t_min, ", t_max=", g.t_max, ")");
      });
}

}  // namespace leap::python
