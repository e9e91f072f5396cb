// SPDX-License-Identifier: Apache-2.0
#include "verify/module_cache.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/sha256.hpp"
#include "leap/cpu_runtime/compile.hpp"
#include "leap/cpu_runtime/temp_dir.hpp"

namespace leap::sandbox::verify {

namespace fs = std::filesystem;

namespace detail {
extern const char k_oracle_header_text[];  // oracle_header_text.cpp, generated from leap/oracle.hpp
}

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every kernel header the runtime compiles against, hashed once: a changed header is a new module.
const std::string& kernel_headers_digest() {
  static const std::string digest = [] {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(cpu_runtime::kernel_include_dir()))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    Sha256 h;
    for (const fs::path& f : files) {
      h.update(f.lexically_relative(cpu_runtime::kernel_include_dir()).string());
      h.update(read_file(f));
    }
    return to_hex(h.finish());
  }();
  return digest;
}

std::string key_of(std::initializer_list<std::string_view> parts) {
  Sha256 h;
  for (std::string_view p : parts) {
    const std::uint64_t n = p.size();
    h.update(&n, sizeof n);
    h.update(p);
  }
  return to_hex(h.finish()).substr(0, 40);
}

}  // namespace

const fs::path& oracle_include_dir() {
  static std::once_flag once;
  static std::unique_ptr<cpu_runtime::TempDir> dir;
  std::call_once(once, [] {
    dir = std::make_unique<cpu_runtime::TempDir>("leap-oracle-include");
    fs::create_directories(dir->path() / "leap");
    std::ofstream(dir->path() / "leap" / "oracle.hpp") << detail::k_oracle_header_text;
  });
  return dir->path();
}

ModuleCache::ModuleCache(fs::path dir, std::string optimization)
    : dir_(std::move(dir)), optimization_(std::move(optimization)) {
  fs::create_directories(dir_);
}

ModuleCache::~ModuleCache() {
  kernels_.clear();
  for (auto& [path, handle] : oracles_) dlclose(handle);
}

template <class Build>
BuiltModule ModuleCache::build(const std::string& key, Build&& compile) {
  BuiltModule m;
  m.path = dir_ / (key + ".so");
  if (fs::exists(m.path)) {
    m.ok = true;
    m.cached = true;
    return m;
  }
  const fs::path tmp = dir_ / (key + ".tmp" + std::to_string(getpid()) + ".so");
  const auto start = std::chrono::steady_clock::now();
  const cpu_runtime::CompileResult r = compile(tmp);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.ok = r.ok;
  m.log = r.log;
  std::error_code ec;
  if (r.ok) fs::rename(tmp, m.path, ec);
  if (ec) m.path = tmp;  // another process's rename raced ours; ours is as good
  else fs::remove(tmp, ec);
  return m;
}

BuiltModule ModuleCache::kernel_module(std::string_view source, std::string_view file_name) {
  const std::string key =
      key_of({"kernel", cpu_runtime::host_compiler(), optimization_, kernel_headers_digest(), source});
  return build(key, [&](const fs::path& out) {
    cpu_runtime::CompileOptions o;
    o.optimization = optimization_;
    return cpu_runtime::compile_module_text(source, file_name, out, o);
  });
}

BuiltModule ModuleCache::oracle_module(std::string_view source, std::string_view file_name) {
  const std::string key =
      key_of({"oracle", cpu_runtime::host_compiler(), optimization_, detail::k_oracle_header_text, source});
  return build(key, [&](const fs::path& out) {
    cpu_runtime::CompileOptions o;
    o.optimization = optimization_;
    o.include_dirs.push_back(oracle_include_dir());
    return cpu_runtime::compile_host_library_text(source, file_name, out, o);
  });
}

const cpu_runtime::Module& ModuleCache::load_kernels(const fs::path& path) {
  auto it = kernels_.find(path);
  if (it == kernels_.end()) it = kernels_.emplace(path, cpu_runtime::Module::load(path)).first;
  return it->second;
}

ModuleCache::OracleEntry ModuleCache::load_oracle(const fs::path& path) {
  auto it = oracles_.find(path);
  if (it == oracles_.end()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error("cannot load the oracle " + path.string() + ": " + dlerror());
    it = oracles_.emplace(path, handle).first;
  }
  void* entry = dlsym(it->second, "leap_oracle_run");
  if (entry == nullptr)
    throw std::runtime_error("the oracle defines no LEAP_ORACLE(problem) entry point (leap_oracle_run)");
  return reinterpret_cast<OracleEntry>(entry);
}

}  // namespace leap::sandbox::verify
