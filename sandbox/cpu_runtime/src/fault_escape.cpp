// SPDX-License-Identifier: Apache-2.0
#include "fault_escape.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace leap::cpu_runtime::detail {
namespace {

struct Watch {
  BlockRunner* runner = nullptr;
  const StackPool* stacks = nullptr;
  const Arena* arena = nullptr;
};
thread_local Watch* tls_watch = nullptr;

constexpr std::size_t k_alt_stack_bytes = std::size_t{64} << 10;
constexpr long k_repeat_ns = 20'000'000;

int time_limit_signal() { return SIGRTMIN + 5; }

std::mutex g_install_mutex;
struct sigaction g_previous_segv {};
struct sigaction g_previous_bus {};

void on_fault(int sig, siginfo_t* info, void* context);
void on_timer(int sig, siginfo_t* info, void* context);

bool ours(const struct sigaction& a, void (*handler)(int, siginfo_t*, void*)) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == handler;
}

// Puts the handler that was there before back, so the fault repeats into it (or, when the signal
// was sent rather than caused, sends it again).
void pass_on(int sig, siginfo_t* info) {
  const struct sigaction& previous = sig == SIGSEGV ? g_previous_segv : g_previous_bus;
  sigaction(sig, &previous, nullptr);
  if (info->si_code <= 0) raise(sig);
}

void on_fault(int sig, siginfo_t* info, void* /*context*/) {
  Watch* w = tls_watch;
  if (w != nullptr && w->runner->in_kernel_code()) {
    const void* address = info->si_addr;
    if (w->arena->guard_holds(address)) w->runner->escape({Failure::shared_out_of_range, address});
    if (w->stacks->guard_owner(address) != nullptr) w->runner->escape({Failure::stack_overflow, address});
  }
  pass_on(sig, info);
}

void on_timer(int /*sig*/, siginfo_t* /*info*/, void* /*context*/) {
  Watch* w = tls_watch;
  if (w == nullptr) return;
  w->runner->request_stop();
  if (w->runner->in_kernel_code()) w->runner->escape({Failure::time_limit, nullptr});
}

void install(int sig, void (*handler)(int, siginfo_t*, void*), struct sigaction* previous) {
  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  if (ours(current, handler)) return;
  if (previous != nullptr) *previous = current;
  struct sigaction a {};
  a.sa_sigaction = handler;
  a.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;  // NODEFER: leaving the handler by a jump keeps the mask as it was
  sigemptyset(&a.sa_mask);
  sigaction(sig, &a, nullptr);
}

}  // namespace

WorkerGuard::WorkerGuard(BlockRunner& runner, const StackPool& stacks, const Arena& arena,
                         std::optional<std::chrono::steady_clock::time_point> deadline) {
  {
    std::lock_guard<std::mutex> lock(g_install_mutex);
    install(SIGSEGV, &on_fault, &g_previous_segv);
    install(SIGBUS, &on_fault, &g_previous_bus);
    if (deadline) install(time_limit_signal(), &on_timer, nullptr);
  }
  stack_t old{};
  if (sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE) != 0) {
    void* p = mmap(nullptr, k_alt_stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      stack_t s{};
      s.ss_sp = p;
      s.ss_size = k_alt_stack_bytes;
      if (sigaltstack(&s, nullptr) == 0) {
        alt_stack_ = p;
      } else {
        munmap(p, k_alt_stack_bytes);
      }
    }
  }
  tls_watch = new Watch{&runner, &stacks, &arena};
  if (deadline) {
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = time_limit_signal();
    ev._sigev_un._tid = gettid();
    timer_t timer{};
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline->time_since_epoch()).count();
      itimerspec spec{};
      spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
      spec.it_interval.tv_nsec = k_repeat_ns;
      timer_settime(timer, TIMER_ABSTIME, &spec, nullptr);
      std::memcpy(&timer_, &timer, sizeof timer);
      has_timer_ = true;
    }
  }
}

WorkerGuard::~WorkerGuard() {
  if (has_timer_) {
    timer_t timer{};
    std::memcpy(&timer, &timer_, sizeof timer);
    timer_delete(timer);
  }
  Watch* watch = tls_watch;
  tls_watch = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  delete watch;
  if (alt_stack_ != nullptr) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(alt_stack_, k_alt_stack_bytes);
  }
}

}  // namespace leap::cpu_runtime::detail
