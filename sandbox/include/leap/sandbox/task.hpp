// SPDX-License-Identifier: Apache-2.0
// A kernel task: what the policy is asked to write, the kernel's signature, how to make inputs, how
// to launch it, the reference it is checked and timed against, and how strictly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/task_library.hpp"

namespace leap::sandbox {

// Named problem sizes, e.g. {n: 1 << 20}; a task's shapes, launch dimensions and scalar values are
// size expressions over them ("ceil_div(n, 256)", "rows * cols"; see docs/task-json.md).
using Sizes = std::map<std::string, std::int64_t, std::less<>>;

// int8: signed 8-bit integers (quantized weights and activations); buffers only, never a scalar.
enum class DType : std::uint8_t { float32, float16, bfloat16, int32, int8 };
enum class Role : std::uint8_t { in, out, inout };
enum class ParamKind : std::uint8_t { buffer, scalar };

std::string_view to_string(DType dtype) noexcept;  // "float32", "float16", "bfloat16", "int32", "int8"
std::string_view to_string(Role role) noexcept;    // "in", "out", "inout"
std::optional<DType> dtype_from_string(std::string_view name) noexcept;
std::size_t dtype_size(DType dtype) noexcept;

// How a buffer's initial contents are drawn, fresh for every trial and every timed run.
//   uniform(low=a, high=b)   normal(mean=a, std=b)   randint(low=a, high=b, inclusive)   zeros
//   rademacher(mean=a, std=b): a - b or a + b, each half the time
//   student_t(mean=a, scale=b): a + b t, t Student's t with 3 degrees of freedom (heavy tails, finite variance)
// constant(value=a) and arange (0, 1, 2, ...) are known kinds that validate() refuses for inputs:
// they would give every timed run the same input.
enum class GeneratorKind : std::uint8_t { uniform, normal, randint, zeros, constant, arange, rademacher, student_t };
std::string_view to_string(GeneratorKind kind) noexcept;  // "uniform", "normal", ..., as task.json spells it
std::optional<GeneratorKind> generator_kind_from_string(std::string_view name) noexcept;

// special: the task declares NaN, infinities, subnormals and -0 meaningful for this input (float
// dtypes); the correctness trials then put some of each among the drawn values.
// randint's bounds may be size expressions ("high": "classes - 1"), so indices stay in range at every
// size set: low_expr and high_expr hold them (empty: a and b as written), and generator_at() resolves
// them at one size set.
struct Generator {
  GeneratorKind kind = GeneratorKind::uniform;
  double a = -1.0;
  double b = 1.0;
  bool special = false;
  // random_scale: each draw (every trial, every timed run) multiplies the location and the spread by
  // 2^k, k from the draw's seed in -3..3, so no answer can be predicted from the distribution alone
  // (a mean or a loss over many elements); for uniform, normal, rademacher and student_t.
  bool random_scale = false;
  std::string low_expr;
  std::string high_expr;
};

struct Param {
  std::string name;  // a C identifier; also the name feedback uses
  ParamKind kind = ParamKind::buffer;
  DType dtype = DType::float32;
  // buffers
  Role role = Role::in;
  std::vector<std::string> shape;  // size expressions; the element count is their product
  Generator generator;             // for in and inout buffers
  // scalars (float32 or int32): a size expression, or for float32 also a number such as "1e-5"
  std::string value;
};

struct LaunchConfig {  // size expressions; missing dimensions are "1"
  std::string grid[3] = {"1", "1", "1"};
  std::string block[3] = {"1", "1", "1"};
  std::string shared_bytes = "0";  // dynamic shared memory
};

// The hardware's launch limits (every current GPU): blocks per grid and threads per block by axis,
// and threads per block in all.
constexpr std::int64_t k_max_grid_dims[3] = {2147483647, 65535, 65535};
constexpr std::int64_t k_max_block_dims[3] = {1024, 1024, 64};
constexpr unsigned k_max_threads_per_block = 1024;

// Whether the candidate may declare its own launch plan (`// leap-launch:` lines, see
// launch_plan.hpp), and within which bounds. Not allowed: the plan is fixed to `launch` and a
// candidate's plan is refused. The bounds apply to every size set of the task.
struct LaunchPolicy {
  bool allowed = false;
  int max_kernels = 4;                                        // kernels launched in sequence, 1..k_max_plan_kernels
  unsigned max_threads_per_block = k_max_threads_per_block;   // 1..1024
  std::uint64_t max_shared_bytes = 48 * 1024;                 // dynamic shared memory per kernel, up to 227 KiB
  std::uint64_t max_scratch_bytes = std::uint64_t{64} << 20;  // all scratch buffers together, up to 4 GiB
};
// The hard ceilings of a policy: what any task may allow at most.
constexpr int k_max_plan_kernels = 16;
constexpr int k_max_plan_scratch = 16;
constexpr std::uint64_t k_max_plan_shared_bytes = 227 * 1024;  // the largest opt-in of current GPUs
constexpr std::uint64_t k_max_plan_scratch_bytes = std::uint64_t{4} << 30;

struct Tolerance {  // an element passes when |candidate - reference| <= atol + rtol * |reference|
  double atol = 0.0;
  double rtol = 0.0;
};

struct TimingSettings {
  int warmup = 3;  // untimed runs first (module load, clocks, caches)
  int min_reps = 10;
  int max_reps = 200;
  double target_spread = 0.02;  // stop once (p75 - p25) / median is at most this ...
  int budget_ms = 1500;         // ... or this much time went into timed runs of one kernel
};

struct TaskSpec {
  std::string name;                // [a-z0-9_]+
  std::string description;         // the prompt: what to write, the signature, the launch configuration
  std::string entry;               // the extern "C" __global__ function to launch
  std::vector<Param> params;       // in the kernel's parameter order
  Sizes sizes;                     // problem sizes used for timing (and for the first correctness trial)
  std::vector<Sizes> check_sizes;  // further size sets checked for correctness (e.g. ragged edges)
  LaunchConfig launch;             // the reference's launch, and the candidate's unless it declares a plan
  LaunchPolicy candidate_launch;
  std::string reference_source;  // CUDA source defining `entry`
  Tolerance tolerance[5] = {{1e-4, 1e-4}, {1e-2, 1e-2}, {2e-2, 2e-2}, {0.0, 0.0}, {0.0, 0.0}};  // by DType
  int trials = 3;  // correctness trials per size set, each with a fresh seed
  TimingSettings timing;
  int time_limit_ms = 10000;  // a whole evaluation in the GPU runner; past it the runner is killed
  TaskLibraryInfo library;    // category, tier, bytes, flops, provenance, split, ... (task_library.hpp)
  const Tolerance& tolerance_for(DType dtype) const noexcept { return tolerance[static_cast<int>(dtype)]; }
};

// A spec that does not describe a usable task. The message names task, field and value, e.g.
// task 'softmax': params[2].dtype: unknown dtype "float64"
class TaskError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Resolves "reference_file" (and other file references) of a spec; nullopt = no such file. A
// resolver may throw TaskError to say why a name is refused; parse_task adds task and field.
using FileResolver = std::function<std::optional<std::string>(std::string_view name)>;

// What a spec may be: its text (and a file it names) at most this many bytes, arrays and objects
// nested at most this deep, at most this many params and check size sets. Past a limit parse_task
// throws TaskError naming the limit, before any value is looked at.
constexpr std::size_t k_max_task_spec_bytes = std::size_t{4} << 20;
constexpr int k_max_task_spec_depth = 16;
constexpr std::size_t k_max_task_params = 256;
constexpr std::size_t k_max_task_check_sizes = 64;

// Parses and validates a JSON spec. "reference" holds the source inline, or "reference_file" names
// a file the resolver supplies. Unknown keys are errors (a typo must not silently mean a default).
TaskSpec parse_task(std::string_view json_text, const FileResolver& resolve = {});
// Files below `directory` only: an absolute name, a '..' component or a symlink that leads out
// (resolved by the kernel with openat2's RESOLVE_BENEATH) is refused with a TaskError that names
// the file, never its contents; so is anything but a regular file of at most k_max_task_spec_bytes.
FileResolver confined_resolver(std::filesystem::path directory);
// Reads a spec file; "reference_file" is resolved by confined_resolver in the spec's directory.
// Throws TaskError.
TaskSpec load_task_file(const std::string& path);
// Checks names, expressions against every size set, shapes, launch limits, policy and settings.
void validate(const TaskSpec& task);
// The spec as JSON text with the reference inline; parse_task(task_to_json(t)) == t.
std::string task_to_json(const TaskSpec& task, int indent = -1);

// Everything the GPU runner needs for one size set, with every expression evaluated.
struct ResolvedLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};
std::size_t element_count(const Param& buffer, const Sizes& sizes);       // throws TaskError
ResolvedLaunch resolve_launch(const TaskSpec& task, const Sizes& sizes);  // throws TaskError
// The buffer's generator with randint bounds that are size expressions evaluated at `sizes` (the
// generator as written when it has none); throws TaskError naming the bound.
Generator generator_at(const Param& buffer, const Sizes& sizes);

}  // namespace leap::sandbox
