// SPDX-License-Identifier: Apache-2.0
// The module compiler: preprocess, rewrite (source_rewrite.hpp), compile into a shared object.
#include "leap/cpu_runtime/compile.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "leap/cpu_runtime/temp_dir.hpp"
#include "process.hpp"
#include "source_rewrite.hpp"

namespace leap::cpu_runtime {
namespace detail {

struct EmbeddedHeader {
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const EmbeddedHeader k_embedded_kernel_headers[];

}  // namespace detail

namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string default_compiler() {
#ifdef LEAP_CPU_RUNTIME_CXX
  if (access(LEAP_CPU_RUNTIME_CXX, X_OK) == 0) return LEAP_CPU_RUNTIME_CXX;
#endif
  return "c++";
}

// Flags both steps share: the language, the includes, the defines.
std::vector<std::string> common_flags(const CompileOptions& o, const fs::path& kernel_include) {
  std::vector<std::string> f{"-std=c++20"};
  for (const fs::path& dir : o.include_dirs) f.push_back("-I" + dir.string());
  f.push_back("-isystem");
  f.push_back(kernel_include.string());
  for (const std::string& d : o.defines) f.push_back("-D" + d);
  return f;
}

}  // namespace

TempDir::TempDir(const char* stem) : owner_(getpid()) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + stem + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno) +
                             " (set TMPDIR to a writable directory)");
  path_ = pattern;
}

TempDir::~TempDir() {
  if (getpid() != owner_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

const fs::path& kernel_include_dir() {
  static std::once_flag once;
  static std::unique_ptr<TempDir> dir;
  std::call_once(once, [] {
    dir = std::make_unique<TempDir>("leap-cpu-runtime-headers");
    for (const detail::EmbeddedHeader* h = detail::k_embedded_kernel_headers; h->name != nullptr; ++h) {
      const fs::path p = dir->path() / h->name;
      fs::create_directories(p.parent_path());
      write_file(p, std::string_view(reinterpret_cast<const char*>(h->data), h->size));
    }
  });
  return dir->path();
}

CompileResult compile_module(const fs::path& source, const fs::path& output, const CompileOptions& options) {
  CompileResult result;
  const std::string compiler = options.compiler.empty() ? default_compiler() : options.compiler;
  const fs::path kernel_include = options.kernel_include.empty() ? kernel_include_dir() : options.kernel_include;
  TempDir work("leap-cpu-module");
  const fs::path preprocessed = work.path() / "module.ii";
  const fs::path rewritten = work.path() / "module_rewritten.ii";

  std::vector<std::string> pre{compiler, "-E", "-x", "c++"};
  for (std::string& f : common_flags(options, kernel_include)) pre.push_back(std::move(f));
  for (const std::string& f : options.extra_flags) pre.push_back(f);
  pre.insert(pre.end(), {"-include", "leap_cpu/prelude.hpp", source.string(), "-o", preprocessed.string()});
  const detail::ProcessResult p = detail::run_process(pre);
  if (!p.started)
    throw std::runtime_error("the CPU runtime's module compiler: " + p.output +
                             " (set CompileOptions::compiler to a C++20 compiler)");
  if (p.exit_code != 0) {
    result.log = p.output;
    return result;
  }

  detail::RewriteResult r = detail::rewrite_module_source(read_file(preprocessed));
  if (!r.ok) {
    result.log = r.error + "\n";
    return result;
  }
  write_file(rewritten, r.text);

  std::vector<std::string> cc{compiler, "-x", "c++-cpp-output"};
  for (std::string& f : common_flags(options, kernel_include)) cc.push_back(std::move(f));
  cc.insert(cc.end(), {options.optimization, "-fPIC", "-shared", "-fvisibility=hidden", "-fno-gnu-unique",
                       "-fno-strict-aliasing", "-ffp-contract=off", "-fno-math-errno", "-Wl,--no-undefined"});
  if (options.debug_info) cc.push_back("-g");
  for (const std::string& f : options.extra_flags) cc.push_back(f);
  cc.insert(cc.end(), {rewritten.string(), "-o", output.string()});
  const detail::ProcessResult c = detail::run_process(cc);
  result.log = p.output + c.output;
  result.ok = c.exit_code == 0;
  if (result.ok) result.kernels = std::move(r.kernels);
  return result;
}

CompileResult compile_module_text(std::string_view text, std::string_view name, const fs::path& output,
                                  const CompileOptions& options) {
  TempDir work("leap-cpu-source");
  const fs::path file = work.path() / fs::path(std::string(name)).filename();
  write_file(file, text);
  return compile_module(file, output, options);
}

CompileResult compile_host_library_text(std::string_view text, std::string_view name, const fs::path& output,
                                        const CompileOptions& options) {
  TempDir work("leap-cpu-host");
  const fs::path file = work.path() / fs::path(std::string(name)).filename();
  write_file(file, text);
  const std::string compiler = options.compiler.empty() ? default_compiler() : options.compiler;
  std::vector<std::string> cc{compiler, "-x", "c++", "-std=c++20"};
  for (const fs::path& dir : options.include_dirs) cc.push_back("-I" + dir.string());
  for (const std::string& d : options.defines) cc.push_back("-D" + d);
  cc.insert(cc.end(), {options.optimization, "-fPIC", "-shared", "-fvisibility=hidden", "-fno-gnu-unique",
                       "-ffp-contract=off", "-Wl,--no-undefined"});
  if (options.debug_info) cc.push_back("-g");
  for (const std::string& f : options.extra_flags) cc.push_back(f);
  cc.insert(cc.end(), {file.string(), "-o", output.string()});
  const detail::ProcessResult c = detail::run_process(cc);
  if (!c.started)
    throw std::runtime_error("the CPU runtime's host compiler: " + c.output +
                             " (set CompileOptions::compiler to a C++20 compiler)");
  CompileResult result;
  result.log = c.output;
  result.ok = c.exit_code == 0;
  return result;
}

const std::string& host_compiler() {
  static const std::string compiler = default_compiler();
  return compiler;
}

}  // namespace leap::cpu_runtime
