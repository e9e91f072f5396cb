// SPDX-License-Identifier: Apache-2.0
// GPU suite (label gpu): every shipped variant gets the verdict it ships with, and hostile kernels
// (out-of-bounds writes, hangs, traps, stale output, writing inputs, constants, other streams,
// snooping for the reference's output) get the right verdict and leave the harness healthy.
// Exits 77 (CTest: skipped) without a GPU.
#include <cstdio>
#include <cstdlib>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

namespace sb = leap::sandbox;

namespace {

int failures = 0;

const char* name_of(const sb::EvalResult& r) {
  if (r.verdict) return leap::to_string(*r.verdict).data();
  return r.status == sb::EvalStatus::no_gpu ? "no_gpu" : "error";
}

void expect(const std::string& what, const sb::EvalResult& r, std::vector<std::string> allowed) {
  const std::string got = name_of(r);
  bool ok = false;
  for (const std::string& a : allowed) ok = ok || a == got;
  std::printf("%s %-40s %-14s (%.2f s) %s%s\n", ok ? "PASS" : "FAIL", what.c_str(), got.c_str(), r.seconds,
              r.cuda_error.c_str(), ok ? "" : (" | " + r.detail + r.error).c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// The scale_add signature: (const float* x, const float* y, float* out, float alpha, int n).
std::string kernel(const std::string& body) {
  return "extern \"C\" __global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {\n"
         "  const long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;\n" + body + "\n}\n";
}
const std::string k_correct_loop = "  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = alpha * x[i] + y[i]; }\n";

}  // namespace

int main() {
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (!gpu.ok()) {
    std::printf("no GPU (%s: %s): skipped\n", std::string(sb::to_string(gpu.state)).c_str(), gpu.reason.c_str());
    return 77;
  }
  sb::EvaluatorConfig config;
  config.time = false;
  config.seed = 12345;
  sb::Evaluator ev(config);
  std::printf("device: %s, arch %s\n", gpu.devices.empty() ? "?" : gpu.devices[0].name.c_str(), ev.arch().c_str());

  // 1. Every shipped variant.
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    for (const sb::TaskVariant& v : t.variants) expect(t.spec.name + "/" + v.name, ev.evaluate(t.spec, v.source), {v.expect});
  }

  // 2. Hostile kernels on a smaller scale_add with a short time limit.
  sb::TaskSpec task = sb::find_builtin_task("scale_add")->spec;
  task.sizes = {{"n", 1 << 20}};
  task.check_sizes = {{{"n", 1001}}};
  task.time_limit_ms = 3000;
  const std::string fast = sb::find_builtin_task("scale_add")->variant("fast")->source;
  auto healthy = [&](const std::string& after) { expect("  healthy after " + after, ev.evaluate(task, fast), {"correct"}); };
  struct Case {
    const char* name;
    std::string source;
    std::vector<std::string> allowed;
  };
  const std::vector<Case> cases = {
      {"oob write far (illegal address)", kernel(k_correct_loop + "  if (base == 0) out[1LL << 36] = 1.0f;"), {"runtime_error"}},
      {"oob write just past the end", kernel(k_correct_loop + "  if (base == 0) { out[n] = 1.0f; out[n + 7] = 2.0f; }"), {"wrong_answer"}},
      {"oob write before the start", kernel(k_correct_loop + "  if (base == 0) out[-3] = 1.0f;"), {"wrong_answer"}},
      {"spins forever", kernel("  volatile int spin = 1; while (spin) {}"), {"timeout"}},
      {"traps", kernel("  if (base == 0) __trap();"), {"runtime_error"}},
      {"never writes its output", kernel(""), {"wrong_answer"}},
      {"writes its inputs", kernel(k_correct_loop + "  if (base < n) const_cast<float*>(x)[base] = 0.0f;"), {"wrong_answer"}},
      {"returns a constant", kernel("  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = 0.5f; }"), {"wrong_answer"}},
      {"work on another stream (device launch)",
       "__global__ void child(const float* x, const float* y, float* out, float a, int n) { int i = blockIdx.x * 256 + threadIdx.x; if (i < n) out[i] = a * x[i] + y[i]; }\n"
       "extern \"C\" __global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {\n"
       "  if (blockIdx.x == 0 && threadIdx.x == 0) child<<<(n + 255) / 256, 256, 0, cudaStreamFireAndForget>>>(x, y, out, alpha, n);\n}\n",
       {"compile_error", "runtime_error", "wrong_answer"}},
      {"snoops for the reference's output",
       kernel("  // scan forward from its own buffer for memory that looks like an answer\n"
              "  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) {\n"
              "    float v = out[i + 2LL * (n + 1024)];\n"
              "    out[i] = v; } }"),
       {"wrong_answer", "runtime_error"}},
  };
  for (const Case& c : cases) {
    expect(c.name, ev.evaluate(task, c.source), c.allowed);
    healthy(c.name);
  }

  // 3. Timing works and is sane on two tasks.
  sb::EvaluatorConfig timed = config;
  timed.time = true;
  sb::Evaluator tev(timed);
  for (const char* name : {"matmul", "transpose"}) {
    const sb::BuiltinTask& t = *sb::find_builtin_task(name);
    const sb::EvalResult r = tev.evaluate(t.spec, t.variant("fast")->source);
    expect(std::string(name) + "/fast timed", r, {"correct"});
    std::printf("     %s: speedup %.3f, candidate %.4f ms (%s, spread %.3f, %d runs), reference %.4f ms%s%s\n", name, r.speedup,
                r.candidate.median_ms, r.candidate.method.c_str(), r.candidate.spread, r.candidate.runs, r.reference.median_ms,
                r.timing_note.empty() ? "" : "; note: ", r.timing_note.c_str());
    if (!(r.speedup > 0)) ++failures;
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
