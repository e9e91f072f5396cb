// SPDX-License-Identifier: Apache-2.0
// `tasks dump`: one trial of a task written out for checking outside leap (numpy, torch): its inputs
// as drawn and the reference's outputs on the CPU runtime, as .npy files, with a trial.json that says
// the sizes, seeds, scalars and what each file holds. The trial is the one `tasks verify` draws for
// that size set at that seed, so a failed verification can be looked at element by element. Internal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "verify/module_cache.hpp"
#include "verify/verify_target.hpp"

namespace leap::sandbox::verify {

struct DumpResult {
  std::string error;   // empty: written; else what stopped it (a size set out of range, a failed run)
  std::string label;   // the size set, as reports name it: "check_sizes[1] {rows=3, cols=1}"
  std::string oracle;  // "agrees", the first difference from the oracle, or why it did not run
  bool ok() const noexcept { return error.empty(); }
};

// Size set `size_set` is check_sizes[size_set]; check_sizes.size() names the reduced timing size.
// Writes DIR/inputs/NAME.npy for every in and inout buffer, DIR/outputs/NAME.npy for every out and
// inout buffer, and DIR/trial.json. float16 is stored as "<f2"; bfloat16, which numpy lacks, as
// "<f4" holding the same values exactly.
DumpResult dump_trial(const VerifyTarget& target, ModuleCache& cache, std::size_t size_set, std::uint64_t seed,
                      const std::filesystem::path& dir);

}  // namespace leap::sandbox::verify
