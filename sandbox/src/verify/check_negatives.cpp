// SPDX-License-Identifier: Apache-2.0
// Step 3: outputs a careless or cheating kernel would give must fail the sandbox's comparison with
// the reference's outputs at some size set, as a candidate's would fail its evaluation: all zeros,
// a copy of an input (its first elements, where the counts differ), the last row (or element) of
// each output left unwritten (it keeps the poison the GPU runner fills outputs with).
#include <algorithm>

#include "evaluation/element_values.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

namespace {

// The outputs a run is held to: the reference's where it ran, else the oracle's.
const std::vector<Bytes>& expected_of(const SizeSetRun& run) {
  return run.reference && run.reference->ok() ? run.reference->outputs : run.oracle.outputs;
}

using Forge = bool (*)(const TaskSpec&, const SizeSetRun&, std::vector<Bytes>&);  // false: not applicable here

bool zeros(const TaskSpec& t, const SizeSetRun&, std::vector<Bytes>& out) {
  for (std::size_t i = 0; i < t.params.size(); ++i)
    if (is_output(t.params[i])) std::fill(out[i].begin(), out[i].end(), 0);
  return true;
}

// Each output holds an input's values as far as they go: one of the same element count where there
// is one, else the first input (a kernel that copies x to out is the bug or the cheat it stands for).
bool copy_of_input(const TaskSpec& t, const SizeSetRun& run, std::vector<Bytes>& out) {
  bool any = false;
  for (std::size_t o = 0; o < t.params.size(); ++o) {
    if (!is_output(t.params[o])) continue;
    std::size_t source = t.params.size();
    for (std::size_t i = 0; i < t.params.size(); ++i) {
      if (i == o || !is_input(t.params[i])) continue;
      if (source == t.params.size() || run.trial.counts[i] == run.trial.counts[o]) source = i;
      if (run.trial.counts[i] == run.trial.counts[o]) break;
    }
    if (source == t.params.size()) continue;
    const std::size_t n = std::min(run.trial.counts[o], run.trial.counts[source]);
    for (std::size_t k = 0; k < n; ++k)
      store_element(t.params[o].dtype, out[o].data(), k,
                    element_value(t.params[source].dtype, run.trial.buffers[source].data(), k));
    any = true;
  }
  return any;
}

bool partial_output(const TaskSpec& t, const SizeSetRun& run, std::vector<Bytes>& out) {
  for (std::size_t o = 0; o < t.params.size(); ++o) {
    const Param& p = t.params[o];
    if (!is_output(p)) continue;
    const std::size_t width = dtype_size(p.dtype);
    const std::size_t n = run.trial.counts[o];
    // The last row: the last dimension's elements (the last element of a one-dimensional output).
    std::size_t last = 1;
    if (p.shape.size() > 1) {
      Param last_dim;
      last_dim.shape = {p.shape.back()};
      last = std::min(element_count(last_dim, run.trial.sizes), n);
    }
    Bytes tail(last * width);
    if (p.role == Role::out) poison(p.dtype, run.trial.seed, tail);
    else std::copy(run.trial.buffers[o].end() - static_cast<std::ptrdiff_t>(last * width), run.trial.buffers[o].end(), tail.begin());
    std::copy(tail.begin(), tail.end(), out[o].end() - static_cast<std::ptrdiff_t>(tail.size()));
  }
  return true;
}

}  // namespace

void check_negatives(VerifyContext& c) {
  const TaskSpec& t = c.spec();
  const std::pair<const char*, Forge> forges[] = {
      {"negative:zeros", zeros}, {"negative:copy_of_input", copy_of_input}, {"negative:partial_output", partial_output}};
  for (const auto& [name, forge] : forges) {
    bool applicable = false;
    std::string caught;
    for (const SizeSetRun& run : c.runs) {
      const std::vector<Bytes>& expected = expected_of(run);
      if (expected.empty()) continue;
      std::vector<Bytes> forged = expected;
      if (!forge(t, run, forged)) continue;
      applicable = true;
      const std::string diff = first_difference(t, forged, expected, run.trial.counts);
      if (!diff.empty()) {
        caught = run.label + ": " + diff;
        break;
      }
    }
    if (!applicable) c.report.add(name, true, "not applicable: the task has no input buffer");
    else if (caught.empty())
      c.report.add(name, false,
                   "task '" + t.name + "': passes the comparison at every size set; the inputs or the tolerance "
                   "let it through");
    else c.report.add(name, true, "caught at " + caught);
  }
}

}  // namespace leap::sandbox::verify
