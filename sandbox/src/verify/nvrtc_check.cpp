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

}  // namespace

NvrtcOutcome nvrtc_compile(const std::string& source, const std::filesystem::path& cache_dir) {
  NvrtcOutcome out;
  try {
    CompileJob job;
    job.source = source;
    job.options.want_ptx = false;
    const CompileResult r = trusted_compiler(cache_dir).compile(job);
    out.compiled = r.status == CompileStatus::ok;
    out.source_error = r.status == CompileStatus::error && r.nvrtc_verdict;
    out.log = r.log;
  } catch (const std::exception& e) {
    out.available = false;
    out.log = e.what();
  }
  return out;
}

}  // namespace leap::sandbox::verify
