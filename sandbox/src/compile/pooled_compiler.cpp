// SPDX-License-Identifier: Apache-2.0
#include "compile/pooled_compiler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "compile/compiler_exit.hpp"
#include "confinement/confinement.hpp"
#include "compile/compile_frames.hpp"
#include "common/fd_io.hpp"
#include "common/little_endian.hpp"
#include "compile/result_codec.hpp"

extern char** environ;

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int k_socket_fd = 3;  // where keep_only_descriptors puts the process's end
constexpr std::string_view k_ready = "leap pooled compiler ready";
constexpr std::chrono::seconds k_start_limit{30};           // from fork to "ready": confining takes milliseconds
constexpr const char* k_private_scratch = "/leap-scratch";  // inside the private root

std::uint64_t directory_bytes(const std::string& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) total += it->file_size(size_ec);
  }
  return total;
}

// Everything the process needs before it confines itself: the setup's confinement plus its scratch
// directory. Made in the process, whose parent (the launcher) has a single thread, so allocating there
// cannot meet a lock left held by another thread.
struct Prepared {
  const ChildSetup* setup;
  LandlockPlan landlock;
  PrivateRoot root;
  std::string scratch;  // the scratch directory as the process sees it
  std::string tmpdir;   // "TMPDIR=<scratch>": NVRTC's front end puts its temporary file there when making a PCH
  std::array<char*, 2> environment{};
  PooledCompilerSettings settings;
  Prepared() = default;
  Prepared(const Prepared&) = delete;  // `environment` points into `tmpdir`
};

// The frame the launcher passes on to the process: its settings and where its scratch directory is.
std::string encode_start(const PooledCompilerSettings& settings, const std::string& scratch) {
  std::string out;
  put_u64(out, settings.pch ? 1 : 0);
  put_u64(out, settings.scratch_bytes);
  put_u64(out, settings.pch_heap_bytes);
  put_bytes(out, settings.scratch_source);
  put_bytes(out, scratch);
  return out;
}

bool decode_start(std::string_view in, const ChildSetup& setup, Prepared& p) {
  unsigned long long pch = 0, scratch_bytes = 0, heap = 0;
  if (!get_u64(in, pch) || !get_u64(in, scratch_bytes) || !get_u64(in, heap) ||
      !get_bytes(in, p.settings.scratch_source) || !get_bytes(in, p.scratch) || !in.empty() || p.scratch.empty()) {
    return false;
  }
  p.setup = &setup;
  p.settings.pch = pch != 0;
  p.settings.scratch_bytes = scratch_bytes;
  p.settings.pch_heap_bytes = heap;
  p.landlock = setup.landlock;
  p.root = setup.root;
  if (setup.confined &&
      setup.private_root) {  // the scratch directory is a tmpfs (or the bound source) in the private root
    p.root.scratch = p.scratch;
    p.root.scratch_bytes = p.settings.scratch_bytes;
    p.root.scratch_source = p.settings.scratch_source;
  }
  p.landlock.rules.push_back({p.scratch, true, true});
  p.tmpdir = "TMPDIR=" + p.scratch;
  p.environment = {p.tmpdir.data(), nullptr};
  return true;
}

// The process's life: confine, say ready, then one compile per request until the parent hangs up.
[[noreturn]] void serve_compiles(Prepared& p) {
  const ChildSetup& setup = *p.setup;
  ChildLimits limits;
  limits.address_space_extra = setup.limits.address_space_bytes + p.settings.pch_heap_bytes;
  limits.open_files = setup.limits.max_open_files;
  limits.file_size = p.settings.scratch_bytes;  // a PCH file; the directory's own budget is the tmpfs size
  ::signal(SIGXFSZ, SIG_IGN);                   // a PCH past the file limit fails to write (EFBIG); the compile goes on
  environ = p.environment.data();
  const char* step = "";
  if (const int e = confine_compiler_process(setup, p.root, p.landlock, limits, step); e != 0) {
    exit_confinement_failed("pooled compiler", step, e);
  }
  if (!write_all(k_socket_fd, frame(k_ready))) _exit(3);

  std::string payload;
  while (read_frame(k_socket_fd, payload)) {
    std::string_view in(payload);
    unsigned long long cpu_ns = 0, wall_ns = 0;
    if (!get_u64(in, cpu_ns) || !get_u64(in, wall_ns)) _exit(3);
    std::optional<NvrtcRequest> request = decode_request(in);
    if (!request) _exit(3);
    const bool key_ok =
        request->pch_dir.find('/') == std::string::npos && request->pch_dir.find("..") == std::string::npos;
    request->pch_dir = p.settings.pch && key_ok && !request->pch_dir.empty() ? p.scratch + "/" + request->pch_dir : "";
    const bool name_ok =
        request->create_pch.find('/') == std::string::npos && request->create_pch.find("..") == std::string::npos;
    request->create_pch = name_ok && !request->create_pch.empty() ? p.scratch + "/" + request->create_pch : "";
    const std::chrono::nanoseconds budget(cpu_ns);
    // RLIMIT_CPU as the backstop of the parent's sampling: this compile's budget beyond what the
    // process has used so far (the soft limit may go up again for the next compile; the hard one stays).
    rlimit cpu{};
    ::getrlimit(RLIMIT_CPU, &cpu);
    const auto used = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
    rlim_t soft = static_cast<rlim_t>(std::chrono::ceil<std::chrono::seconds>(used + budget).count()) + 1;
    if (cpu.rlim_max != RLIM_INFINITY) soft = std::min(soft, cpu.rlim_max);
    cpu.rlim_cur = soft;
    ::setrlimit(RLIMIT_CPU, &cpu);
    CompileResult r =
        nvrtc_compile(*request, CLOCK_PROCESS_CPUTIME_ID, budget, Clock::now() + std::chrono::nanoseconds(wall_ns));
    if (ran_out_of_address_space(r)) _exit(k_exit_address_space);
    std::string reply;
    put_u64(reply, static_cast<unsigned long long>(r.pch));
    put_u64(reply, p.settings.pch ? directory_bytes(p.scratch) : 0);
    reply += encode_result(r);
    if (!write_all(k_socket_fd, frame(reply))) _exit(3);
  }
  _exit(0);
}

}  // namespace

void pooled_compiler_main(const ChildSetup& setup, const std::string& settings, int socket, pid_t launcher) {
  if (!die_with_parent(launcher)) _exit(k_exit_parent_gone);
  reset_process_state();
  if (keep_only_descriptors(socket) != 0) _exit(k_exit_confinement_failed);
  // Never freed: this process ends with _exit, and its environment points into it.
  Prepared& p = *new Prepared;
  if (!decode_start(settings, setup, p)) _exit(3);
  serve_compiles(p);
}

PooledCompiler::PooledCompiler(CompileLauncher& launcher, const ChildSetup& setup,
                               const PooledCompilerSettings& settings)
    : address_space_bytes_(setup.limits.address_space_bytes) {
  std::string scratch;
  if (setup.confined && setup.private_root) {
    scratch = k_private_scratch;
  } else if (!settings.scratch_source.empty()) {
    scratch = settings.scratch_source;
  } else {
    host_scratch_.path = make_private_dir("compiler-scratch");
    scratch = host_scratch_.path;
  }

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::runtime_error(std::string("leap::sandbox: socketpair failed: ") + std::strerror(errno));
  }
  try {
    process_.emplace(launcher.start_pooled_compiler(encode_start(settings, scratch), sv[1]));
  } catch (...) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw;
  }
  ::close(sv[1]);  // the process has its own copy now
  pid_ = process_->pid();
  socket_ = sv[0];
  // Wait for "ready": a process that cannot confine itself says why and exits, which is an environment
  // error for the caller, not a compile result.
  std::string data;
  const auto start_deadline = Clock::now() + k_start_limit;
  Watch start;
  start.pid = pid_;
  start.wall_deadline = start_deadline;
  const bool too_slow = watch_compiler_process(socket_, start, data, &has_frame) == CompileLimit::wall_clock;
  const std::optional<std::string_view> ready = complete_frame(data);
  if (!ready || *ready != k_ready) {
    kill_and_reap();
    ::close(socket_);
    socket_ = -1;
    const bool confinement = WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == k_exit_confinement_failed;
    if (confinement && !data.empty()) throw std::runtime_error("leap::sandbox: " + data);
    const std::string how =
        too_slow ? "it was not ready within " + std::to_string(k_start_limit.count()) + " s"
        : WIFSIGNALED(wait_status_)
            ? "it died of signal " + std::to_string(WTERMSIG(wait_status_)) + " before it was ready"
            : "it exited with status " + std::to_string(WEXITSTATUS(wait_status_)) + " before it was ready";
    throw std::runtime_error("leap::sandbox: the pooled compiler could not start (" + how +
                             "); its own errors, if any, are on this process's stderr");
  }
}

void PooledCompiler::kill_and_reap() noexcept {
  if (reaped_ || !process_ || pid_ <= 0) return;
  // The launcher has not reaped the process yet, so neither id can belong to another process; a
  // launcher that is gone took the process with it (PR_SET_PDEATHSIG), and its id is no longer ours.
  if (process_->held()) {
    ::kill(-pid_, SIGKILL);  // its process group: anything it started goes too
    ::kill(pid_, SIGKILL);
  }
  std::optional<ChildExit> ended;
  try {
    ended = process_->release();  // the launcher reaps it and says how it ended
  } catch (...) {}
  wait_status_ = ended ? ended->wait_status : SIGKILL;  // no launcher: killed with it, or soon
  launcher_lost_ = !ended;
  exit_cpu_ = ended ? ended->cpu_seconds : 0.0;
  reaped_ = true;
}

bool PooledCompiler::idle_and_alive() const noexcept {
  pollfd pfd{socket_, POLLIN, 0};
  if (reaped_ || socket_ < 0 || ::poll(&pfd, 1, 0) != 0) return false;
  const char state = process_state(pid_);
  return state != 'T' && state != 't';  // stopped (SIGSTOP, a debugger): it would not read a candidate
}

PooledCompiler::HostScratch::~HostScratch() { remove_private_dir(path, true); }

PooledCompiler::~PooledCompiler() {
  if (socket_ >= 0) ::close(socket_);
  kill_and_reap();  // before host_scratch_, a member, is removed
}

PooledCompiler::Outcome PooledCompiler::compile(const NvrtcRequest& request, ChildBudget budget) {
  const auto t0 = Clock::now();
  Outcome outcome;
  const std::optional<clockid_t> clock = cpu_clock_of(pid_);
  const std::chrono::nanoseconds cpu0 = clock ? cpu_of(*clock) : std::chrono::nanoseconds::zero();
  ++compiles_;

  std::string head;
  put_u64(head, static_cast<unsigned long long>(budget.cpu.count()));
  put_u64(head, static_cast<unsigned long long>(wall_cap(budget).count()));
  // A process that takes nothing of the request is not running it: sent within the backstop or not at all.
  const Sent sent = send_before(socket_, frame(head + encode_request(request)), t0 + budget.wall);

  CompileLimit killed_for = sent == Sent::past_deadline ? CompileLimit::wall_clock : CompileLimit::none;
  std::string data;
  if (sent == Sent::all) {
    const Watch watch{pid_, clock, cpu0 + budget.cpu, budget.idle, t0 + wall_cap(budget), budget.wall};
    killed_for = watch_compiler_process(socket_, watch, data, &has_frame);
  }
  const std::optional<std::string_view> reply = complete_frame(data);

  CompileResult& out = outcome.result;
  std::string_view body = reply.value_or(std::string_view{});
  unsigned long long pch = 0, scratch_used = 0;
  std::optional<CompileResult> decoded;
  if (reply && get_u64(body, pch) && pch <= static_cast<unsigned long long>(PchUse::created) &&
      get_u64(body, scratch_used)) {
    decoded = decode_result(body);
  }
  if (killed_for == CompileLimit::none && decoded) {
    const double cpu = clock ? std::chrono::duration<double>(cpu_of(*clock) - cpu0).count() : 0.0;
    out = std::move(*decoded);
    out.pch = static_cast<PchUse>(pch);
    out.cpu_seconds = cpu;
    outcome.scratch_used = scratch_used;
    // The process reports one limit itself, its output's (and stays alive: nothing went wrong in it).
    if (out.limit == CompileLimit::output_size) killed_for = CompileLimit::output_size;
    if (out.status == CompileStatus::timeout) {  // NVRTC's flow callback stopped it between phases
      mark_stopped_at_cpu_limit(out, budget);
      killed_for = CompileLimit::cpu_time;
      outcome.alive = false;  // a cancelled NVRTC is not trusted with the next candidate
    }
  } else {
    outcome.alive = false;
    kill_and_reap();
    outcome.launcher_lost = launcher_lost_;  // how it ended is not known: not a result (see the header)
    const double cpu = std::max(0.0, exit_cpu_ - std::chrono::duration<double>(cpu0).count());
    out = ended_without_result(wait_status_, killed_for, cpu, budget, address_space_bytes_);
    killed_for = out.limit;
  }
  out.limit = killed_for;
  out.log = same_words_for_every_unopenable_file(std::move(out.log));
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return outcome;
}

}  // namespace leap::sandbox::detail
