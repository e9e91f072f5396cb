// SPDX-License-Identifier: Apache-2.0
// leap-sandbox serve: JSON requests on stdin, one response line per request on stdout. The reader
// runs on this thread and `-j` handlers answer through the shared RequestHandler.
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/request_handler.hpp>

#include "cli.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;

int run_serve(const Arguments& args) {
  unsigned jobs = 2;
  bool unconfined = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-j") jobs = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 64));
    else if (a == "--unconfined") unconfined = true;
    else usage_error("serve: unknown option '" + a + "'");
  }
  sb::Evaluator evaluator(evaluator_config("", std::nullopt, true, unconfined));
  const sb::RequestHandler handler(evaluator);
  std::mutex out_mutex, queue_mutex;
  std::condition_variable cv;
  std::deque<std::string> queue;
  bool closing = false;

  std::vector<std::thread> pool;
  for (unsigned k = 0; k < jobs; ++k) {
    pool.emplace_back([&] {
      for (;;) {
        std::string request;
        {
          std::unique_lock lock(queue_mutex);
          cv.wait(lock, [&] { return closing || !queue.empty(); });
          if (queue.empty()) return;
          request = std::move(queue.front());
          queue.pop_front();
        }
        const std::string response = handler.handle(request);
        std::lock_guard lock(out_mutex);
        std::cout << response << "\n" << std::flush;
      }
    });
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    {
      std::lock_guard lock(queue_mutex);
      queue.push_back(std::move(line));
    }
    cv.notify_one();
  }
  {
    std::lock_guard lock(queue_mutex);
    closing = true;
  }
  cv.notify_all();
  for (std::thread& t : pool) t.join();
  return 0;
}

}  // namespace

const Command serve_command{"serve", "serve [options]",
                            R"(  Reads JSON requests, one per line, on stdin and writes one JSON response per request on stdout,
  matched by "id" (responses may come out of order). Requests:
    {"id": 1, "op": "info"}
    {"id": 2, "op": "compile", "source": "...", "arch": "sm_90", "std": 17, "default_device": true,
     "defines": {"N": "4"} | ["N=4"], "headers": {"util.cuh": "..."}}   (all but "source" optional;
     headers go through the include jail like the source; the result lists the module's "kernels"
     and gives "advice" when it defines none)
    {"id": 3, "op": "eval", "task": "softmax" | {spec}, "source": "...", "seed": 7, "time": true}
  Response: {"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "error": "..."}; a
  line that is not a JSON object with an id gets {"id": null, "ok": false, ...} and the server goes
  on. At end of input the requests in flight finish, then it exits 0.
  Compile results carry "unconfined": true when compiled without the OS confinement (eval results
  in their "compile" object).
  -j N                 requests handled at a time (default 2; kernels still run one at a time)
  --unconfined         compile without Landlock, seccomp and the private root, for machines that
                       lack them; never for untrusted source
)",
                            run_serve};

}  // namespace leap_cli
