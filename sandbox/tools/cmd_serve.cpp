// SPDX-License-Identifier: Apache-2.0
// leap-sandbox serve: JSON requests on stdin, one response line per request on stdout. The reader
// runs on this thread and `-j` handlers answer through the shared RequestHandler. The reader never
// keeps more than one request's limit of a line, and stops reading while the queue is full, so a
// client that sends faster than the sandbox answers is slowed down instead of growing its memory.
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <variant>

#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <leap/sandbox/run_switches.hpp>

#include "cli.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;

// A line to answer, or the start of one that was too long to keep.
struct Work {
  std::string line;
  std::size_t total_bytes = 0;  // > line.size() when the line was cut at the limit
};

// A queue of at most `capacity` items: push blocks while it is full.
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {}
  void push(Work w) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(w));
    not_empty_.notify_one();
  }
  bool pop(Work& out) {  // false once closed and drained
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return false;
    out = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Work> items_;
  bool closed_ = false;
};

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// Splits stdin into lines; a line past `limit` bytes is kept only up to the limit and counted.
void read_lines(std::size_t limit, BoundedQueue& queue) {
  Work current;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::string_view chunk(buf, static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const std::size_t nl = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, nl);
      current.total_bytes += piece.size();
      if (current.line.size() < limit) current.line.append(piece.substr(0, limit - current.line.size()));
      if (nl == std::string_view::npos) break;
      chunk.remove_prefix(nl + 1);
      if (current.total_bytes > current.line.size() || !blank(current.line)) queue.push(std::move(current));
      current = Work{};
    }
  }
  if (current.total_bytes > current.line.size() || !blank(current.line))
    queue.push(std::move(current));  // no final newline
}

int run_serve(const Arguments& args) {
  unsigned jobs = 2;
  sb::RunSwitches switches;  // --unconfined, --accept-weaker-confinement, --allow-pageable-host-access
  std::size_t queue_capacity = 0;
  sb::RequestLimits limits;
  std::optional<std::size_t> cache_mb;
  std::optional<unsigned> pool_max_compiles;
  bool no_pch = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-j") jobs = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 64));
    else if (switches.parse(a)) continue;
    else if (a == "--queue") queue_capacity = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 4096));
    else if (a == "--max-request-bytes")
      limits.max_request_bytes = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1024, 1L << 30));
    else if (a == "--max-depth") limits.max_depth = static_cast<int>(parse_number(a, option_value(args, i), 2, 10000));
    else if (a == "--cache-max-mb")
      cache_mb = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 1L << 24));
    else if (a == "--compiles-per-process" || a == "--worker-compiles") {
      if (a == "--worker-compiles")  // the 0.1 spelling, accepted until 0.3
        std::cerr << "leap-sandbox serve: --worker-compiles is deprecated; use --compiles-per-process\n";
      pool_max_compiles = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 1000000));
    } else if (a == "--no-pch") no_pch = true;
    else usage_error("serve: unknown option '" + a + "'");
  }
  if (queue_capacity == 0) queue_capacity = 4 * jobs;
  sb::EvaluatorConfig config = evaluator_config("", std::nullopt, true, switches.unconfined, cache_mb);
  // Long-lived confined pooled compilers with precompiled headers: what a stream of candidates that
  // share their headers wants. One pooled compiler per handler.
  config.compiler.isolation = sb::Isolation::pooled;
  switches.apply(config);
  config.compiler.pool.size = jobs;
  if (pool_max_compiles) config.compiler.pool.max_compiles_per_process = *pool_max_compiles;
  if (no_pch) {
    config.compiler.pool.pch = false;
    config.compiler.pch_directory.reset();
  }
  sb::Evaluator evaluator(std::move(config));
  const sb::RequestHandler handler(evaluator, limits);
  std::mutex out_mutex;
  BoundedQueue queue(queue_capacity);

  std::vector<std::thread> pool;
  for (unsigned k = 0; k < jobs; ++k) {
    pool.emplace_back([&] {
      Work w;
      while (queue.pop(w)) {
        const std::string response =
            w.total_bytes > w.line.size() ? handler.too_large(w.line, w.total_bytes) : handler.handle(w.line);
        std::lock_guard lock(out_mutex);
        std::cout << response << "\n" << std::flush;
      }
    });
  }
  read_lines(limits.max_request_bytes, queue);
  queue.close();
  for (std::thread& t : pool) t.join();
  return 0;
}

}  // namespace

const Command serve_command{
    "serve", "serve [options]",
    R"(  Reads JSON requests, one per line, on stdin and writes one JSON response per request on stdout,
  matched by "id" (responses may come out of order). Requests:
    {"id": 1, "op": "info"}
    {"id": 2, "op": "compile", "source": "...", "arch": "sm_90", "std": 17, "default_device": true,
     "defines": {"N": "4"} | ["N=4"], "headers": {"util.cuh": "..."}}   (all but "source" optional;
     headers go through the include jail like the source; the result lists the module's "kernels"
     and gives "advice" when it defines none)
    {"id": 3, "op": "eval", "task": "softmax" | {spec}, "source": "...", "headers": {...}}
                   (every eval is timed, and its seeds are drawn by the server)
  A field an op does not take is refused (bad_request), never ignored.
  Response: {"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "code": ..., "error": "..."}.
  The id comes back exactly as written. Codes: parse_error, request_too_large, invalid_request (these
  three with "id": null), bad_request, internal_error. Every line is answered and the server goes on.
  At end of input the requests in flight finish, then it exits 0.
  Compile results carry "unconfined": true when compiled without the OS confinement, and
  "missing_layers" naming every confinement layer not in force (eval results in their "compile"
  object).
  -j N                    requests handled at a time (default 2; kernels still run one at a time)
  --queue N               requests read ahead of the handlers (default 4 per handler); when full,
                          serve stops reading stdin until a handler is free
  --max-request-bytes N   longest request line (default 4194304); a longer one is not kept whole
  --max-depth N           deepest nesting of arrays and objects in a request (default 64)
  --cache-max-mb N        the disk cache's budget (default 1024); least recently used entries go first
  --compiles-per-process N
                          compiles a pooled compiler serves before it is replaced (default 256;
                          --worker-compiles, its 0.1 spelling, is deprecated). Compiles run in
                          -j long-lived pooled compilers, each confined once (Landlock, seccomp,
                          a private root, rlimits) before it reads any source, keeping
                          NVRTC's precompiled headers; results say "pch": "hit" | "created" | "none"
  --no-pch                no precompiled headers in the pooled compilers, neither their own nor
                          those kept on disk (pch in the cache directory, shared with compile and
                          the fleet members)
  --unconfined            compile without Landlock, seccomp and the private root, for machines that
                          lack them; never for untrusted source
  --accept-weaker-confinement
                          compile where the private root is missing (user namespaces off) with the
                          other layers; without it serve refuses to start on such a machine
  --allow-pageable-host-access
                          evaluate even where device code can reach this machine's pageable memory
                          (see eval; without it the GPU runner refuses on such a device)
)",
    run_serve};

}  // namespace leap_cli
