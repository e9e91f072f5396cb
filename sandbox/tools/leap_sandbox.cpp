// SPDX-License-Identifier: Apache-2.0
// leap-sandbox: the sandbox from the command line. `info` reports versions and the GPU; `compile`
// runs candidate sources through the include jail, the cache and NVRTC.
#include <unistd.h>

#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <leap/sandbox/sandbox.hpp>
#include <leap/version.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sb = leap::sandbox;
using nlohmann::json;

namespace {

constexpr const char* k_help = R"(leap-sandbox - compile CUDA kernel candidates safely with NVRTC

Usage:
  leap-sandbox info [--json]
  leap-sandbox compile [options] FILE...
  leap-sandbox tasks [--json]
  leap-sandbox eval [options] TASK CANDIDATE.cu
  leap-sandbox serve [options]
  leap-sandbox --version | --help

info
  Prints the leap, NVRTC and CUPTI versions, the GPU architectures NVRTC supports and the GPU
  status (found through a forked probe that loads libcuda.so.1; "no driver", "stub driver" and
  "no device" come with the reason). Exits 0.
  --json               one JSON object instead of text

compile
  Compiles each FILE as one CUDA translation unit (device code only). Includes resolve only to
  the allow-listed CUDA headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, mma.h, cooperative_groups,
  cuda/...); anything else, absolute, relative or macro-built, is refused.
  --json               one JSON object per file, one per line: file, status (ok|error|timeout|
                       refused), log, seconds, cache_hit, ptx_bytes, cubin_bytes
  --arch A             target, sm_XY or compute_XY (default sm_90)
  --std N              C++ standard: 11, 14, 17 or 20 (default 17)
  --timeout-ms N       wall-clock limit per compile in milliseconds (default 10000)
  --cache-dir D        on-disk cache directory (default $LEAP_SANDBOX_CACHE_DIR, else
                       $XDG_CACHE_HOME/leap-sandbox, else ~/.cache/leap-sandbox)
  --no-cache           no cache at all
  -j N                 compile N files at a time (default: number of CPUs, at most 8)
  -D NAME[=VALUE]      define a macro (repeatable)
  --fast-math          --use_fast_math
  --line-info          --generate-line-info
  --in-process         compile in this process (time limit only between NVRTC phases; for
                       trusted sources) instead of a watchdogged child per compile
  --quiet              no progress line on stderr
  A progress line goes to stderr when more than 4 files are compiled.
  Exit status: 0 when every file compiled, 1 when any did not, 2 for bad usage or unreadable files.

tasks
  Lists the built-in tasks with their variants (reference, fast, wrong, broken).
  --json               a JSON array: each task's full spec, reference source included, and its variants

eval
  Evaluates CANDIDATE.cu against TASK (a built-in task name or a task spec file): compile, then run,
  check against the reference (fresh random inputs per trial, poisoned outputs, inputs checked
  unchanged, guard zones) and time it (CUPTI) in a worker process that a watchdog kills past the
  task's time limit. Without a GPU the compile verdict is real and a compiling candidate gets status
  no_gpu. Prints a summary, or with --json one object: status, verdict, speedup, timings, compile,
  cuda_error, detail, feedback, error, seed, trials.
  --json               JSON output
  --seed N             base seed of the trials (default: random)
  --no-time            verdict only, no timing
  --arch A             compile target (default: the GPU's, else sm_90)
  Exit status: 0 a verdict was reached, 3 no GPU (compiled, not run), 2 bad input (unknown task,
  malformed spec, unreadable file), 1 the harness failed.

serve
  Reads JSON requests, one per line, on stdin and writes one JSON response per request on stdout,
  matched by "id" (responses may come out of order). Requests:
    {"id": 1, "op": "info"}
    {"id": 2, "op": "compile", "source": "...", "arch": "sm_90"}
    {"id": 3, "op": "eval", "task": "softmax" | {spec}, "source": "...", "seed": 7, "time": true}
  Response: {"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "error": "..."}; a
  line that is not a JSON object with an id gets {"id": null, "ok": false, ...} and the server goes
  on. At end of input the requests in flight finish, then it exits 0.
  -j N                 requests handled at a time (default 2; kernels still run one at a time)

  --version            print the version and exit
  --help, -h           print this help and exit
)";

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "leap-sandbox: " << what << "\n(try leap-sandbox --help)\n";
  std::exit(2);
}

long parse_number(const std::string& opt, const std::string& text, long lo, long hi) {
  long v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || p != text.data() + text.size() || v < lo || v > hi) {
    usage_error(opt + " expects a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + text + "'");
  }
  return v;
}

std::string versions_text() {
  const sb::NvrtcVersion v = sb::nvrtc_version();
  return std::string("leap ") + leap::version_string + ", NVRTC " + std::to_string(v.major) + "." +
         std::to_string(v.minor) + ", CUPTI API " + std::to_string(sb::cupti_api_version());
}

int cmd_info(const std::vector<std::string>& args) {
  bool as_json = false;
  for (const std::string& a : args) {
    if (a == "--json") as_json = true;
    else usage_error("info: unknown option '" + a + "'");
  }
  const sb::NvrtcVersion v = sb::nvrtc_version();
  const std::vector<int> archs = sb::supported_archs();
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (as_json) {
    json devices = json::array();
    for (const sb::DeviceInfo& d : gpu.devices) {
      devices.push_back({{"ordinal", d.ordinal}, {"name", d.name}, {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                         {"total_memory", d.total_memory}});
    }
    const json j = {{"leap_version", leap::version_string},
                    {"nvrtc_version", std::to_string(v.major) + "." + std::to_string(v.minor)},
                    {"cupti_api_version", sb::cupti_api_version()},
                    {"supported_archs", archs},
                    {"cuda_include_dir", sb::default_cuda_include_dir()},
                    {"gpu", {{"status", std::string(sb::to_string(gpu.state))}, {"available", gpu.ok()},
                             {"driver_version", gpu.driver_version}, {"reason", gpu.reason}, {"devices", devices}}}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << versions_text() << "\nsupported archs:";
  for (int a : archs) std::cout << " sm_" << a;
  std::cout << "\nCUDA headers: " << sb::default_cuda_include_dir() << "\nGPU: " << sb::to_string(gpu.state);
  if (!gpu.reason.empty()) std::cout << " (" << gpu.reason << ")";
  if (gpu.driver_version > 0) std::cout << ", driver " << gpu.driver_version / 1000 << "." << gpu.driver_version % 1000 / 10;
  std::cout << "\n";
  for (const sb::DeviceInfo& d : gpu.devices) {
    std::cout << "  device " << d.ordinal << ": " << d.name << ", sm_" << d.cc_major << d.cc_minor << ", "
              << d.total_memory / (1024 * 1024) << " MiB\n";
  }
  return 0;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("LEAP_SANDBOX_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/leap-sandbox";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/leap-sandbox";
  return {};
}

int cmd_compile(const std::vector<std::string>& args) {
  bool as_json = false, no_cache = false, quiet = false;
  std::optional<std::string> cache_dir;
  sb::CompileOptions options;
  sb::CompilerConfig config;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--json") as_json = true;
    else if (a == "--arch") options.arch = value();
    else if (a == "--std") options.cxx_standard = static_cast<int>(parse_number(a, value(), 11, 20));
    else if (a == "--timeout-ms") options.timeout = std::chrono::milliseconds(parse_number(a, value(), 1, 3600000));
    else if (a == "--cache-dir") cache_dir = value();
    else if (a == "--no-cache") no_cache = true;
    else if (a == "-j") config.workers = static_cast<unsigned>(parse_number(a, value(), 1, 256));
    else if (a.starts_with("-j") && a.size() > 2) config.workers = static_cast<unsigned>(parse_number("-j", a.substr(2), 1, 256));
    else if (a == "-D" || (a.starts_with("-D") && a.size() > 2)) {
      const std::string d = a == "-D" ? value() : a.substr(2);
      const std::size_t eq = d.find('=');
      options.defines.push_back({d.substr(0, eq), eq == std::string::npos ? "" : d.substr(eq + 1)});
    } else if (a == "--fast-math") options.fast_math = true;
    else if (a == "--line-info") options.line_info = true;
    else if (a == "--in-process") config.isolation = sb::Isolation::in_process;
    else if (a == "--quiet") quiet = true;
    else if (a == "--") {
      files.insert(files.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (a.starts_with("-") && a != "-") usage_error("compile: unknown option '" + a + "'");
    else files.push_back(a);
  }
  if (files.empty()) usage_error("compile: no input files");
  if (no_cache && cache_dir) usage_error("compile: --cache-dir and --no-cache exclude each other");
  try {
    sb::validate(options);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }

  std::vector<sb::CompileJob> jobs;
  bool unreadable = false;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::cerr << "leap-sandbox: cannot read " << f << "\n";
      unreadable = true;
      continue;
    }
    sb::CompileJob job;
    job.source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    job.options = options;
    jobs.push_back(std::move(job));
  }
  if (unreadable) return 2;

  if (!no_cache) {
    sb::CacheOptions co;
    const std::string dir = cache_dir ? *cache_dir : default_cache_dir();
    if (!dir.empty()) co.directory = dir;
    config.cache = std::make_shared<sb::CompileCache>(co);
  }
  sb::Compiler compiler(config);
  const bool show_progress = !quiet && jobs.size() > 4;
  const bool tty = ::isatty(2) != 0;
  std::size_t failed = 0;
  auto progress = [&](const sb::BatchProgress& p) {
    if (!p.result->ok()) ++failed;
    if (!show_progress) return;
    if (tty) {
      std::cerr << "\r[" << p.done << "/" << p.total << "] " << failed << " failed" << (p.done == p.total ? "\n" : "") << std::flush;
    } else if (p.done == p.total || (p.done * 10 / p.total) != ((p.done - 1) * 10 / p.total)) {
      std::cerr << "leap-sandbox: compiled " << p.done << "/" << p.total << ", " << failed << " failed\n";
    }
  };
  const std::vector<sb::CompileResult> results = compiler.compile_batch(jobs, progress);
  bool all_ok = true;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const sb::CompileResult& r = results[i];
    all_ok = all_ok && r.ok();
    if (as_json) {
      const json j = {{"file", files[i]}, {"status", std::string(sb::to_string(r.status))}, {"log", r.log},
                      {"seconds", r.seconds}, {"cache_hit", r.cache_hit}, {"ptx_bytes", r.ptx.size()},
                      {"cubin_bytes", r.cubin.size()}};
      std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
      std::cout << files[i] << ": " << sb::to_string(r.status) << " (" << r.seconds << " s" << (r.cache_hit ? ", cache hit" : "") << ")\n";
      if (!r.log.empty()) std::cout << r.log << (r.log.back() == '\n' ? "" : "\n");
    }
  }
  return all_ok ? 0 : 1;
}

std::optional<sb::TaskSpec> find_task(const std::string& name_or_file, std::string& error) {
  if (const sb::BuiltinTask* t = sb::find_builtin_task(name_or_file)) return t->spec;
  std::ifstream probe(name_or_file);
  if (!probe) {
    std::string names;
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) names += (names.empty() ? "" : ", ") + t.spec.name;
    error = "unknown task '" + name_or_file + "' (not a built-in task: " + names + "; and no such spec file)";
    return std::nullopt;
  }
  try {
    return sb::load_task_file(name_or_file);
  } catch (const sb::TaskError& e) {
    error = e.what();
    return std::nullopt;
  }
}

json task_json(const sb::BuiltinTask& t) {
  json j = json::parse(sb::task_to_json(t.spec));
  json variants = json::array();
  for (const sb::TaskVariant& v : t.variants) variants.push_back({{"name", v.name}, {"expect", v.expect}});
  j["variants"] = variants;
  return j;
}

int cmd_tasks(const std::vector<std::string>& args) {
  bool as_json = false;
  for (const std::string& a : args) {
    if (a == "--json") as_json = true;
    else usage_error("tasks: unknown option '" + a + "'");
  }
  if (as_json) {
    json all = json::array();
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) all.push_back(task_json(t));
    std::cout << all.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    std::cout << t.spec.name << " (kernel " << t.spec.entry << "; variants:";
    for (const sb::TaskVariant& v : t.variants) std::cout << " " << v.name;
    std::string d = t.spec.description;
    if (d.size() > 160) d = d.substr(0, 157) + "...";
    std::cout << ")\n  " << d << "\n";
  }
  return 0;
}

json compile_json(const sb::CompileResult& r) {
  return {{"status", std::string(sb::to_string(r.status))}, {"log", r.log}, {"seconds", r.seconds},
          {"cache_hit", r.cache_hit}, {"ptx_bytes", r.ptx.size()}, {"cubin_bytes", r.cubin.size()}};
}

sb::EvaluatorConfig evaluator_config(const std::string& arch, std::optional<std::uint64_t> seed, bool time) {
  sb::EvaluatorConfig c;
  c.arch = arch;
  c.seed = seed;
  c.time = time;
  sb::CacheOptions co;
  if (const std::string dir = default_cache_dir(); !dir.empty()) co.directory = dir;
  c.compiler.cache = std::make_shared<sb::CompileCache>(co);
  return c;
}

int cmd_eval(const std::vector<std::string>& args) {
  bool as_json = false, time = true;
  std::optional<std::uint64_t> seed;
  std::string arch;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--json") as_json = true;
    else if (a == "--no-time") time = false;
    else if (a == "--seed") seed = static_cast<std::uint64_t>(parse_number(a, value(), 0, std::numeric_limits<long>::max()));
    else if (a == "--arch") arch = value();
    else if (a.starts_with("-") && a != "-") usage_error("eval: unknown option '" + a + "'");
    else positional.push_back(a);
  }
  if (positional.size() != 2) usage_error("eval: expected TASK CANDIDATE.cu");
  std::string error;
  const std::optional<sb::TaskSpec> task = find_task(positional[0], error);
  if (!task) {
    std::cerr << "leap-sandbox: " << error << "\n";
    return 2;
  }
  std::ifstream in(positional[1], std::ios::binary);
  if (!in) {
    std::cerr << "leap-sandbox: cannot read " << positional[1] << "\n";
    return 2;
  }
  const std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  sb::Evaluator evaluator(evaluator_config(arch, seed, time));
  const sb::EvalResult r = evaluator.evaluate(*task, source);
  if (as_json) {
    std::cout << sb::to_json(r) << "\n";
  } else {
    std::cout << task->name << ": " << sb::to_string(r.status);
    if (r.verdict) std::cout << ", " << leap::to_string(*r.verdict);
    if (r.speedup == r.speedup) std::cout << ", speedup " << r.speedup << "x";
    std::cout << "\n" << (r.error.empty() ? r.feedback : r.error) << "\n";
  }
  switch (r.status) {
    case sb::EvalStatus::verdict: return 0;
    case sb::EvalStatus::no_gpu: return 3;
    case sb::EvalStatus::error: return 1;
  }
  return 1;
}

// serve: a reader on this thread, `jobs` handlers; one output line per request, written whole.
int cmd_serve(const std::vector<std::string>& args) {
  unsigned jobs = 2;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-j" && i + 1 < args.size()) jobs = static_cast<unsigned>(parse_number(a, args[++i], 1, 64));
    else usage_error("serve: unknown option '" + a + "'");
  }
  sb::Evaluator evaluator(evaluator_config("", std::nullopt, true));
  std::mutex out_mutex, queue_mutex;
  std::condition_variable cv;
  std::deque<json> queue;
  bool closing = false;
  auto respond = [&](const json& j) {
    const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(out_mutex);
    std::cout << line << "\n" << std::flush;
  };
  auto handle = [&](const json& req) {
    const json id = req.at("id");
    try {
      const std::string op = req.value("op", "");
      if (op == "info") {
        const sb::GpuStatus& g = evaluator.gpu();
        respond({{"id", id}, {"ok", true}, {"result", {{"leap_version", leap::version_string}, {"versions", versions_text()},
                 {"arch", evaluator.arch()}, {"gpu", {{"status", std::string(sb::to_string(g.state))}, {"available", g.ok()}, {"reason", g.reason}}}}}});
      } else if (op == "compile") {
        if (!req.contains("source") || !req.at("source").is_string()) throw std::invalid_argument("compile needs a string \"source\"");
        sb::CompileJob job;
        job.source = req.at("source").get<std::string>();
        job.options.arch = req.value("arch", evaluator.arch());
        respond({{"id", id}, {"ok", true}, {"result", compile_json(evaluator.compiler().compile(job))}});
      } else if (op == "eval") {
        if (!req.contains("source") || !req.at("source").is_string()) throw std::invalid_argument("eval needs a string \"source\"");
        if (!req.contains("task")) throw std::invalid_argument("eval needs a \"task\" (a built-in name or a spec object)");
        const json& t = req.at("task");
        sb::TaskSpec task;
        if (t.is_string()) {
          const sb::BuiltinTask* b = sb::find_builtin_task(t.get<std::string>());
          if (b == nullptr) throw std::invalid_argument("unknown task '" + t.get<std::string>() + "'");
          task = b->spec;
        } else {
          task = sb::parse_task(t.dump());
        }
        const sb::EvalResult r = evaluator.evaluate(task, req.at("source").get<std::string>());
        respond({{"id", id}, {"ok", true}, {"result", json::parse(sb::to_json(r))}});
      } else {
        throw std::invalid_argument("unknown op '" + op + "' (compile, eval or info)");
      }
    } catch (const std::exception& e) {
      respond({{"id", id}, {"ok", false}, {"error", e.what()}});
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < jobs; ++k) {
    pool.emplace_back([&] {
      for (;;) {
        json req;
        {
          std::unique_lock lock(queue_mutex);
          cv.wait(lock, [&] { return closing || !queue.empty(); });
          if (queue.empty()) return;
          req = std::move(queue.front());
          queue.pop_front();
        }
        handle(req);
      }
    });
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json req;
    try {
      req = json::parse(line);
    } catch (const json::parse_error& e) {
      respond({{"id", nullptr}, {"ok", false}, {"error", std::string("malformed request: ") + e.what()}});
      continue;
    }
    if (!req.is_object() || !req.contains("id")) {
      respond({{"id", nullptr}, {"ok", false}, {"error", "malformed request: expected a JSON object with an \"id\""}});
      continue;
    }
    {
      std::lock_guard lock(queue_mutex);
      queue.push_back(std::move(req));
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

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) usage_error("missing command");
  const std::string cmd = args.front();
  args.erase(args.begin());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << k_help;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "leap-sandbox " << versions_text() << "\n";
    return 0;
  }
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << k_help;
      return 0;
    }
  }
  try {
    if (cmd == "info") return cmd_info(args);
    if (cmd == "compile") return cmd_compile(args);
    if (cmd == "tasks") return cmd_tasks(args);
    if (cmd == "eval") return cmd_eval(args);
    if (cmd == "serve") return cmd_serve(args);
  } catch (const std::exception& e) {
    std::cerr << "leap-sandbox: " << e.what() << "\n";
    return 2;
  }
  usage_error("unknown command '" + cmd + "'");
}
