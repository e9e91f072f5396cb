// SPDX-License-Identifier: Apache-2.0
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "common/identifier.hpp"
#include "compile/nvrtc_flags.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"
#include "compile/include_jail.hpp"

namespace leap::sandbox {
namespace {

[[noreturn]] void bad(std::string_view option, std::string_view value, std::string_view why) {
  throw std::invalid_argument("leap::sandbox: CompileOptions::" + std::string(option) + " = \"" + std::string(value) +
                              "\": " + std::string(why));
}

// Plain tokens only: the value reaches NVRTC as -Dname=value, so nothing that could open a string,
// a comment, a directive or a second line.
bool is_safe_token_text(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("_ .,+-*%()<>[]:&|^!~=?", c) != nullptr;
  });
}

// Parses sm_90, sm_90a, compute_100f; returns the number, or -1.
int arch_number(std::string_view arch) noexcept {
  std::string_view rest;
  if (arch.starts_with("sm_")) rest = arch.substr(3);
  else if (arch.starts_with("compute_")) rest = arch.substr(8);
  else return -1;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) rest.remove_suffix(1);
  if (rest.empty() || rest.size() > 4) return -1;
  int n = 0;
  for (char c : rest) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

std::string_view to_string(CompileStatus status) noexcept {
  switch (status) {
    case CompileStatus::ok: return "ok";
    case CompileStatus::error: return "error";
    case CompileStatus::timeout: return "timeout";
    case CompileStatus::refused: return "refused";
    case CompileStatus::resource_limit: return "resource_limit";
  }
  return "unknown";
}

std::string_view to_string(CompileLimit limit) noexcept {
  switch (limit) {
    case CompileLimit::none: return "none";
    case CompileLimit::cpu_time: return "cpu_time";
    case CompileLimit::wall_clock: return "wall_clock";
    case CompileLimit::address_space: return "address_space";
    case CompileLimit::idle: return "idle";
    case CompileLimit::output_size: return "output_size";
  }
  return "unknown";
}

std::string_view to_string(PchUse pch) noexcept {
  switch (pch) {
    case PchUse::none: return "none";
    case PchUse::hit: return "hit";
    case PchUse::created: return "created";
  }
  return "unknown";
}

void validate(const CompileOptions& o) {
  const int n = arch_number(o.arch);
  if (n < 0) bad("arch", o.arch, "expected sm_XY or compute_XY, optionally with an a or f suffix");
  const std::vector<int> archs = supported_archs();
  if (std::find(archs.begin(), archs.end(), n) == archs.end()) bad("arch", o.arch, "this NVRTC does not support it");
  if (o.cxx_standard != 11 && o.cxx_standard != 14 && o.cxx_standard != 17 && o.cxx_standard != 20) {
    bad("cxx_standard", std::to_string(o.cxx_standard), "expected 11, 14, 17 or 20");
  }
  if (o.max_registers < 0 || o.max_registers > 255)
    bad("max_registers", std::to_string(o.max_registers), "expected 0..255");
  if (!o.want_ptx && !(o.want_cubin && detail::arch_is_sm(o.arch))) {
    bad("want_ptx", "false", "nothing to produce: ask for PTX, or for CUBIN with an sm_ arch");
  }
  if (o.timeout.count() <= 0) bad("timeout", std::to_string(o.timeout.count()) + "ms", "must be positive");
  if (o.wall_backstop.count() < 0) {
    bad("wall_backstop", std::to_string(o.wall_backstop.count()) + "ms", "must be positive, or 0 for 10 x timeout");
  }
  if (o.max_log_bytes < 256) bad("max_log_bytes", std::to_string(o.max_log_bytes), "must be at least 256");
  for (const Define& d : o.defines) {
    if (!detail::is_identifier(d.name, detail::k_any_identifier_length))
      bad("defines", d.name, "the name is not an identifier");
    if (!is_safe_token_text(d.value)) bad("defines", d.name + "=" + d.value, "the value may hold only plain tokens");
    const JailVerdict v = scan_source(d.value, "-D" + d.name, {}, IncludePolicy::none());
    if (!v.allowed) bad("defines", d.name + "=" + d.value, v.message);
  }
  for (const std::string& e : o.name_expressions) {
    if (e.empty() || e.size() > 512 || !is_safe_token_text(e)) {
      bad("name_expressions", e, "expected a C++ name expression such as scale<float, 4>");
    }
    const JailVerdict v = scan_source(e, "name expression", {}, IncludePolicy::none());
    if (!v.allowed) bad("name_expressions", e, v.message);
  }
}

namespace detail {

bool arch_is_sm(std::string_view arch) noexcept { return arch.starts_with("sm_"); }

std::vector<std::string> nvrtc_flags(const CompileOptions& o) {
  std::vector<std::string> f;
  f.push_back("--gpu-architecture=" + o.arch);
  f.push_back("--std=c++" + std::to_string(o.cxx_standard));
  if (o.fast_math) f.push_back("--use_fast_math");
  if (o.line_info) f.push_back("--generate-line-info");
  if (o.default_device) f.push_back("--device-as-default-execution-space");
  if (o.max_registers > 0) f.push_back("--maxrregcount=" + std::to_string(o.max_registers));
  for (const Define& d : o.defines) f.push_back("--define-macro=" + d.name + (d.value.empty() ? "" : "=" + d.value));
  return f;
}

}  // namespace detail
}  // namespace leap::sandbox
