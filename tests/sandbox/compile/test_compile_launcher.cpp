// SPDX-License-Identifier: Apache-2.0
// The compile launcher: one-shot compile children are forked by a process with a single thread, never
// by the caller's (which may hold locks in other threads at that moment); a launcher that is gone or
// stopped is replaced, and a compile it left unreaped is compiled again; a child's pid stays its own
// until the Compiler side has released it; and waiting for a CPU does not count towards the wall-clock
// backstop.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"

#include "compile/compile_child.hpp"
#include "compile/compile_launcher.hpp"
#include "compile/nvrtc_compile.hpp"
#include "compile/result_codec.hpp"
#include "sanitizers.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

// A confined setup and a launcher over it, with the request for one plain kernel.
struct Fixture {
  // A Compiler loads NVRTC's builtins before anything forks (a confined child cannot load them itself).
  sb::Compiler loads_builtins{leap_test::config(sb::Isolation::process, 1)};
  std::vector<std::string> include_dirs{sb::default_cuda_include_dir()};
  sb::detail::ChildSetup setup = sb::detail::make_child_setup(include_dirs, sb::ConfinementLimits{}, true);
  std::unique_ptr<sb::detail::CompileLauncher> launcher = std::make_unique<sb::detail::CompileLauncher>(setup);
  sb::detail::ChildBudget budget{std::chrono::seconds(60), std::chrono::seconds(600), std::chrono::milliseconds(60000)};

  sb::detail::NvrtcRequest request(const std::string& source) const {
    sb::CompileJob job;
    job.source = source;
    return sb::detail::make_nvrtc_request(job, include_dirs);
  }
  ~Fixture() {
    launcher.reset();
    sb::detail::remove_work_dir(setup);
  }
};

}  // namespace

TEST_CASE("compile launcher: the process that forks compile children has one thread, and is their parent",
          "[sandbox][launcher]") {
  leap_test::require_confinement();
  Fixture f;
  // One thread of ours. ThreadSanitizer may keep a thread of its own beside it (it restarts it in a
  // forked child when it sees fit), so there one or two.
  const std::size_t threads = leap_test::threads_of(f.launcher->pid());
  if (leap_test::k_thread_sanitizer) {
    CHECK((threads == 1u || threads == 2u));
  } else {
    CHECK(threads == 1u);
  }
  sb::detail::LaunchedCompile child = f.launcher->launch(f.request(leap_test::plain_kernel()), f.budget);
  CHECK(leap_test::parent_of(child.pid()) == f.launcher->pid());
  CHECK(leap_test::parent_of(f.launcher->pid()) == ::getpid());
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::read(child.result_fd(), buf, sizeof buf)) > 0;)
    answer.append(buf, static_cast<std::size_t>(n));
  // Not reaped until released: the pid cannot be given to another process while the caller may signal it.
  CHECK(::kill(child.pid(), 0) == 0);
  const std::optional<sb::detail::ChildExit> ended = child.release();
  REQUIRE(ended);
  CHECK(WIFEXITED(ended->wait_status));
  CHECK(WEXITSTATUS(ended->wait_status) == 0);
  CHECK(ended->cpu_seconds > 0.0);
  CHECK(::kill(child.pid(), 0) != 0);  // reaped now
  // The answer: what the child did with a stored PCH (8 bytes), then the result.
  REQUIRE(answer.size() > 8);
  const std::optional<sb::CompileResult> result = sb::detail::decode_result(std::string_view(answer).substr(8));
  REQUIRE(result);
  CHECK(result->ok());
}

TEST_CASE("compile launcher: compiles finish while the caller's other threads allocate without pause",
          "[sandbox][launcher]") {
  // Forked from this process instead, a child could inherit an allocator lock held by one of these
  // threads (under a sanitizer's allocator, which does not take its locks around fork) and hang.
  leap_test::require_confinement();
  Fixture f;
  std::optional<leap_test::AllocationChurn> churn(std::in_place);
  std::vector<sb::CompileResult> results;
  for (int i = 0; i < 12; ++i) {
    sb::detail::ChildBudget budget = f.budget;
    budget.idle = std::chrono::seconds(10);  // a child that hangs ends here, as a failure below
    results.push_back(
        sb::detail::run_compile_child(*f.launcher, f.setup, budget, f.request(leap_test::plain_kernel())));
  }
  churn.reset();
  for (const sb::CompileResult& r : results) {
    INFO(r.log);
    CHECK(r.ok());
    CHECK(r.limit == sb::CompileLimit::none);
  }
}

TEST_CASE("compile launcher: a launcher killed from outside is replaced, and compiles go on", "[sandbox][launcher]") {
  leap_test::require_confinement();
  Fixture f;
  const pid_t first = f.launcher->pid();
  ::kill(first, SIGKILL);
  // Whether the kill lands before or while the request is sent, the compile is answered by a new one.
  const sb::CompileResult r =
      sb::detail::run_compile_child(*f.launcher, f.setup, f.budget, f.request(leap_test::plain_kernel()));
  INFO(r.log);
  CHECK(r.ok());
  CHECK(f.launcher->pid() != first);
  CHECK(leap_test::parent_of(f.launcher->pid()) == ::getpid());
}

TEST_CASE("compile launcher: a child abandoned before its release is killed and reaped by the launcher",
          "[sandbox][launcher]") {
  leap_test::require_confinement();
  Fixture f;
  const std::string slow =
      "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
      "__global__ void k(float* p) { float v = p[threadIdx.x];\n  A(A(A(C(v = v * 1.0001f + p[(int)v & 7];)))) p[0] = "
      "v; }\n";
  pid_t pid = 0;
  {
    sb::detail::LaunchedCompile child = f.launcher->launch(f.request(slow), f.budget);
    pid = child.pid();
    CHECK(::kill(pid, 0) == 0);
  }  // dropped without release: the caller went away (an exception, say)
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (::kill(pid, 0) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(::kill(pid, 0) != 0);  // gone, and not a zombie either: kill(0) fails only once it is reaped
  // The launcher serves the next compile as before.
  CHECK(sb::detail::run_compile_child(*f.launcher, f.setup, f.budget, f.request(leap_test::plain_kernel())).ok());
}

TEST_CASE("compile launcher: a stopped launcher is replaced, and the next compile succeeds promptly",
          "[sandbox][launcher]") {
  leap_test::require_confinement();
  Fixture f;
  const pid_t first = f.launcher->pid();
  REQUIRE(::kill(first, SIGSTOP) == 0);
  const auto t0 = Clock::now();
  const sb::CompileResult r =
      sb::detail::run_compile_child(*f.launcher, f.setup, f.budget, f.request(leap_test::plain_kernel()));
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r.log);
  CHECK(r.ok());
  CHECK(took < 10.0);  // the stop is seen in a quarter of a second; the compile itself takes the rest
  CHECK(f.launcher->pid() != first);
  CHECK(f.launcher->replacements() == 1);
  CHECK(::kill(first, 0) != 0);  // killed and reaped, not left stopped
  CHECK(leap_test::parent_of(f.launcher->pid()) == ::getpid());
}

TEST_CASE("compile launcher: a compile whose launcher is stopped before it is reaped is compiled again on a new one",
          "[sandbox][launcher]") {
  leap_test::require_confinement();
  Fixture f;
  const pid_t first = f.launcher->pid();
  // The child compiles on; its launcher is stopped, so it can neither reap it nor say how it ended.
  // The stop comes from a process of its own, not a thread: the launcher started in its place is forked
  // from this process meanwhile, and a thread alive at that fork is, to ThreadSanitizer, one the new
  // launcher leaked (it reports it at exit, and exits 66).
  const pid_t stopper = ::fork();
  REQUIRE(stopper >= 0);
  if (stopper == 0) {
    ::usleep(20000);
    ::kill(first, SIGSTOP);
    ::_exit(0);
  }
  const auto t0 = Clock::now();
  const sb::CompileResult r =
      sb::detail::run_compile_child(*f.launcher, f.setup, f.budget, f.request(leap_test::plain_kernel()));
  int status = 0;
  ::waitpid(stopper, &status, 0);
  INFO(r.log);
  CHECK(r.ok());  // not an error blamed on the candidate, nor an exception
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 15.0);
  CHECK(f.launcher->pid() != first);
  CHECK(::kill(first, 0) != 0);
}

TEST_CASE("compile launcher: a compile merely waiting for a CPU is not ended at its wall-clock backstop",
          "[sandbox][launcher][limits]") {
  // An oversubscribed machine: the compile shares one CPU with a busy thread of normal priority while it
  // runs at nice 10, so it gets at most a tenth of that CPU (weights 110 and 1024), and takes longer
  // than its backstop, set to half the least time that can take, to do its work. (Half, not nearly
  // all: the same compile's CPU time varies by a quarter from one run to the next, warm caches
  // and all; at 0.9 a cheaper second compile finished inside the backstop once in about fifteen runs.)
  // Its limit is CPU time; waiting for a CPU is not a stall.
  leap_test::require_confinement();
  Fixture f;
  const sb::CompileResult alone =
      sb::detail::run_compile_child(*f.launcher, f.setup, f.budget, f.request(leap_test::plain_kernel()));
  REQUIRE(alone.ok());
  const double share = 110.0 / (110.0 + 1024.0);
  cpu_set_t allowed, one;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  REQUIRE(cpu < CPU_SETSIZE);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);                                                      // the first this process may use
  REQUIRE(::sched_setaffinity(f.launcher->pid(), sizeof one, &one) == 0);  // its children inherit both
  REQUIRE(::setpriority(PRIO_PROCESS, static_cast<id_t>(f.launcher->pid()), 10) == 0);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
    while (!stop.load(std::memory_order_relaxed)) {}
  });
  sb::detail::ChildBudget budget = f.budget;
  budget.wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(0.5 * alone.cpu_seconds / share));
  budget.idle = std::chrono::seconds(5);
  const auto t0 = Clock::now();
  const sb::CompileResult r =
      sb::detail::run_compile_child(*f.launcher, f.setup, budget, f.request(leap_test::plain_kernel()));
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  busy.join();
  const double backstop = std::chrono::duration<double>(budget.wall).count();
  INFO(r.log << "\ntook " << took << " s for " << r.cpu_seconds << " s of CPU; backstop " << backstop << " s");
  CHECK(r.ok());
  CHECK(r.limit == sb::CompileLimit::none);
  CHECK(took > backstop);  // it did wait past its backstop, or the test shows nothing
}
