// SPDX-License-Identifier: Apache-2.0
// leap-sandbox compile: candidate sources through the include jail, the cache and NVRTC.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include <leap/sandbox/compile_cache.hpp>
#include <leap/sandbox/compile_options.hpp>
#include <leap/sandbox/compiler.hpp>
#include "compile/kernel_diagnostics.hpp"

#include "cli.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;
using nlohmann::json;

struct CompileCommandLine {
  bool as_json = false;
  bool no_cache = false;
  bool quiet = false;
  std::optional<std::string> cache_dir;
  std::optional<std::size_t> cache_max_mb;
  bool no_pch = false;
  std::optional<std::string> pch_dir;
  std::optional<std::size_t> pch_max_mb;
  sb::CompileOptions options;
  sb::CompilerConfig config;
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> header_files;  // NAME, FILE from --header NAME=FILE
};

CompileCommandLine parse(const Arguments& args) {
  CompileCommandLine c;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") c.as_json = true;
    else if (a == "--arch") c.options.arch = option_value(args, i);
    else if (a == "--std") c.options.cxx_standard = static_cast<int>(parse_number(a, option_value(args, i), 11, 20));
    else if (a == "--timeout-ms")
      c.options.timeout = std::chrono::milliseconds(parse_number(a, option_value(args, i), 1, 3600000));
    else if (a == "--cache-dir") c.cache_dir = option_value(args, i);
    else if (a == "--no-cache") c.no_cache = true;
    else if (a == "--no-pch") c.no_pch = true;
    else if (a == "--pch-dir") c.pch_dir = option_value(args, i);
    else if (a == "--pch-max-mb")
      c.pch_max_mb = static_cast<std::size_t>(parse_number(a, option_value(args, i), 64, 1L << 24));
    else if (a == "--cache-max-mb")
      c.cache_max_mb = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 1L << 24));
    else if (a == "-j")
      c.config.parallel_compiles = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 256));
    else if (a.starts_with("-j") && a.size() > 2)
      c.config.parallel_compiles = static_cast<unsigned>(parse_number("-j", a.substr(2), 1, 256));
    else if (a == "-D" || (a.starts_with("-D") && a.size() > 2)) {
      const std::string d = a == "-D" ? option_value(args, i) : a.substr(2);
      const std::size_t eq = d.find('=');
      c.options.defines.push_back({d.substr(0, eq), eq == std::string::npos ? "" : d.substr(eq + 1)});
    } else if (a == "--header") {
      const std::string& spec = option_value(args, i);
      const std::size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        usage_error("compile: --header expects NAME=FILE (e.g. --header sharedmem.cuh=src/sharedmem.cuh), got '" +
                    spec + "'");
      }
      c.header_files.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (a == "--default-device") c.options.default_device = true;
    else if (a == "--no-compat-headers") c.config.compat_headers = false;
    else if (a == "--fast-math") c.options.fast_math = true;
    else if (a == "--line-info") c.options.line_info = true;
    else if (a == "--in-process") c.config.isolation = sb::Isolation::trusted_in_process;
    else if (a == "--unconfined") c.config.unconfined = true;
    else if (a == "--accept-weaker-confinement") c.config.accept_weaker_confinement = true;
    else if (a == "--quiet") c.quiet = true;
    else if (a == "--") {
      c.files.insert(c.files.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (a.starts_with("-") && a != "-") usage_error("compile: unknown option '" + a + "'");
    else c.files.push_back(a);
  }
  if (c.files.empty()) usage_error("compile: no input files");
  if (c.no_cache && c.cache_dir) usage_error("compile: --cache-dir and --no-cache exclude each other");
  try {
    sb::validate(c.options);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }
  return c;
}

// A progress line on stderr for batches of more than 4 files: rewritten in place on a terminal,
// every tenth of the batch otherwise.
class Progress {
 public:
  explicit Progress(bool shown) : shown_(shown), tty_(::isatty(2) != 0) {}
  void operator()(const sb::BatchProgress& p) {
    if (!p.result->ok()) ++failed_;
    if (!shown_) return;
    if (tty_) {
      std::cerr << "\r[" << p.done << "/" << p.total << "] " << failed_ << " failed" << (p.done == p.total ? "\n" : "")
                << std::flush;
    } else if (p.done == p.total || (p.done * 10 / p.total) != ((p.done - 1) * 10 / p.total)) {
      std::cerr << "leap-sandbox: compiled " << p.done << "/" << p.total << ", " << failed_ << " failed\n";
    }
  }

 private:
  bool shown_;
  bool tty_;
  std::size_t failed_ = 0;
};

// ", WEAKER CONFINEMENT (no mount namespace)" for a result compiled with a weaker set the caller accepted.
std::string weaker_text(const sb::CompileResult& r) {
  if (r.unconfined || r.missing_layers.empty()) return "";
  std::string missing;
  for (const std::string& layer : r.missing_layers) missing += (missing.empty() ? "no " : ", no ") + layer;
  return ", WEAKER CONFINEMENT (" + missing + ")";
}

std::optional<std::string> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int run_compile(const Arguments& args) {
  CompileCommandLine c = parse(args);
  std::vector<sb::CompileJob> jobs;
  bool unreadable = false;
  std::vector<sb::Header> headers;  // shipped with every file, under the same rules as a task's headers
  for (const auto& [name, file] : c.header_files) {
    std::optional<std::string> content = read_all(file);
    if (!content) {
      std::cerr << "leap-sandbox: cannot read header " << file << " (given as --header " << name << "=" << file
                << ")\n";
      unreadable = true;
      continue;
    }
    headers.push_back({name, std::move(*content)});
  }
  for (const std::string& f : c.files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::cerr << "leap-sandbox: cannot read " << f << "\n";
      unreadable = true;
      continue;
    }
    sb::CompileJob job;
    job.source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    job.options = c.options;
    job.headers = headers;
    jobs.push_back(std::move(job));
  }
  if (unreadable) return 2;

  if (!c.no_cache) {
    sb::CacheOptions cache;
    const std::string dir = c.cache_dir ? *c.cache_dir : default_cache_dir();
    if (!dir.empty()) cache.directory = dir;
    if (c.cache_max_mb) cache.disk_bytes = *c.cache_max_mb << 20;
    c.config.cache = std::make_shared<sb::CompileCache>(cache);
  }
  if (!c.no_pch) {
    if (c.pch_dir) c.config.pch_directory = *c.pch_dir;
    else if (const std::optional<std::string> dir = default_pch_dir()) c.config.pch_directory = *dir;
    if (c.pch_max_mb) c.config.pch_disk_bytes = static_cast<std::uint64_t>(*c.pch_max_mb) << 20;
  }
  if (c.config.unconfined || c.config.isolation == sb::Isolation::trusted_in_process) warn_unconfined();
  sb::Compiler compiler(c.config);
  Progress progress(!c.quiet && jobs.size() > 4);
  std::vector<sb::CompileResult> results =
      compiler.compile_batch(jobs, [&](const sb::BatchProgress& p) { progress(p); });
  bool all_ok = true;
  for (std::size_t i = 0; i < results.size(); ++i) {
    sb::CompileResult& r = results[i];
    all_ok = all_ok && r.ok();
    // A module that compiles but holds no kernel is still "ok" (it compiled); the advice says why
    // nothing could be launched, usually a kernel template only a host launcher instantiated.
    // The kernels come from the CUBIN's symbol table (to_json lists them), never from the PTX text;
    // the scan's CPU time is charged to the result's cpu_seconds.
    const std::string advice = sb::missing_kernel_advice(r, jobs[i].source, c.files[i]);
    if (c.as_json) {
      json j = {{"file", c.files[i]}};
      j.update(json::parse(sb::to_json(r)));
      if (!advice.empty()) j["advice"] = advice;
      std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
      std::cout << c.files[i] << ": " << sb::to_string(r.status) << " (" << r.seconds << " s"
                << (r.cache_hit ? ", cache hit" : "")
                << (r.limit != sb::CompileLimit::none ? ", limit: " + std::string(sb::to_string(r.limit)) : "")
                << (r.unconfined ? ", UNCONFINED" : "") << weaker_text(r) << ")\n";
      if (!r.log.empty()) std::cout << r.log << (r.log.back() == '\n' ? "" : "\n");
      if (!advice.empty()) std::cout << "note: " << advice << "\n";
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace

const Command compile_command{
    "compile", "compile [options] FILE...",
    R"(  Compiles each FILE as one CUDA translation unit (device code only). Includes resolve to the
  toolkit's headers (cuda_runtime.h, cuda_fp16.h, mma.h, cub/..., curand_kernel.h, ...), to the NVRTC
  compatibility headers (cstdint, cmath, cfloat, cstdio, cassert, limits, type_traits, ...) and to
  headers given with --header; anything else, absolute, relative or macro-built, is refused, every
  refused include listed with what to do.
  Each compile runs in a child confined by the OS (Landlock, seccomp, a private root holding only
  the toolkit's headers, rlimits; `leap-sandbox info` lists what is in force); where Landlock or
  seccomp is missing, compile refuses to run unless --unconfined is given, and where only the private
  root is missing (no user namespaces), unless --accept-weaker-confinement is given.
  --json               one JSON object per file, one per line: file, status (ok|error|timeout|
                       refused|resource_limit), log, seconds, cache_hit, ptx_bytes, cubin_bytes,
                       cpu_seconds, limit (none|cpu_time|wall_clock|address_space|idle|
                       output_size: a PTX or CUBIN over 16 MiB, over 1024 kernels),
                       unconfined, missing_layers (the confinement layers not in force), kernels (by symbol, from the CUBIN; null without one), and advice when
                       the module defines no kernel
  --arch A             target, sm_XY or compute_XY (default sm_90)
  --std N              C++ standard: 11, 14, 17 or 20 (default 17)
  --timeout-ms N       CPU time limit per compile in milliseconds (default 10000); time spent
                       queued does not count, the wall clock stops a compile at 10 x this,
                       and a compiler whose CPU time stands still for 5 s (stopped, deadlocked)
                       is ended with limit idle
  --cache-dir D        on-disk cache directory (default $LEAP_SANDBOX_CACHE_DIR, else
                       $XDG_CACHE_HOME/leap-sandbox, else ~/.cache/leap-sandbox)
  --cache-max-mb N     the disk cache's budget in MiB (default 1024): least recently used entries
                       go first; the directory is 0700 and entries are authenticated (HMAC)
  --no-cache           no cache at all
  --pch-dir D          where precompiled headers are kept on disk (default: pch in the cache
                       directory); shared with eval, serve and the fleet members. A source that
                       starts with #include <...> lines compiles with the PCH of exactly those
                       lines, made once from them alone by a confined process; results say
                       "pch": "hit" when one was used
  --pch-max-mb N       their budget in MiB (default 4096): least recently used go first
  --no-pch             no precompiled headers
  -j N                 compile N files at a time (default: number of CPUs, at most 8)
  -D NAME[=VALUE]      define a macro (repeatable)
  --header NAME=FILE   ship FILE as the header NAME (#include "NAME" finds it; repeatable); it goes
                       through the include jail like the source
  --default-device     functions without an execution space are __device__ (NVRTC's -default-device)
  --no-compat-headers  without the NVRTC compatibility headers (their includes are then refused,
                       each with the libcu++ header to use instead)
  --fast-math          --use_fast_math
  --line-info          --generate-line-info
  --in-process         compile in this process, unconfined (time limit only between NVRTC
                       phases): trusted sources only; every result says "unconfined"
  --unconfined         compile in a child without Landlock, seccomp and the private root (rlimits
                       stay), for machines that lack them; every result says "unconfined". Never
                       for untrusted source: an unconfined NVRTC reads any file this process can
  --accept-weaker-confinement
                       compile where the private root is missing (user namespaces off) with
                       Landlock, seccomp and rlimits only; every result lists the missing layers
                       in missing_layers (text: WEAKER CONFINEMENT). Without it such a machine
                       refuses, rather than confining less without a word
  --quiet              no progress line on stderr
  A progress line goes to stderr when more than 4 files are compiled.
  Exit status: 0 when every file compiled, 1 when any did not, 2 for bad usage or unreadable files.
)",
    run_compile};

}  // namespace leap_cli
