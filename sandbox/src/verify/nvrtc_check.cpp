// SPDX-License-Identifier: Apache-2.0
#include "verify/nvrtc_check.hpp"

#include <memory>
#include <stdexcept>

#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox::verify {

namespace {

Compiler& trusted_compiler(const std::filesystem::path& cache_dir) {
  static std::unique_ptr<Compiler> compiler;
  if (!compiler) {
    CompilerConfig config;
    config.isolation = Isolation::trusted_in_process;
    CacheOptions cache;
    cache.directory = cache_dir / "nvrtc";
    config.cache = std::make_shared<CompileCache>(cache);
    compiler = std::make_unique<Compiler>(std::move(config));
  }
  return *compiler;
}

CompileJob job_of(const std::string& source, const std::string& arch) {
  CompileJob job;
  job.source = source;
  job.options.want_ptx = false;
  if (!arch.empty()) job.options.arch = arch;
  return job;
}

NvrtcOutcome outcome_of(const CompileResult& r) {
  NvrtcOutcome out;
  out.compiled = r.status == CompileStatus::ok;
  out.source_error = r.status == CompileStatus::error && r.nvrtc_verdict;
  out.log = r.log;
  out.cubin = r.cubin;
  return out;
}

NvrtcOutcome unavailable(const std::exception& e) {
  NvrtcOutcome out;
  out.available = false;
  out.log = e.what();
  return out;
}

}  // namespace

NvrtcOutcome nvrtc_compile(const std::string& source, const std::filesystem::path& cache_dir, const std::string& arch) {
  try {
    return outcome_of(trusted_compiler(cache_dir).compile(job_of(source, arch)));
  } catch (const std::exception& e) {
    return unavailable(e);
  }
}

std::vector<NvrtcOutcome> nvrtc_compile_all(const std::vector<std::string>& sources,
                                            const std::filesystem::path& cache_dir, const std::string& arch) {
  std::vector<NvrtcOutcome> out;
  try {
    std::vector<CompileJob> jobs;
    for (const std::string& s : sources) jobs.push_back(job_of(s, arch));
    for (const CompileResult& r : trusted_compiler(cache_dir).compile_batch(jobs)) out.push_back(outcome_of(r));
  } catch (const std::exception& e) {
    out.assign(sources.size(), unavailable(e));
  }
  return out;
}

}  // namespace leap::sandbox::verify
