// SPDX-License-Identifier: Apache-2.0
// The batched advantages over numpy arrays: rank (outcome columns), rank of scalar scores, GRPO /
// Dr.GRPO, RLOO, and turn credit. Every argument is validated before anything is written; the core
// then runs without the GIL on the caller's own memory (the outcome columns are gathered into
// Outcomes, the only copy, since the core ranks whole outcomes: a slice of whole groups at a time
// when the groups are contiguous).
//
// These are the module's private entry points (leading underscore); leap/_advantages.py wraps them
// with the public signatures, torch tensors and hashable group ids.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "array_views.hpp"
#include "group_ids.hpp"
#include "overlap.hpp"
#include "leap/advantage_normalization.hpp"
#include "leap/baselines.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"
#include "leap/turn_credit.hpp"

namespace leap::python {

// out=None: a new array of `dtype`; else the caller's array, checked.
inline py::array output_for(const py::object& out, std::size_t length, const py::dtype& dtype) {
  if (out.is_none()) return py::array(dtype, py::array::ShapeContainer{static_cast<py::ssize_t>(length)});
  return require_output(out, "out", length);
}

inline bool is_float64(const py::array& a) { return has_dtype<double>(a); }
inline bool is_float32(const py::array& a) { return has_dtype<float>(a); }

// Values (rewards or scores) of float64 or float32, and out of the same dtype: the values array
// itself (in place) or memory of its own, shared with neither the values nor the ids.
struct RealInputs {
  py::array values;
  py::array out;
  bool single = false;  // float32
};

inline RealInputs real_inputs(const py::object& values_object, const char* name, const IntegerVector& ids,
                              const py::object& out_object) {
  RealInputs inputs;
  inputs.values = require_vector(values_object, name);
  if (!is_float64(inputs.values) && !is_float32(inputs.values)) {
    value_error(name, " has dtype ", dtype_text(inputs.values), "; expected float64 or float32 (", name,
                ".astype(np.float64) or .double())");
  }
  inputs.single = is_float32(inputs.values);
  require_length("group_ids", ids.size, name, static_cast<std::size_t>(inputs.values.shape(0)));
  inputs.out = output_for(out_object, static_cast<std::size_t>(inputs.values.shape(0)), inputs.values.dtype());
  if (!inputs.out.dtype().equal(inputs.values.dtype())) {
    value_error("out has dtype ", dtype_text(inputs.out), " but ", name, " has ", dtype_text(inputs.values),
                "; pass an out of the same dtype");
  }
  if (!out_object.is_none()) {
    refuse_overlap_unless_same("out", byte_range(inputs.out), name, byte_range(inputs.values));
    refuse_overlap("out", byte_range(inputs.out), "group_ids", byte_range(ids));
  }
  return inputs;
}

// The outcome columns of rank_advantages, gathered without the GIL.
struct OutcomeColumns {
  IntegerVector solved_turn;
  std::optional<IntegerVector> tokens;
  std::optional<IntegerVector> verdict;
  std::optional<py::array> speedup;
  bool speedup_single = false;  // float32 speedups (read while the GIL is held)

  OutcomeColumns(const py::object& turns, const py::object& speedup_object, const py::object& tokens_object,
                 const py::object& verdict_object)
      : solved_turn(integer_vector(turns, "solved_turn", "1-based turn of the first correct kernel, 0 = never")) {
    const std::size_t n = solved_turn.size;
    if (!tokens_object.is_none()) {
      tokens = integer_vector(tokens_object, "tokens", "completion tokens per sample");
      require_length("tokens", tokens->size, "solved_turn", n);
    }
    if (!verdict_object.is_none()) {
      verdict = integer_vector(verdict_object, "verdict", "leap.Verdict values 0..4 per sample");
      require_length("verdict", verdict->size, "solved_turn", n);
    }
    if (!speedup_object.is_none()) {
      speedup = require_vector(speedup_object, "speedup");
      if (!is_float64(*speedup) && !is_float32(*speedup)) {
        value_error("speedup has dtype ", dtype_text(*speedup), "; expected float64 or float32 (NaN = unknown)");
      }
      require_length("speedup", static_cast<std::size_t>(speedup->shape(0)), "solved_turn", n);
      speedup_single = is_float32(*speedup);
    }
  }

  // Throws ValueError naming the first value out of range (turns first, then verdicts, then tokens),
  // before anything is gathered or the caller's out is touched. Runs without the GIL.
  void check() const {
    const std::size_t n = solved_turn.size;
    solved_turn.visit([&](const auto* turns) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto turn = turns[i];
        if (turn < 0)
          value_error("solved_turn[", i, "] is ", static_cast<std::int64_t>(turn),
                      "; turns are 1-based and 0 means never solved");
        if (static_cast<std::uint64_t>(turn) > static_cast<std::uint64_t>(INT_MAX)) {
          value_error("solved_turn[", i, "] (", static_cast<std::uint64_t>(turn), ") is too large");
        }
      }
    });
    if (verdict) {
      verdict->visit([&](const auto* codes) {
        for (std::size_t i = 0; i < n; ++i) {
          const auto code = codes[i];
          if (code < 0 || code > static_cast<int>(Verdict::correct)) {
            value_error("verdict[", i, "] is ", static_cast<std::int64_t>(code),
                        "; expected a leap.Verdict value, 0 (compile_error) to 4 (correct)");
          }
        }
      });
    }
    if (tokens) {
      tokens->visit([&](const auto* counts) {
        for (std::size_t i = 0; i < n; ++i) {
          const auto count = counts[i];
          if (count < 0 || static_cast<std::uint64_t>(count) > std::numeric_limits<std::uint32_t>::max()) {
            value_error("tokens[", i, "] is ", static_cast<std::int64_t>(count), "; expected 0 to 2^32 - 1");
          }
        }
      });
    }
  }

  // Writes the outcomes of samples [begin, begin + out.size()) into out, whole. The values must have
  // passed check(). Runs without the GIL: reads only the arrays' memory.
  void gather(std::size_t begin, std::span<Outcome> out) const {
    const std::size_t n = out.size();
    solved_turn.visit([&](const auto* turns) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto turn = turns[begin + i];
        Outcome outcome;
        outcome.solved_turn = static_cast<int>(turn);
        outcome.best_verdict = turn > 0 ? Verdict::correct : Verdict::compile_error;
        out[i] = outcome;
      }
    });
    if (verdict) {
      verdict->visit([&](const auto* codes) {
        for (std::size_t i = 0; i < n; ++i) out[i].best_verdict = static_cast<Verdict>(codes[begin + i]);
      });
    }
    if (tokens) {
      tokens->visit([&](const auto* counts) {
        for (std::size_t i = 0; i < n; ++i) out[i].tokens = static_cast<std::uint32_t>(counts[begin + i]);
      });
    }
    if (speedup) {
      if (speedup_single) {
        const auto values = const_view<float>(*speedup);
        for (std::size_t i = 0; i < n; ++i) out[i].speedup = static_cast<double>(values[begin + i]);
      } else {
        const auto values = const_view<double>(*speedup);
        for (std::size_t i = 0; i < n; ++i) out[i].speedup = values[begin + i];
      }
    }
  }
};

// The calling thread's gathered outcomes, kept from call to call: a trainer passes batches of one
// size, and a new buffer of 24 bytes per sample each call would have its pages faulted in again.
inline std::vector<Outcome>& gathered_outcomes() {
  thread_local std::vector<Outcome> outcomes;
  return outcomes;
}

inline IntegerVector group_id_vector(const py::object& ids) {
  return integer_vector(ids, "group_ids", "one id per sample; hashable ids go through leap.dense_group_ids");
}

// Ranks the columns' outcomes. A batch of contiguous groups (as trainers lay them out) is gathered
// and ranked a slice of whole groups at a time, so the gathered outcomes are still in cache when
// ranked; any other batch is gathered whole first. Either way the outcomes live in the thread's
// kept buffer. The columns must have passed check().
template <class Real>
void rank_gathered(const OutcomeColumns& columns, std::span<const std::uint32_t> ids, std::span<Real> out,
                   const KernelOrder& order) {
  constexpr std::size_t slice_rows = 4096;  // 96 KiB of outcomes: well within L2
  std::vector<Outcome>& buffer = gathered_outcomes();
  const std::size_t n = ids.size();
  if (!leap::detail::monotone_runs(ids)) {
    buffer.resize(n);
    columns.gather(0, buffer);
    rank_advantages(std::span<const Outcome>(buffer), ids, out, order);
    return;
  }
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = std::min(n, begin + slice_rows);
    while (end < n && ids[end] == ids[end - 1]) ++end;  // the slice ends with a whole group
    const std::size_t rows = end - begin;
    if (buffer.size() < rows) buffer.resize(rows);
    const std::span<Outcome> slice(buffer.data(), rows);
    columns.gather(begin, slice);
    rank_advantages(std::span<const Outcome>(slice), ids.subspan(begin, rows), out.subspan(begin, rows), order);
    begin = end;
  }
}

inline py::array rank_advantages_binding(const py::object& solved_turn, const py::object& group_ids,
                                         const py::object& speedup, const py::object& tokens, const py::object& verdict,
                                         const KernelOrder& order, const py::object& out) {
  const OutcomeColumns columns(solved_turn, speedup, tokens, verdict);
  const IntegerVector ids = group_id_vector(group_ids);
  require_length("group_ids", ids.size, "solved_turn", columns.solved_turn.size);
  py::array result = output_for(out, ids.size, py::dtype::of<double>());
  if (!is_float64(result) && !is_float32(result)) {
    value_error("out has dtype ", dtype_text(result), "; expected float64 or float32");
  }
  if (!out.is_none()) {  // the columns are read slice by slice while out is written
    const ByteRange written = byte_range(result);
    refuse_overlap("out", written, "solved_turn", byte_range(columns.solved_turn));
    refuse_overlap("out", written, "group_ids", byte_range(ids));
    refuse_overlap("out", written, "speedup", columns.speedup);
    refuse_overlap("out", written, "tokens", columns.tokens);
    refuse_overlap("out", written, "verdict", columns.verdict);
  }
  order.validate();
  const bool single = is_float32(result);
  {
    py::gil_scoped_release release;
    columns.check();
    const GroupIds dense(ids);
    if (single) {
      rank_gathered(columns, dense.view(), mutable_view<float>(result), order);
    } else {
      rank_gathered(columns, dense.view(), mutable_view<double>(result), order);
    }
  }
  return result;
}

inline py::array rank_of_scores_binding(const py::object& scores, const py::object& group_ids, double tolerance,
                                        const py::object& out) {
  const IntegerVector ids = group_id_vector(group_ids);
  RealInputs inputs = real_inputs(scores, "scores", ids, out);
  {
    py::gil_scoped_release release;
    const GroupIds dense(ids);
    if (inputs.single) {
      rank_advantages_of_scores(const_view<float>(inputs.values), dense.view(), mutable_view<float>(inputs.out),
                                tolerance);
    } else {
      rank_advantages_of_scores(const_view<double>(inputs.values), dense.view(), mutable_view<double>(inputs.out),
                                tolerance);
    }
  }
  return inputs.out;
}

inline py::array grpo_binding(const py::object& rewards, const py::object& group_ids, double epsilon, bool scale_by_std,
                              const py::object& out) {
  const IntegerVector ids = group_id_vector(group_ids);
  RealInputs inputs = real_inputs(rewards, "rewards", ids, out);
  const GrpoOptions options{epsilon, scale_by_std};
  {
    py::gil_scoped_release release;
    const GroupIds dense(ids);
    // The C++ function finds a non-finite reward in its computing pass, after writing some of out;
    // a Python caller is promised that an error writes nothing, so the rewards are checked first.
    if (inputs.single) {
      detail::validate_rewards("grpo_advantages", const_view<float>(inputs.values));
      grpo_advantages(const_view<float>(inputs.values), dense.view(), mutable_view<float>(inputs.out), options);
    } else {
      detail::validate_rewards("grpo_advantages", const_view<double>(inputs.values));
      grpo_advantages(const_view<double>(inputs.values), dense.view(), mutable_view<double>(inputs.out), options);
    }
  }
  return inputs.out;
}

inline py::array rloo_binding(const py::object& rewards, const py::object& group_ids, const py::object& out) {
  const IntegerVector ids = group_id_vector(group_ids);
  RealInputs inputs = real_inputs(rewards, "rewards", ids, out);
  {
    py::gil_scoped_release release;
    const GroupIds dense(ids);
    if (inputs.single) {  // rewards checked first, as for grpo_binding
      detail::validate_rewards("rloo_advantages", const_view<float>(inputs.values));
      rloo_advantages(const_view<float>(inputs.values), dense.view(), mutable_view<float>(inputs.out));
    } else {
      detail::validate_rewards("rloo_advantages", const_view<double>(inputs.values));
      rloo_advantages(const_view<double>(inputs.values), dense.view(), mutable_view<double>(inputs.out));
    }
  }
  return inputs.out;
}

// Rescales advantages in place (float64 or float32); group ids only for group_std (None otherwise).
inline py::object normalize_binding(const py::object& advantages_object, const py::object& group_ids,
                                    AdvantageNormalization normalization, double epsilon) {
  py::array advantages =
      require_output(advantages_object, "advantages",
                     static_cast<std::size_t>(require_vector(advantages_object, "advantages").shape(0)));
  if (!is_float64(advantages) && !is_float32(advantages)) {
    value_error("advantages has dtype ", dtype_text(advantages), "; expected float64 or float32");
  }
  std::optional<IntegerVector> ids;
  if (!group_ids.is_none()) {
    ids = group_id_vector(group_ids);
    require_length("group_ids", ids->size, "advantages", static_cast<std::size_t>(advantages.shape(0)));
  } else if (normalization == AdvantageNormalization::group_std) {
    value_error("normalization group_std needs group_ids");
  }
  refuse_overlap("advantages", byte_range(advantages), "group_ids", ids);  // ids read while advantages are rescaled
  const bool single = is_float32(advantages);                              // asked before the GIL is let go
  {
    py::gil_scoped_release release;
    std::optional<GroupIds> dense;
    if (ids) dense.emplace(*ids);
    const std::span<const std::uint32_t> view = dense ? dense->view() : std::span<const std::uint32_t>{};
    if (single) {
      normalize_advantages(mutable_view<float>(advantages), view, normalization, epsilon);
    } else {
      normalize_advantages(mutable_view<double>(advantages), view, normalization, epsilon);
    }
  }
  return advantages_object;
}

// Seconds per call of the C++ function itself on the same arrays, `repeats` calls in a row, for
// benchmarks/python/bench_advantages.py (the Python call's overhead is measured against this).
inline double native_seconds(const std::string& kind, int repeats, const py::object& values,
                             const py::object& group_ids, const py::object& out) {
  if (repeats < 1) value_error("repeats (", repeats, ") must be >= 1");
  const IntegerVector ids = group_id_vector(group_ids);
  RealInputs inputs = real_inputs(values, "values", ids, out);
  if (inputs.single) value_error("_native_seconds times float64 arrays");
  if (ids.is_signed || ids.itemsize != 4) value_error("_native_seconds takes uint32 group ids");
  const auto v = const_view<double>(inputs.values);
  const std::span<const std::uint32_t> g(static_cast<const std::uint32_t*>(ids.data), ids.size);
  const auto o = mutable_view<double>(inputs.out);
  std::vector<Outcome> outcomes;
  if (kind == "rank") {  // the published order's outcomes behind a max_turns + 1 - t score (max_turns 3)
    outcomes.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) outcomes[i].solved_turn = v[i] > 0.0 ? static_cast<int>(4.0 - v[i]) : 0;
  } else if (kind != "grpo" && kind != "rloo" && kind != "scores") {
    value_error("unknown kind '", kind, "' (grpo, rloo, scores or rank)");
  }
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    if (kind == "grpo") {
      grpo_advantages(v, g, o);
    } else if (kind == "rloo") {
      rloo_advantages(v, g, o);
    } else if (kind == "scores") {
      rank_advantages_of_scores(v, g, o);
    } else {
      rank_advantages(outcomes, g, o, KernelOrder::turns_only());
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
}

inline void bind_advantages(py::module_& m) {
  m.def("_rank_advantages", &rank_advantages_binding, py::arg("solved_turn"), py::arg("group_ids"), py::arg("speedup"),
        py::arg("tokens"), py::arg("verdict"), py::arg("order"), py::arg("out"));
  m.def("_rank_advantages_of_scores", &rank_of_scores_binding, py::arg("scores"), py::arg("group_ids"),
        py::arg("tolerance"), py::arg("out"));
  m.def("_grpo_advantages", &grpo_binding, py::arg("rewards"), py::arg("group_ids"), py::arg("epsilon"),
        py::arg("scale_by_std"), py::arg("out"));
  m.def("_rloo_advantages", &rloo_binding, py::arg("rewards"), py::arg("group_ids"), py::arg("out"));
  m.def("_normalize_advantages", &normalize_binding, py::arg("advantages"), py::arg("group_ids"),
        py::arg("normalization"), py::arg("epsilon"));
  m.def("_native_seconds", &native_seconds, py::arg("kind"), py::arg("repeats"), py::arg("values"),
        py::arg("group_ids"), py::arg("out"));

  m.def(
      "turn_advantages",
      [](double advantage, int num_turns, int solved_turn, double gamma) {
        const std::vector<double> per_turn = leap::turn_advantages(advantage, num_turns, solved_turn, gamma);
        py::array_t<double> result(static_cast<py::ssize_t>(per_turn.size()));
        std::copy(per_turn.begin(), per_turn.end(), result.mutable_data());
        return result;
      },
      py::arg("advantage"), py::arg("num_turns"), py::arg("solved_turn"), py::arg("gamma"),
      "One advantage per turn: with advantage > 0 and a success at turn k, turn t <= k gets gamma^(k - t) * "
      "advantage (later turns 0); otherwise every turn gets the advantage.");
  m.def(
      "rank_advantages_reference",
      [](const std::vector<Outcome>& group, const KernelOrder& order) {
        return leap::rank_advantages_reference(group, order);
      },
      py::arg("group"), py::arg("order") = KernelOrder{},
      "One group's advantages by the O(G^2) pairwise definition (the oracle of the tests).");
  m.def(
      "rank_advantages_of_scores_reference",
      [](const std::vector<double>& group, double tolerance) {
        return leap::rank_advantages_of_scores_reference(group, tolerance);
      },
      py::arg("group"), py::arg("tolerance") = 0.0,
      "One group's advantages over scalar scores by the O(G^2) pairwise definition.");
}

}  // namespace leap::python
