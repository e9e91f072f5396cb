// SPDX-License-Identifier: Apache-2.0
// leap-sandbox: the sandbox from the command line. `info` reports versions and the GPU; `compile`
// runs candidate sources through the include jail, the cache and NVRTC.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
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
  } catch (const std::exception& e) {
    std::cerr << "leap-sandbox: " << e.what() << "\n";
    return 2;
  }
  usage_error("unknown command '" + cmd + "'");
}
