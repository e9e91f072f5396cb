// SPDX-License-Identifier: Apache-2.0
// The pool of long-lived pooled compilers: one candidate's compile cannot change another's result
// (the same bytes, log and status from a fresh pooled compiler and from one whose precompiled headers other
// candidates warmed, hostile ones included), results say what the PCH did, pooled compilers are replaced after
// a kill, a limit, a stop or their compile count, and limits still count the candidate's own CPU time.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <atomic>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"

#include "compile/compile_child.hpp"
#include "compile/compile_launcher.hpp"
#include "compile/pooled_compiler.hpp"
#include "queue_time_check.hpp"
#include "sanitizers.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

sb::CompilerConfig pooled(unsigned max_compiles = 256) {
  sb::CompilerConfig c = leap_test::config(sb::Isolation::pooled, 1);
  c.pool.size = 1;
  c.pool.max_compiles_per_process = max_compiles;
  return c;
}

// A process's one-letter state in /proc/PID/stat: 'Z' exited and not reaped yet, 'T' stopped, ...
char state_of(int pid) {
  const std::string stat = leap_test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '\0';
}

// Waits up to ten seconds for a process to reach a state; says whether it did.
bool reaches_state(int pid, char state) {
  const auto stop = Clock::now() + std::chrono::seconds(10);
  while (state_of(pid) != state && Clock::now() < stop) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return state_of(pid) == state;
}

// The CPU time a process has used (utime + stime from /proc/<pid>/stat), in clock ticks; -1 when gone.
long cpu_ticks_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15 (from 1) are utime and stime
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

// Whether `pid` is busy: it uses `ticks` more clock ticks of CPU within 10 s (a compile inside NVRTC).
bool uses_cpu(int pid, long ticks) {
  const long start = cpu_ticks_of(pid);
  const auto stop = Clock::now() + std::chrono::seconds(10);
  while (start >= 0 && cpu_ticks_of(pid) < start + ticks && Clock::now() < stop)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return start >= 0 && cpu_ticks_of(pid) >= start + ticks;
}

// A heavy header first (the PCH's prefix), a task header second, the candidate's own code after.
std::string heavy_source(const std::string& body) { return "#include <cuda_fp16.h>\n#include \"task.h\"\n" + body; }
const std::string k_target_body =
    "extern \"C\" __global__ void scale_half(const __half* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = __half2float(x[i]) * SCALE;\n}\n";

sb::CompileJob heavy_job(const std::string& body,
                         const std::string& task_header = "#pragma once\n#define SCALE 3.0f\n") {
  sb::CompileJob j;
  j.source = heavy_source(body);
  j.headers = {{"task.h", task_header}};
  j.options.want_cubin = true;
  j.options.timeout = std::chrono::seconds(60);
  return j;
}

const std::string k_slow_body =  // about a second or more of NVRTC's optimiser
    "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
    "__global__ void slow(float* p) { float v = p[threadIdx.x];\n  A(A(A(C(v = v * 1.0001f + p[(int)v & 7];)))) p[0] = "
    "v; }\n";

const std::string k_steady_body =  // a few seconds of NVRTC's optimiser, then a result
    "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define F(x) B(x) B(x) B(x) B(x) B(x)\n"
    "__global__ void steady(float* p) { float v = p[threadIdx.x];\n  F(v = v * 1.0001f + p[(int)v & 7];) p[0] = v; }\n";

void check_same(const sb::CompileResult& a, const sb::CompileResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.log == b.log);
  CHECK(a.ptx == b.ptx);
  CHECK(a.cubin == b.cubin);
  CHECK(a.kernels == b.kernels);
}

}  // namespace

TEST_CASE("compile pool: a candidate's result is the same whatever compiled before it in the pooled compiler",
          "[sandbox][pool][isolation]") {
  leap_test::require_confinement();
  const sb::CompileJob target = heavy_job(k_target_body);

  // Fresh: every compile in a new pooled compiler.
  sb::Compiler fresh(pooled(1));
  const sb::CompileResult reference = fresh.compile(target);
  REQUIRE(reference.ok());
  CHECK(reference.pch == sb::PchUse::created);  // NVRTC made a PCH of cuda_fp16.h + task.h (and said so)

  // Warm: one pooled compiler that other candidates, hostile ones first, went through.
  sb::Compiler warm(pooled());
  std::vector<sb::CompileJob> others;
  {
    sb::CompileJob killed = heavy_job(k_slow_body);  // ends at its CPU limit: the pooled compiler is replaced
    killed.options.timeout = std::chrono::milliseconds(300);
    others.push_back(killed);
  }
  // The same file names and directives, a task.h of the same name with other contents: NVRTC does not
  // tell the two apart, so a PCH shared between them would compile the target with SCALE 5.
  others.push_back(heavy_job(k_target_body, "#pragma once\n#define SCALE 5.0f\n"));
  others.push_back(heavy_job("#define __half2float(x) 0.0f\n" + k_target_body));  // redefines what the target calls
  {
    sb::CompileJob defined_first = heavy_job(k_target_body);  // macros before the heavy include
    defined_first.source = "#define __CUDA_NO_HALF_CONVERSIONS__\n#define SCALE_HALF 1\n" + defined_first.source;
    others.push_back(defined_first);
  }
  others.push_back(heavy_job("extern \"C\" __global__ void broken(float* y) { y[0] = undefined_name; }\n"));  // fails
  others.push_back(heavy_job("__global__ void other(float* y) { y[0] = SCALE; }\n"));  // a benign neighbour
  std::vector<sb::CompileResult> seen;
  for (const sb::CompileJob& j : others) seen.push_back(warm.compile(j));
  CHECK(seen[0].status == sb::CompileStatus::timeout);
  CHECK(seen[0].limit == sb::CompileLimit::cpu_time);
  CHECK(seen[1].ok());
  CHECK(seen[4].status == sb::CompileStatus::error);
  CHECK(seen.back().ok());

  const sb::CompileResult again = warm.compile(target);
  INFO("fresh log: " << reference.log << "\nwarm log: " << again.log);
  REQUIRE(again.ok());
  CHECK(again.pch == sb::PchUse::hit);  // it did use a PCH another candidate's compile made
  check_same(reference, again);
  CHECK(again.log.find("precompiled header") == std::string::npos);

  // And each hostile candidate got what a fresh pooled compiler gives it.
  for (std::size_t i = 1; i < others.size(); ++i) {
    INFO("candidate " << i);
    check_same(fresh.compile(others[i]), seen[i]);
  }
  const sb::CompilePoolStats s = warm.pool_stats();
  CHECK(s.processes_started == 2);  // the first pooled compiler went with the CPU-limited candidate
  CHECK(s.processes_replaced == 1);
  CHECK(s.pch_hits >= 1);
  CHECK(fresh.pool_stats().processes_replaced == fresh.pool_stats().compiles);  // one compile each
}

TEST_CASE("compile pool: a pooled compiler killed mid-compile is replaced and the next compile succeeds",
          "[sandbox][pool]") {
  leap_test::require_confinement();
  sb::Compiler c(pooled());
  REQUIRE(c.compile(heavy_job(k_target_body)).ok());
  const std::vector<int> before = c.pool_stats().pids;
  REQUIRE(before.size() == 1);
  sb::CompileJob slow = heavy_job(k_slow_body);
  slow.options.timeout = std::chrono::seconds(120);
  auto pending = std::async(std::launch::async, [&] { return c.compile(slow); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // inside NVRTC by now
  ::kill(before[0], SIGKILL);
  const sb::CompileResult killed = pending.get();
  CHECK(killed.status == sb::CompileStatus::error);
  CHECK(killed.log == "the compiler process died (signal 9)");
  CHECK_FALSE(killed.nvrtc_verdict);  // says nothing about the source: never cached

  const sb::CompileResult next = c.compile(heavy_job(k_target_body));
  CHECK(next.ok());
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_started == 2);
  CHECK(s.processes_replaced == 1);
  REQUIRE(s.pids.size() == 1);
  CHECK(s.pids[0] != before[0]);
}

TEST_CASE(
    "compile pool: a stopped launcher is replaced when a pooled compiler must start, and a compile it took "
    "with it is compiled again",
    "[sandbox][pool][launcher]") {
  leap_test::require_confinement();
  sb::CompilerConfig config = pooled();
  config.pool.size = 2;
  sb::Compiler c(config);
  REQUIRE(c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"}).ok());
  const std::vector<int> first = c.pool_stats().pids;
  REQUIRE(first.size() == 1);
  const auto launcher = static_cast<pid_t>(leap_test::parent_of(first[0]));
  REQUIRE(launcher > 0);
  // One compile in flight on the first pooled compiler; then the launcher stops answering.
  sb::CompileJob steady = heavy_job(k_steady_body);
  steady.options.timeout = std::chrono::seconds(120);
  auto pending = std::async(std::launch::async, [&] { return c.compile(steady); });
  // Inside NVRTC: the first pooled compiler is using CPU (a fixed sleep raced a loaded machine, where
  // the compile had not reached it yet and was then not "in flight" when the launcher stopped).
  REQUIRE(uses_cpu(first[0], 5));
  REQUIRE(::kill(launcher, SIGSTOP) == 0);
  REQUIRE(reaches_state(launcher, 'T'));
  // The next compile needs a second pooled compiler: the launcher is found lost and replaced (which
  // ends the first pooled compiler too), and the compile in flight is done again on a new one.
  const auto t0 = Clock::now();
  const sb::CompileResult next =
      c.compile(sb::CompileJob{std::string(leap_test::plain_kernel()) + "// another\n", {}, {}, "kernel.cu"});
  INFO(next.log);
  CHECK(next.ok());
  CHECK(Clock::now() - t0 < std::chrono::seconds(15));  // not a minute of waiting for a pid
  const sb::CompileResult again = pending.get();
  INFO(again.log);
  CHECK(again.ok());  // not "the compiler process died (signal 9)": the candidate did nothing
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_started == 3);  // the first, the second, and the one the compile in flight was done again on
  for (const int pid : s.pids) CHECK(leap_test::parent_of(pid) != launcher);
  CHECK(::kill(launcher, 0) != 0);  // killed and reaped
}

TEST_CASE("compile pool: a pooled compiler dead or stopped while idle is replaced before a candidate is given to it",
          "[sandbox][pool]") {
  leap_test::require_confinement();
  // The OOM killer or an operator kills it between two compiles (gone, its socket closed), or an
  // operator or a debugger stops it (alive, but it reads nothing); the pool has not looked yet.
  const auto [signal, state] = GENERATE(std::pair{SIGKILL, 'Z'}, std::pair{SIGSTOP, 'T'});
  CAPTURE(signal);
  sb::Compiler c(pooled());
  const sb::CompileJob job{std::string(leap_test::plain_kernel()), {}, {}, "kernel.cu"};
  REQUIRE(c.compile(job).ok());
  const std::vector<int> before = c.pool_stats().pids;
  REQUIRE(before.size() == 1);
  ::kill(before[0], signal);
  REQUIRE(reaches_state(before[0], state));

  sb::CompileJob next = job;
  next.source += "// another candidate\n";
  const auto t0 = Clock::now();
  const sb::CompileResult r = c.compile(next);
  INFO(r.log);
  CHECK(r.ok());  // not "the compiler process died", nor a timeout: the candidate did nothing
  CHECK(Clock::now() - t0 < std::chrono::seconds(30));
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_started == 2);
  CHECK(s.processes_replaced == 1);
  REQUIRE(s.pids.size() == 1);
  CHECK(s.pids[0] != before[0]);
}

// Whether `pid`'s parent is a compile launcher of this process: a child of ours with a single thread.
bool forked_by_a_launcher(int pid) {
  const long parent = leap_test::parent_of(pid);
  INFO("pooled compiler " << pid << ", its parent " << parent << ", this process " << ::getpid());
  // ThreadSanitizer keeps a thread of its own in every process until the child sandboxes itself.
  return parent > 0 && parent != ::getpid() && leap_test::parent_of(static_cast<pid_t>(parent)) == ::getpid() &&
         leap_test::threads_of(static_cast<pid_t>(parent)) == (leap_test::k_thread_sanitizer ? 2u : 1u);
}

TEST_CASE("compile pool: pooled compilers are forked by the compile launcher, a replacement after a kill too",
          "[sandbox][pool][launcher]") {
  leap_test::require_confinement();
  sb::Compiler c(pooled());
  REQUIRE(c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"}).ok());
  const std::vector<int> first = c.pool_stats().pids;
  REQUIRE(first.size() == 1);
  CHECK(forked_by_a_launcher(first[0]));
  const long launcher = leap_test::parent_of(first[0]);

  ::kill(first[0], SIGKILL);
  // The launcher keeps the dead pooled compiler unreaped until the pool releases it: its pid stays its own.
  REQUIRE(reaches_state(first[0], 'Z'));
  const sb::CompileResult r =
      c.compile(sb::CompileJob{std::string(leap_test::plain_kernel()) + "// another\n", {}, {}, "kernel.cu"});
  INFO(r.log);
  CHECK(r.ok());
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_replaced == 1);
  REQUIRE(s.pids.size() == 1);
  CHECK(s.pids[0] != first[0]);
  CHECK(forked_by_a_launcher(s.pids[0]));
  CHECK(leap_test::parent_of(s.pids[0]) == launcher);  // the same launcher: it was never gone
  CHECK(state_of(first[0]) != 'Z');                    // released, so reaped
}

TEST_CASE("compile pool: compiles finish while the caller's other threads allocate without pause",
          "[sandbox][pool][launcher]") {
  // Forked from this process instead, a pooled compiler could inherit an allocator lock held by one of these
  // threads (under a sanitizer's allocator, which does not take its locks around fork) and hang.
  leap_test::require_confinement();
  sb::CompilerConfig config = pooled(1);  // a fresh pooled compiler for every compile: as many forks as compiles
  config.pool.size = 2;
  config.parallel_compiles = 2;  // the batch's threads ask for pooled compilers, while the churn below goes on
  config.idle_limit = std::chrono::seconds(10);  // a pooled compiler that hangs ends here, as a failure below
  sb::Compiler c(config);
  std::optional<leap_test::AllocationChurn> churn(std::in_place);
  std::vector<sb::CompileJob> jobs;
  for (int i = 0; i < 12; ++i) {
    jobs.push_back(sb::CompileJob{
        std::string(leap_test::plain_kernel()) + "// candidate " + std::to_string(i) + "\n", {}, {}, "kernel.cu"});
  }
  const std::vector<sb::CompileResult> results = c.compile_batch(jobs);
  churn.reset();
  REQUIRE(results.size() == jobs.size());
  for (const sb::CompileResult& r : results) {
    INFO(r.log);
    CHECK(r.ok());
    CHECK(r.limit == sb::CompileLimit::none);
  }
  CHECK(c.pool_stats().processes_started >= 12);
}

TEST_CASE("compile pool: a pooled compiler that stops reading cannot hold a request past the wall-clock limit",
          "[sandbox][pool][limits]") {
  leap_test::require_confinement();
  const sb::detail::ChildSetup setup = sb::detail::make_child_setup({}, sb::ConfinementLimits{}, true);
  {
    sb::detail::CompileLauncher launcher(setup);
    sb::detail::PooledCompiler pooled(launcher, setup, sb::detail::PooledCompilerSettings{});
    REQUIRE(pooled.idle_and_alive());
    // Stopped after the pool looked: the request (8 MiB, far above a socket's buffer) cannot be taken.
    ::kill(pooled.pid(), SIGSTOP);
    REQUIRE(reaches_state(pooled.pid(), 'T'));
    CHECK_FALSE(pooled.idle_and_alive());
    sb::detail::NvrtcRequest request;
    request.file_name = "kernel.cu";
    request.source = "// " + std::string(std::size_t{8} << 20, 'x') + "\n" + leap_test::plain_kernel();
    const sb::detail::ChildBudget budget{std::chrono::seconds(30), std::chrono::seconds(1),
                                         std::chrono::milliseconds(30000)};
    const auto t0 = Clock::now();
    const sb::detail::PooledCompiler::Outcome outcome = pooled.compile(request, budget);
    CHECK(Clock::now() - t0 < std::chrono::seconds(10));  // about the one second of the backstop
    CHECK_FALSE(outcome.alive);
    CHECK(outcome.result.status == sb::CompileStatus::timeout);
    CHECK(outcome.result.limit == sb::CompileLimit::wall_clock);
    INFO(outcome.result.log);
    CHECK(outcome.result.log.find("wall-clock") != std::string::npos);
  }
  sb::detail::remove_work_dir(setup);
}

TEST_CASE("compile pool: a pooled compiler that cannot start leaves no scratch directory behind", "[sandbox][pool]") {
  if (leap_test::k_address_sanitizer) {
    // UBSan's vptr check tells readable memory with a pipe; with no descriptor left it reports an
    // "invalid vptr" for the exception this test expects. The test needs the descriptors gone.
    WARN(
        "skipped under the asan preset: the descriptor limit this test sets starves UBSan's vptr check, which needs a "
        "pipe");
    return;
  }
  const leap_test::TempDir tmp;
  leap_test::check_in_children(1, [&](int) {  // a child: TMPDIR and the descriptor limit stay its own
    ::setenv("TMPDIR", tmp.path.c_str(), 1);
    int problems = 0;
    {
      sb::CompilerConfig config = pooled();
      config.unconfined = true;  // no private root: the pooled compiler's scratch directory is made on the host
      sb::Compiler c(config);
      const int lowest_free = ::dup(0);
      ::close(lowest_free);
      rlimit saved{};
      ::getrlimit(RLIMIT_NOFILE, &saved);
      rlimit one_more = saved;
      one_more.rlim_cur = static_cast<rlim_t>(lowest_free) + 1;  // the pooled compiler's socket pair cannot be made
      ::setrlimit(RLIMIT_NOFILE, &one_more);
      try {
        (void)c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"});
        problems += 1;  // it must not have started
      } catch (const std::runtime_error& e) {
        problems += std::string(e.what()).find("socketpair") == std::string::npos ? 2 : 0;
      }
      ::setrlimit(RLIMIT_NOFILE, &saved);
    }
    for ([[maybe_unused]] const auto& left : std::filesystem::directory_iterator(tmp.path)) problems += 4;
    return problems;
  });
}

TEST_CASE(
    "compile pool: a pooled compiler that stops making progress mid-compile is ended in its idle window and replaced",
    "[sandbox][pool][limits][idle]") {
  leap_test::require_confinement();
  sb::CompilerConfig config = pooled();
  config.idle_limit = std::chrono::milliseconds(1500);
  sb::Compiler c(config);
  REQUIRE(c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"}).ok());
  const std::vector<int> before = c.pool_stats().pids;
  REQUIRE(before.size() == 1);
  sb::CompileJob slow = heavy_job(k_slow_body);
  slow.options.timeout = std::chrono::seconds(120);
  slow.options.wall_backstop = std::chrono::seconds(600);
  const auto t0 = Clock::now();
  auto pending = std::async(std::launch::async, [&] { return c.compile(slow); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // inside NVRTC by now
  ::kill(before[0], SIGSTOP);
  const sb::CompileResult r = pending.get();
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r.log);
  CHECK(r.status == sb::CompileStatus::timeout);
  CHECK(r.limit == sb::CompileLimit::idle);
  CHECK(r.log.find("made no progress for 1500 ms") != std::string::npos);
  CHECK_FALSE(r.nvrtc_verdict);
  CHECK(took < 120.0);  // long before its CPU limit, let alone the 600 s backstop

  CHECK(c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"}).ok());
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_started == 2);
  CHECK(s.processes_replaced == 1);
  REQUIRE(s.pids.size() == 1);
  CHECK(s.pids[0] != before[0]);
}

TEST_CASE("compile pool: a pooled compiler serves its compile count, then a fresh one takes over", "[sandbox][pool]") {
  leap_test::require_confinement();
  sb::Compiler c(pooled(2));
  for (int i = 0; i < 5; ++i) {
    CHECK(c.compile(
               sb::CompileJob{std::string(leap_test::plain_kernel()) + "// " + std::to_string(i), {}, {}, "kernel.cu"})
              .ok());
  }
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.compiles == 5);
  CHECK(s.processes_started == 3);
  CHECK(s.processes_replaced == 2);
}

TEST_CASE("compile pool: limits end a pooled compile as a result, and the pool goes on", "[sandbox][pool][limits]") {
  leap_test::require_confinement();
  SECTION("address space") {
    if (leap_test::k_sanitizer) {
      WARN(leap_test::k_no_address_space_limits);
      return;
    }
    sb::CompilerConfig config = pooled();
    config.limits.address_space_bytes = 256ull << 20;
    sb::Compiler c(config);
    sb::CompileJob j;
    j.source =
        "#define COMMA ,\n#define A(x) x x x x x x x x x x\n__device__ int v[] = { A(A(A(A(A(A(A(1 COMMA))))))) 0 };\n";
    j.options.timeout = std::chrono::seconds(60);
    const sb::CompileResult r = c.compile(j);
    INFO(r.log);
    CHECK(r.status == sb::CompileStatus::resource_limit);
    CHECK(r.limit == sb::CompileLimit::address_space);
    CHECK(r.log.find("address-space limit (256 MiB") != std::string::npos);
    CHECK(c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"}).ok());
    CHECK(c.pool_stats().processes_replaced == 1);
  }
  SECTION("CPU time is the pooled compiler's from request to reply, never the queue's") {
    sb::CompilerConfig config = pooled();
    config.parallel_compiles = 4;  // four batch threads share one pooled compiler: three always wait
    sb::Compiler c(config);
    leap_test::check_queue_time_not_charged(c, 16);
    CHECK(c.pool_stats().processes_started == 1);
  }
}

TEST_CASE("compile pool: results say what the PCH did, in JSON too, and a cache hit says none", "[sandbox][pool]") {
  leap_test::require_confinement();
  sb::CompilerConfig config = pooled();
  config.cache = std::make_shared<sb::CompileCache>();
  sb::Compiler c(config);
  const sb::CompileResult first = c.compile(heavy_job(k_target_body));
  const sb::CompileResult second = c.compile(heavy_job(k_target_body + "// another candidate\n"));
  const sb::CompileResult cached = c.compile(heavy_job(k_target_body));
  CHECK(first.pch == sb::PchUse::created);
  CHECK(second.pch == sb::PchUse::hit);
  CHECK(cached.cache_hit);
  CHECK(cached.pch == sb::PchUse::none);
  CHECK(nlohmann::json::parse(sb::to_json(second))["pch"] == "hit");
  CHECK(nlohmann::json::parse(sb::to_json(first))["pch"] == "created");

  sb::CompilerConfig off = pooled();
  off.pool.pch = false;
  sb::Compiler no_pch(off);
  CHECK(no_pch.compile(heavy_job(k_target_body)).pch == sb::PchUse::none);
  CHECK(no_pch.compile(heavy_job(k_target_body)).pch == sb::PchUse::none);
  sb::Compiler one_shot(leap_test::config(sb::Isolation::process, 1));
  CHECK(one_shot.compile(heavy_job(k_target_body)).pch == sb::PchUse::none);
}

TEST_CASE("compile pool: a PCH that does not fit the pooled compiler's directory changes nothing but the speed",
          "[sandbox][pool][isolation]") {
  leap_test::require_confinement();
  const sb::CompileJob target = heavy_job(k_target_body);
  sb::Compiler one_shot(leap_test::config(sb::Isolation::process, 1));
  const sb::CompileResult reference = one_shot.compile(target);
  REQUIRE(reference.ok());
  sb::CompilerConfig config = pooled();
  config.pool.pch_scratch_bytes = 4ull << 20;  // far below one PCH of cuda_fp16.h
  sb::Compiler small(config);
  for (int i = 0; i < 2; ++i) {
    const sb::CompileResult r = small.compile(target);
    INFO(r.log);
    CHECK(r.pch == sb::PchUse::none);  // NVRTC could not write it, and says it made none
    check_same(reference, r);
  }
}
