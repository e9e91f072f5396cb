// SPDX-License-Identifier: Apache-2.0
// sandbox/src/compile: the compile service. NVRTC behind the include jail and the compatibility
// headers, run in one-shot children, pooled compilers or in process; the compile cache, stored PCHs,
// the CUBIN's ELF reader and the kernel diagnostics. Not here: how a compile process is confined
// (confinement/), running or checking kernels (evaluation/), serve's protocol (protocol/).
#include "leap/sandbox/compiler.hpp"

#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <utility>

#include "compile/compile_child.hpp"
#include "compile/compile_launcher.hpp"
#include "compile/compile_pool.hpp"
#include "compile/compiler_exit.hpp"
#include "compile/elf_kernels.hpp"
#include "compile/leading_includes.hpp"
#include "compile/nvrtc_compile.hpp"
#include "compile/output_limits.hpp"
#include "compile/pch_heap.hpp"
#include "compile/pch_store.hpp"
#include "compile/pooled_compiler.hpp"
#include "compile/compat_headers.hpp"
#include "confinement/confinement.hpp"
#include "compile/include_jail.hpp"

#ifndef LEAP_SANDBOX_CUDA_INCLUDE_DIR
#define LEAP_SANDBOX_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace leap::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string canonical(const std::string& p) {
  std::error_code ec;
  std::filesystem::path c = std::filesystem::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

// "name(12): error: ..." - the file names a diagnostic points at.
std::vector<std::string> diagnostic_files(std::string_view log) {
  std::vector<std::string> files;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t colon = line.find("): ");
    if (colon == std::string_view::npos || line.starts_with(" ")) continue;
    const std::size_t open = line.rfind('(', colon);
    if (open == std::string_view::npos || open == 0) continue;
    const std::string_view num = line.substr(open + 1, colon - open - 1);
    if (num.empty() || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    files.emplace_back(line.substr(0, open));
  }
  return files;
}

// NVRTC's own headers live inside the library, not on disk, and their diagnostics carry a bare name
// such as "__nv_nvrtc_builtin_header.h(4431)". A candidate cannot ship a header, so such a name
// cannot be a host file the jail let through; the notes in them are what a policy needs to see
// after calling an intrinsic with the wrong arguments.
bool is_nvrtc_builtin_header(std::string_view name) {
  return name.starts_with("__nv_nvrtc_builtin") && name.find('/') == std::string_view::npos;
}

// NVRTC dlopens libnvrtc-builtins on its first compile. In process isolation that first compile
// happens in every forked child, and a child that calls dlopen while another thread of the parent
// held the loader's lock at fork time can hang until the watchdog kills it. Loading the library once
// in the parent, before any fork, leaves the children nothing to load. Best effort: NVRTC still
// finds the library itself if this fails.
// A confined child cannot load it at all (Landlock lets it read the headers only), so there the
// preload is required; its failure is reported by name.
bool preload_nvrtc_builtins(const NvrtcVersion& version, std::string& error) {
  static std::once_flag once;
  static bool loaded = false;
  static std::string failure;
  std::call_once(once, [&] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&nvrtcCompileProgram), &info) == 0 || info.dli_fname == nullptr) {
      failure = "cannot find where libnvrtc was loaded from";
      return;
    }
    const std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path();
    const std::string name =
        "libnvrtc-builtins.so." + std::to_string(version.major) + "." + std::to_string(version.minor);
    loaded = ::dlopen((dir / name).c_str(), RTLD_NOW | RTLD_NODELETE) != nullptr ||
             ::dlopen(name.c_str(), RTLD_NOW | RTLD_NODELETE) != nullptr;
    if (!loaded) {
      const char* e = ::dlerror();
      failure = "cannot load " + name + ": " + (e != nullptr ? e : "unknown error");
    }
  });
  error = failure;
  return loaded;
}

std::chrono::nanoseconds thread_cpu() { return detail::cpu_of(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace

NvrtcVersion nvrtc_version() {
  NvrtcVersion v;
  nvrtcVersion(&v.major, &v.minor);
  return v;
}

std::vector<int> supported_archs() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::uint64_t nvrtc_pch_heap_bytes() {
  std::size_t n = 0;
  return nvrtcGetPCHHeapSize(&n) == NVRTC_SUCCESS ? n : 0;
}

unsigned cupti_api_version() {
  std::uint32_t v = 0;
  return cuptiGetVersion(&v) == CUPTI_SUCCESS ? v : 0u;
}

std::string default_cuda_include_dir() {
  // Prefer the headers next to the libnvrtc actually loaded (<root>/lib/libnvrtc.so -> <root>/include),
  // so an installed leap keeps working when the toolkit lives elsewhere than at build time.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&nvrtcCompileProgram), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) {
      const std::filesystem::path inc = lib.parent_path().parent_path() / "include";
      if (std::filesystem::exists(inc / "cuda_fp16.h", ec)) return inc.string();
    }
  }
  return LEAP_SANDBOX_CUDA_INCLUDE_DIR;
}

// The job NVRTC sees: the task's headers, then the compatibility stand-ins it does not shadow.
CompileJob with_compat_headers(const CompileJob& job) {
  CompileJob out = job;
  for (const CompatHeader& c : compat_headers()) {
    const bool shadowed =
        std::any_of(job.headers.begin(), job.headers.end(), [&](const Header& h) { return h.name == c.name; });
    if (!shadowed) out.headers.push_back({std::string(c.name), std::string(c.content)});
  }
  return out;
}

struct Compiler::Impl {
  CompilerConfig config;
  IncludePolicy policy;  // config.includes, plus the compatibility headers' names while they are on
  std::vector<std::string> include_dirs;
  std::vector<PathScrub> scrubs;
  std::vector<std::string> jail_roots;  // diagnostics may point below these
  std::string version_tag;
  detail::ChildSetup child;  // process isolation: the confinement every compile child (or pooled compiler) applies
  std::vector<std::string> missing_layers;    // what every result says was not in force
  std::unique_ptr<detail::CompilePool> pool;  // Isolation::pooled
  // Isolation::process and pooled: forks every compile child and pooled compiler
  std::unique_ptr<detail::CompileLauncher> launcher;
  std::unique_ptr<detail::PchStore> pch_store;  // CompilerConfig::pch_directory, where usable
  std::uint64_t pch_heap = 0;
  mutable std::mutex pch_mutex;
  StoredPchStats pch_stats;
  std::set<std::string> pch_failed;  // keys whose prefix NVRTC refused: not tried again by this Compiler
  std::map<std::string, std::optional<bool>> guarded_files;  // guarded_files_of, by header name

  // Whether including `name` again adds nothing, wherever NVRTC may find it: every in-memory header of
  // that name and every file of that name in the include directories must have an include guard or
  // #pragma once (leading_includes.hpp); a name found nowhere does not. The files' answers are kept
  // (the toolkit does not change under a running Compiler).
  bool guarded_header(const std::string& name, const detail::NvrtcRequest& request) {
    bool found = false;
    for (const Header& h : request.headers) {
      if (h.name != name) continue;
      if (!detail::has_include_guard(h.content)) return false;
      found = true;
    }
    const std::optional<bool> files = guarded_files_of(name);
    return files ? *files : found;
  }

  // Whether every file `name` names in the include directories is guarded; nullopt when there is none.
  std::optional<bool> guarded_files_of(const std::string& name) {
    {
      std::lock_guard lock(pch_mutex);
      if (const auto it = guarded_files.find(name); it != guarded_files.end()) return it->second;
    }
    std::optional<bool> answer;
    for (const std::string& dir : include_dirs) {
      std::error_code ec;
      const std::filesystem::path path = std::filesystem::canonical(std::filesystem::path(dir) / name, ec);
      if (ec || !std::filesystem::is_regular_file(path, ec)) continue;
      // Only the toolkit's own files are read: a link that leads out of its include directories is not.
      const bool inside = std::any_of(jail_roots.begin(), jail_roots.end(), [&](const std::string& root) {
        return path.string().starts_with(canonical(root) + "/");
      });
      std::ifstream in(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      answer = answer.value_or(true) && inside && !in.bad() && detail::has_include_guard(text);
    }
    std::lock_guard lock(pch_mutex);
    guarded_files.emplace(name, answer);
    return answer;
  }

  // What choosing a stored PCH cost the request: the CPU of making it, when this request made it.
  struct StoredPchCost {
    std::chrono::nanoseconds cpu{0};
    bool out_of_cpu = false;  // the making reached the request's CPU limit
  };

  // Sets request.use_pch to the stored PCH of the include list the source's leading part means
  // (leading_includes.hpp), making it first when there is none. The PCH is made by a fresh pooled
  // compiler that is sent that list alone (never the candidate's source) and the request's options and
  // in-memory headers, all of them in the key: so what it writes is a function of the key, and a
  // candidate can choose which PCH it uses, not what is in it. The pooled compiler is confined like any
  // other (Landlock, seccomp, private root); its one writable place is a fresh directory of the
  // store's, where NVRTC writes the file, which the parent then renames into place and records.
  // Making a PCH is charged to the request that needs it, within what is left of its CPU limit
  // (`budget.cpu`): a candidate that asks for new PCHs pays for them.
  StoredPchCost attach_stored_pch(detail::NvrtcRequest& request, const detail::ChildBudget& budget) {
    const detail::LeadingIncludes leading = detail::leading_includes(
        request.source, [&](const std::string& name) { return guarded_header(name, request); });
    if (leading.names.empty()) return {};
    const std::string prefix = detail::pch_prefix_text(leading.names);
    const std::string key = detail::stored_pch_key(request, prefix, version_tag, pch_stats.heap_address, pch_heap);
    bool refused = false;
    std::optional<std::string> path = pch_store->find(key, &refused);
    {
      std::lock_guard lock(pch_mutex);
      if (refused) ++pch_stats.refused;
      if (path) ++pch_stats.found;
      if (!path && pch_failed.contains(key)) return {};
    }
    StoredPchCost cost;
    if (!path) path = create_stored_pch(key, prefix, request, budget, cost);
    if (path) {
      request.use_pch = *path;
      request.pch_source = leading.pch_source;
      request.pch_dir.clear();
    }
    return cost;
  }

  std::optional<std::string> create_stored_pch(const std::string& key, const std::string& prefix,
                                               const detail::NvrtcRequest& request, const detail::ChildBudget& budget,
                                               StoredPchCost& cost) {
    const detail::PchStore::Lock lock = pch_store->lock();                    // one creation at a time on the machine
    if (std::optional<std::string> made = pch_store->find(key)) return made;  // by another process meanwhile
    const std::string incoming = pch_store->make_incoming();
    std::optional<std::string> stored;
    bool failed_for_the_prefix = false;
    {
      detail::PooledCompilerSettings settings;
      settings.pch = false;
      settings.scratch_bytes = config.pool.pch_scratch_bytes;
      settings.pch_heap_bytes = pch_heap;
      settings.scratch_source = incoming;
      detail::PooledCompiler creator(*launcher, child, settings);
      detail::NvrtcRequest make;
      make.source = prefix;
      make.file_name = "leap-pch-prefix.cu";
      make.headers = request.headers;
      make.flags = request.flags;
      make.want_ptx = false;
      make.create_pch = "prefix.pch";
      const detail::PooledCompiler::Outcome outcome = creator.compile(make, budget);
      cost.cpu = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(outcome.result.cpu_seconds));
      cost.out_of_cpu = outcome.result.limit == CompileLimit::cpu_time;
      if (outcome.result.status == CompileStatus::ok) stored = pch_store->adopt(key, incoming + "/prefix.pch");
      // NVRTC's own verdict on the prefix (a header that is not there, say) holds for every later request
      // with this key; a limit, or a process that died, says nothing about it.
      failed_for_the_prefix = outcome.result.status == CompileStatus::error && outcome.result.nvrtc_verdict;
    }  // the creator is gone before its directory is
    pch_store->remove_incoming(incoming);
    std::lock_guard guard(pch_mutex);
    pch_stats.creation_cpu_seconds += std::chrono::duration<double>(cost.cpu).count();
    if (stored) {
      ++pch_stats.created;
    } else {
      ++pch_stats.creation_failed;
      if (failed_for_the_prefix) pch_failed.insert(key);
    }
    pch_stats.evictions = pch_store->evictions();
    return stored;
  }

  // Tripwire and path scrubbing; applied once, before a result is cached.
  CompileResult sanitize(const CompileJob& job, CompileResult r) const {
    // Tripwire: a diagnostic that points at a file the jail does not know means something escaped;
    // withhold the log and the output rather than risk echoing a host file. The shipped names are
    // looked up in a set: a log of many diagnostics and a job of many headers cost their sum.
    std::unordered_set<std::string_view> shipped;
    for (const Header& h : job.headers) shipped.insert(h.name);
    for (const std::string& f : diagnostic_files(r.log)) {
      const bool known = f == job.file_name || is_nvrtc_builtin_header(f) ||
                         (config.compat_headers && is_compat_header(f)) || shipped.contains(f) ||
                         std::any_of(jail_roots.begin(), jail_roots.end(),
                                     [&](const std::string& root) { return f.starts_with(root + "/"); });
      if (!known) {
        CompileResult refused;
        refused.status = CompileStatus::refused;
        refused.log =
            "refused by the include jail: the compiler reported a diagnostic in a file outside the jail; "
            "log and output withheld";
        refused.seconds = r.seconds;
        refused.cpu_seconds = r.cpu_seconds;
        return refused;
      }
    }
    r.log = scrub_paths(r.log, scrubs);
    return r;
  }

  // Kernels come from the module's symbol table, never from PTX text (which a comment can fake).
  static void list_kernels(CompileResult& r) {
    if (!r.cubin.empty()) r.kernels = detail::cubin_kernels(r.cubin);
  }

  static CompileResult cap_log(const CompileJob& job, CompileResult r) {
    const std::size_t cap = job.options.max_log_bytes;
    if (r.log.size() > cap) {
      const std::size_t total = r.log.size();
      r.log.resize(cap - 64);
      r.log += "\n[log truncated: " + std::to_string(cap - 64) + " of " + std::to_string(total) + " bytes shown]\n";
    }
    return r;
  }

  CompileResult compile(const CompileJob& job) {
    const auto t0 = Clock::now();
    // The scan and the hashing work on the candidate's bytes, so they are charged to its CPU budget.
    const auto cpu_t0 = thread_cpu();
    JailVerdict verdict;
    if (!config.skip_include_jail_for_tests) verdict = check_job(job, policy);
    if (!verdict.allowed) {
      CompileResult r;
      r.status = CompileStatus::refused;
      r.log = scrub_paths(verdict.message, scrubs);
      r.seconds = seconds_since(t0);
      r.cpu_seconds = std::chrono::duration<double>(thread_cpu() - cpu_t0).count();
      r.unconfined = unconfined();
      r.missing_layers = missing_layers;
      return r;
    }
    CacheKey key;
    if (config.cache) key = make_cache_key(job, version_tag);
    std::chrono::nanoseconds charged = thread_cpu() - cpu_t0;
    const std::chrono::nanoseconds budget = job.options.timeout;
    if (config.cache) {
      if (std::optional<CompileResult> hit = config.cache->find(key)) {
        CompileResult r = std::move(*hit);
        r.pch = PchUse::none;  // nothing was compiled
        list_kernels(r);
        detail::enforce_output_limits(r, config.output);  // kept by a Compiler with larger limits, perhaps
        r = cap_log(job, std::move(r));
        r.seconds = seconds_since(t0);
        r.cpu_seconds = std::chrono::duration<double>(thread_cpu() - cpu_t0).count();
        r.unconfined = unconfined();
        r.missing_layers = missing_layers;
        return r;
      }
    }
    detail::NvrtcRequest request =
        detail::make_nvrtc_request(config.compat_headers ? with_compat_headers(job) : job, include_dirs, config.output);
    const std::chrono::nanoseconds wall =
        job.options.wall_backstop.count() > 0 ? job.options.wall_backstop : 10 * job.options.timeout;
    std::chrono::nanoseconds charged_pch{0};  // of `charged`: making the stored PCH this compile needed
    if (pch_store && charged < budget) {
      const StoredPchCost cost =
          attach_stored_pch(request, {budget - charged, wall, job.options.timeout, config.idle_limit});
      charged_pch = cost.cpu;
      charged = thread_cpu() - cpu_t0 + cost.cpu;  // reading the leading includes too
      if (cost.out_of_cpu) charged = std::max(charged, budget);
    }
    CompileResult r;
    if (charged >= budget) {
      r.status = CompileStatus::timeout;
      r.limit = CompileLimit::cpu_time;
      r.log =
          "compile stopped at its CPU time limit of " + std::to_string(job.options.timeout.count()) + " ms: " +
          (charged_pch.count() > 0
               ? "making the precompiled header of its #include lines used " +
                     std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(charged_pch).count()) + " ms"
               : "scanning and hashing the source alone used " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::milliseconds>(charged - charged_pch).count()) +
                     " ms");
    } else {
      if (config.isolation == Isolation::process) {
        r = detail::run_compile_child(*launcher, child,
                                      {budget - charged, wall, job.options.timeout, config.idle_limit}, request);
      } else if (config.isolation == Isolation::pooled) {
        // A PCH directory per set of in-memory headers and flags: NVRTC does not tell two "task.h" apart.
        if (config.pool.pch && request.use_pch.empty()) request.pch_dir = detail::pch_key(request);
        r = pool->compile(request, {budget - charged, wall, job.options.timeout, config.idle_limit});
      } else {
        const auto cpu_start = thread_cpu();
        const auto wall_deadline = Clock::now() + wall;
        r = detail::nvrtc_compile(request, CLOCK_THREAD_CPUTIME_ID, budget - charged, wall_deadline);
        r.cpu_seconds = std::chrono::duration<double>(thread_cpu() - cpu_start).count();
        if (r.status == CompileStatus::timeout) {
          r.limit = Clock::now() >= wall_deadline ? CompileLimit::wall_clock : CompileLimit::cpu_time;
          r.log =
              (r.limit == CompileLimit::cpu_time
                   ? "compile stopped at its CPU time limit of " + std::to_string(job.options.timeout.count()) + " ms"
                   : "compile stopped at its wall-clock backstop of " +
                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(wall).count()) + " ms") +
              (r.log.empty() ? "" : "\n" + r.log);
        }
      }
    }
    r.cpu_seconds += std::chrono::duration<double>(charged).count();
    r = sanitize(job, std::move(r));
    list_kernels(r);
    // The compile process checked the sizes before anything crossed; checked again here, where the
    // result comes from: a process that broke its word gets no further than this.
    detail::enforce_output_limits(r, config.output);
    r = cap_log(job, std::move(r));  // capped before it is stored, so no entry holds a huge log
    r.unconfined = unconfined();
    r.missing_layers = missing_layers;
    if (config.cache) config.cache->store(key, r);  // an output over a limit is not a verdict: never stored
    r.seconds = seconds_since(t0);
    return r;
  }

  bool unconfined() const noexcept { return config.isolation == Isolation::trusted_in_process || config.unconfined; }

  ~Impl() {
    pool.reset();  // the pooled compilers and children go before the directory they were confined in
    launcher.reset();
    detail::remove_work_dir(child);
  }
};

Compiler::Compiler(CompilerConfig config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = std::move(config);
  for (const auto& [value, name] : {std::pair{m.config.output.max_ptx_bytes, "max_ptx_bytes"},
                                    std::pair{m.config.output.max_cubin_bytes, "max_cubin_bytes"},
                                    std::pair{m.config.output.max_kernels, "max_kernels"},
                                    std::pair{m.config.output.max_kernel_name_bytes, "max_kernel_name_bytes"}}) {
    if (value == 0) {
      throw std::invalid_argument(std::string("leap::sandbox: CompilerConfig::output.") + name +
                                  " = 0: a compile could produce nothing; give a positive limit");
    }
  }
  if (m.config.idle_limit.count() < 0) {
    throw std::invalid_argument(
        "leap::sandbox: CompilerConfig::idle_limit = " + std::to_string(m.config.idle_limit.count()) +
        " ms: must be positive, or 0 for no idle window");
  }
  const std::string inc = m.config.cuda_include_dir.empty() ? default_cuda_include_dir() : m.config.cuda_include_dir;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(inc) / "cuda_fp16.h", ec)) {
    throw std::runtime_error("leap::sandbox: no CUDA headers at " + inc +
                             " (set CompilerConfig::cuda_include_dir to the toolkit's include directory)");
  }
  m.include_dirs.push_back(inc);
  if (std::filesystem::exists(std::filesystem::path(inc) / "cccl", ec)) m.include_dirs.push_back(inc + "/cccl");
  const std::string inc_real = canonical(inc);
  const std::string root = std::filesystem::path(inc).parent_path().string();
  const std::string root_real = std::filesystem::path(inc_real).parent_path().string();
  m.jail_roots = {inc, inc_real};
  m.scrubs = {{inc, "<cuda>/include"},
              {inc_real, "<cuda>/include"},
              {root, "<cuda>"},
              {root_real, "<cuda>"},
              {"/usr/local/cuda", "<cuda>"}};
  if (const char* home = std::getenv("HOME"); home != nullptr && std::string_view(home).size() > 1)
    m.scrubs.push_back({home, "~"});
  const std::string tmp = std::filesystem::temp_directory_path(ec).string();
  if (!ec) m.scrubs.push_back({tmp, "<tmp>"});
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (!ec && cwd.size() > 1) m.scrubs.push_back({cwd, "<cwd>"});
  const NvrtcVersion v = nvrtc_version();
  // Results compiled without confinement are kept apart: a leak in one must never be served to a confined compile.
  m.version_tag =
      "nvrtc " + std::to_string(v.major) + "." + std::to_string(v.minor) + (m.config.unconfined ? " unconfined" : "");
  m.policy = m.config.includes;
  if (m.config.compat_headers) {
    m.version_tag += " " + compat_headers_tag();
    for (const CompatHeader& c : compat_headers()) m.policy.headers.emplace_back(c.name);
  }
  if (m.config.isolation == Isolation::trusted_in_process) {
    m.missing_layers = {"landlock", "seccomp", "mount namespace", "rlimits", "process"};
  } else if (m.config.unconfined) {
    m.missing_layers = {"landlock", "seccomp", "mount namespace"};
  } else {
    const ConfinementSupport& support = confinement_support();
    if (!support.sufficient()) {
      throw std::runtime_error(
          "leap::sandbox: this machine cannot confine compiles (" + support.missing() +
          "); untrusted source is not compiled without them. For trusted source only, set "
          "CompilerConfig::unconfined = true (leap-sandbox --unconfined); every result then says so");
    }
    if (!support.full() && !m.config.accept_weaker_confinement) {
      throw std::runtime_error(
          "leap::sandbox: a confinement layer is missing here (" + support.missing() +
          "), so untrusted source is not compiled: accept the weaker set explicitly with "
          "CompilerConfig::accept_weaker_confinement = true (leap-sandbox --accept-weaker-confinement), "
          "and every result then names what is missing");
    }
    m.missing_layers = support.missing_layers();
  }
  // Results compiled with a weaker set are kept apart too, so none is ever served as a fully confined one.
  if (!m.config.unconfined && m.config.isolation != Isolation::trusted_in_process && !m.missing_layers.empty()) {
    std::string without;
    for (const std::string& layer : m.missing_layers) without += " without " + layer;
    m.version_tag += without;
  }
  if (m.config.isolation == Isolation::process || m.config.isolation == Isolation::pooled) {
    std::string error;
    if (!preload_nvrtc_builtins(v, error) && !m.config.unconfined) {
      throw std::runtime_error("leap::sandbox: " + error +
                               " (a confined compile child or pooled compiler cannot load it itself)");
    }
    m.child = detail::make_child_setup(m.include_dirs, m.config.limits, !m.config.unconfined);
    // Before the launcher and the pooled compilers are forked: they carry the heap's placement and the binds.
    const bool pch_wanted = m.config.isolation == Isolation::process || m.config.pool.pch;
    if (m.config.pch_directory && pch_wanted) {
      auto store = std::make_unique<detail::PchStore>(*m.config.pch_directory, m.config.pch_disk_bytes);
      m.pch_heap = nvrtc_pch_heap_bytes();
      std::string why;
      m.pch_stats.heap_address = detail::pin_nvrtc_pch_heap(detail::pch_heap_address_for(store->secret()), why);
      if (m.pch_stats.heap_address == 0) {
        m.pch_stats.why = why;
      } else if (!detail::enable_stored_pch(m.child, store->files_dir(), m.pch_heap)) {
        m.pch_stats.why = "no private root here: a confined compile has nowhere private for NVRTC's temporary file";
      } else {
        m.pch_store = std::move(store);
        m.pch_stats.in_use = true;
      }
    }
  }
  if (m.config.parallel_compiles == 0)
    m.config.parallel_compiles = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  if (m.config.pool.size == 0) m.config.pool.size = m.config.parallel_compiles;
  // Forked now, while the caller most likely has one thread: see compile_launcher.hpp. It forks the
  // pool's pooled compilers and the stored-PCH creator too, so no compile process is forked from a caller's thread.
  if (m.config.isolation == Isolation::process || m.config.isolation == Isolation::pooled) {
    m.launcher = std::make_unique<detail::CompileLauncher>(m.child);
  }
  if (m.config.isolation == Isolation::pooled)
    m.pool = std::make_unique<detail::CompilePool>(*m.launcher, m.child, m.config.pool);
}

Compiler::~Compiler() = default;

CompileResult Compiler::compile(const CompileJob& job) {
  validate(job.options);
  return impl_->compile(job);
}

std::vector<CompileResult> Compiler::compile_batch(std::span<const CompileJob> jobs, const ProgressCallback& progress) {
  for (const CompileJob& j : jobs) validate(j.options);
  std::vector<CompileResult> results(jobs.size());
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex progress_mutex;
  std::exception_ptr failure;
  // Each batch thread claims the next job not yet taken until none is left.
  auto compile_unclaimed_jobs = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        results[i] = impl_->compile(jobs[i]);
      } catch (...) {
        std::lock_guard lock(progress_mutex);
        if (!failure) failure = std::current_exception();
        continue;
      }
      std::lock_guard lock(progress_mutex);
      ++done;
      if (progress) progress(BatchProgress{done, jobs.size(), i, &results[i]});
    }
  };
  const std::size_t n = std::min<std::size_t>(impl_->config.parallel_compiles, jobs.size());
  if (n <= 1) {
    compile_unclaimed_jobs();
  } else {
    std::vector<std::jthread> batch_threads;
    for (std::size_t t = 0; t < n; ++t) batch_threads.emplace_back(compile_unclaimed_jobs);
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

const CompilerConfig& Compiler::config() const noexcept { return impl_->config; }
CompileCache* Compiler::cache() const noexcept { return impl_->config.cache.get(); }
CompilePoolStats Compiler::pool_stats() const { return impl_->pool ? impl_->pool->stats() : CompilePoolStats{}; }
StoredPchStats Compiler::stored_pch_stats() const {
  std::lock_guard lock(impl_->pch_mutex);
  return impl_->pch_stats;
}

}  // namespace leap::sandbox
