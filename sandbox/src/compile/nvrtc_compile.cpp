// SPDX-License-Identifier: Apache-2.0
#include "compile/nvrtc_compile.hpp"

#include <nvrtc.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include "compile/compiler_exit.hpp"
#include "compile/elf_kernels.hpp"
#include "compile/output_limits.hpp"
#include "common/little_endian.hpp"
#include "compile/nvrtc_flags.hpp"
#include "compile/pch_heap.hpp"
#include "common/sha256.hpp"

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

struct FlowPayload {
  clockid_t clock;  // the compile's CPU clock: the child's or pooled compiler's process clock, or this thread's
  std::chrono::nanoseconds cpu_deadline;
  Clock::time_point wall_deadline;
};

// Called by NVRTC between phases; once it says cancel it keeps saying so, as NVRTC requires.
int flow_callback(void* payload, void*) {
  const auto* p = static_cast<FlowPayload*>(payload);
  return cpu_of(p->clock) >= p->cpu_deadline || Clock::now() >= p->wall_deadline ? 1 : 0;
}

std::string nvrtc_error_text(nvrtcResult r) { return nvrtcGetErrorString(r); }

}  // namespace

NvrtcRequest make_nvrtc_request(const CompileJob& job, const std::vector<std::string>& include_dirs,
                                const OutputLimits& limits) {
  NvrtcRequest r;
  r.limits = limits;
  r.source = job.source;
  r.file_name = job.file_name;
  r.headers = job.headers;
  r.flags = nvrtc_flags(job.options);
  for (const std::string& d : include_dirs) r.flags.push_back("--include-path=" + d);
  r.name_expressions = job.options.name_expressions;
  r.want_ptx = job.options.want_ptx;
  r.want_cubin = job.options.want_cubin && arch_is_sm(job.options.arch);
  return r;
}

std::string pch_key(const NvrtcRequest& request) {
  std::string framed;
  for (const Header& hd : request.headers) {
    put_bytes(framed, hd.name);
    put_bytes(framed, hd.content);
  }
  put_u64(framed, request.flags.size());
  for (const std::string& f : request.flags) put_bytes(framed, f);
  return to_hex(sha256(framed)).substr(0, 32);
}

PchUse take_pch_messages(std::string& log, std::string_view file_name, std::string_view pch_dir) {
  // NVRTC 13.0 writes `"kernel.cu": using precompiled header file "<dir>/kernel_0.pch"` (or
  // "creating"). A candidate's own #warning cannot forge the line: those begin `kernel.cu(3): `.
  const std::string head = "\"" + std::string(file_name) + "\": ";
  const std::string tail = " precompiled header file \"" + std::string(pch_dir) + "/";
  PchUse seen = PchUse::none;
  std::string kept;
  kept.reserve(log.size());
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    const std::size_t next = end == std::string::npos ? log.size() : end + 1;
    const std::string_view line(log.data() + pos, (end == std::string::npos ? log.size() : end) - pos);
    pos = next;
    if (line.starts_with(head)) {
      const std::string_view rest = line.substr(head.size());
      if (rest.starts_with("using") && rest.substr(5).starts_with(tail)) {
        seen = PchUse::hit;
        continue;
      }
      if (rest.starts_with("creating") && rest.substr(8).starts_with(tail)) continue;
    }
    kept.append(line);
    if (end != std::string::npos) kept.push_back('\n');
  }
  log = std::move(kept);
  return seen;
}

namespace {

// One nvrtcCompileProgram; `pch` says whether the request's PCH directory, or its stored PCH, is used.
CompileResult compile_once(const NvrtcRequest& job, FlowPayload& payload, bool pch) {
  CompileResult out;
  std::vector<const char*> header_src, header_names;
  for (const Header& h : job.headers) {
    header_src.push_back(h.content.c_str());
    header_names.push_back(h.name.c_str());
  }
  const bool stored = pch && !job.use_pch.empty();
  const std::string& source = stored && !job.pch_source.empty() ? job.pch_source : job.source;
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), job.file_name.c_str(), static_cast<int>(header_src.size()),
                                      header_src.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed: " + nvrtc_error_text(rc);
    return out;
  }
  struct Guard {
    nvrtcProgram* p;
    ~Guard() { nvrtcDestroyProgram(p); }
  } guard{&prog};

  nvrtcSetFlowCallback(prog, &flow_callback, &payload);
  for (const std::string& e : job.name_expressions) nvrtcAddNameExpression(prog, e.c_str());

  std::vector<std::string> flags = job.flags;
  const std::string pch_dir = stored ? job.use_pch.substr(0, job.use_pch.rfind('/')) : job.pch_dir;
  if (stored) {
    flags.insert(flags.end(), {"--use-pch=" + job.use_pch, "--pch-messages=true", "--pch-verbose=false"});
  } else if (pch) {
    // Messages on (they are how NVRTC says it used a PCH; taken out of the log below), the reasons a
    // PCH did not fit off (they would make the log depend on what compiled before).
    flags.insert(flags.end(), {"-pch", "--pch-dir=" + job.pch_dir, "--pch-messages=true", "--pch-verbose=false"});
  }
  if (!job.create_pch.empty()) flags.insert(flags.end(), {"--create-pch=" + job.create_pch, "--pch-messages=false"});
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());

  std::size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
    out.log.resize(n);
    nvrtcGetProgramLog(prog, out.log.data());
    out.log.resize(n - 1);
  }
  if (pch) {
    out.pch = take_pch_messages(out.log, job.file_name, pch_dir);
    // NVRTC 13.0 says NVRTC_SUCCESS even when writing the PCH failed; that compile fails, and is redone.
    if (!stored && rc == NVRTC_SUCCESS && nvrtcGetPCHCreateStatus(prog) == NVRTC_SUCCESS) out.pch = PchUse::created;
  }
  if (rc == NVRTC_ERROR_CANCELLED || (rc != NVRTC_SUCCESS && flow_callback(&payload, nullptr) != 0)) {
    out.status = CompileStatus::timeout;
  } else if (rc != NVRTC_SUCCESS) {
    out.status = CompileStatus::error;
    out.nvrtc_verdict = rc == NVRTC_ERROR_COMPILATION;  // anything else (out of memory, internal) may not recur
    if (rc != NVRTC_ERROR_COMPILATION)
      out.log += (out.log.empty() ? "" : "\n") + std::string("nvrtc: ") + nvrtc_error_text(rc);
  } else {
    out.status = CompileStatus::ok;
    out.nvrtc_verdict = true;
    // The sizes first: a module over a limit is never copied out of NVRTC, let alone sent on.
    if (job.want_ptx && nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      if (const std::string why = ptx_over_limit(n - 1, job.limits); !why.empty()) {  // n counts the final NUL
        refuse_output(out, why);
        return out;
      }
      out.ptx.resize(n);
      nvrtcGetPTX(prog, out.ptx.data());
      if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    }
    if (job.want_cubin && nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      if (const std::string why = cubin_over_limit(n, job.limits); !why.empty()) {
        refuse_output(out, why);
        return out;
      }
      out.cubin.resize(n);
      nvrtcGetCUBIN(prog, out.cubin.data());
      if (const std::optional<std::vector<std::string>> kernels = cubin_kernels(out.cubin)) {
        if (const std::string why = kernels_over_limit(*kernels, job.limits); !why.empty()) {
          refuse_output(out, why);
          return out;
        }
      }
    }
    for (const std::string& e : job.name_expressions) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(prog, e.c_str(), &lowered) == NVRTC_SUCCESS && lowered != nullptr) {
        out.lowered_names.push_back({e, lowered});
      }
    }
  }
  return out;
}

// A compile that failed because of the PCH itself: NVRTC could not write it (a full or size-limited
// directory: "error while writing PCH file"), could not map it ("unable to obtain mapped memory"), or
// met a PCH left incomplete. Such failures say nothing about the source. A candidate that forges the
// words with #error only earns itself a second compile without the PCH, which gives the same verdict.
bool failed_for_the_pch(const CompileResult& r) {
  if (r.status != CompileStatus::error) return false;
  if (r.log.find("out of memory") != std::string::npos) return false;  // the address-space limit, reported as such
  return r.log.find("atastrophic error") != std::string::npos || r.log.find("PCH file") != std::string::npos ||
         r.log.find("precompiled header") != std::string::npos;
}

}  // namespace

CompileResult nvrtc_compile(const NvrtcRequest& job, clockid_t clock, std::chrono::nanoseconds cpu_budget,
                            Clock::time_point wall_deadline) {
  const auto t0 = Clock::now();
  FlowPayload payload{clock, cpu_of(clock) + cpu_budget, wall_deadline};
  if (!job.use_pch.empty()) {
    populate_nvrtc_file_mappings(true);  // why: pch_heap.hpp
    CompileResult out = compile_once(job, payload, true);
    populate_nvrtc_file_mappings(false);
    // Not used (refused as incompatible, evicted meanwhile, its heap address taken): NVRTC's warning
    // about it would be in the log, so what a compile without it says is the answer.
    if (out.pch != PchUse::hit && out.status != CompileStatus::timeout) out = compile_once(job, payload, false);
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  }
  const bool pch = !job.pch_dir.empty() && (::mkdir(job.pch_dir.c_str(), 0700) == 0 || errno == EEXIST);
  CompileResult out = compile_once(job, payload, pch);
  if (pch && failed_for_the_pch(out)) {
    // What a compile without the PCH says is the answer, and nothing of the broken PCH stays behind.
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(job.pch_dir, ec))
      std::filesystem::remove_all(entry.path(), ec);
    out = compile_once(job, payload, false);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

namespace {

void put_strings(std::string& out, const std::vector<std::string>& v) {
  put_u64(out, v.size());
  for (const std::string& s : v) put_bytes(out, s);
}

bool get_strings(std::string_view& in, std::vector<std::string>& v) {
  unsigned long long n = 0;
  if (!get_u64(in, n) || n > in.size() / 8) return false;
  v.resize(static_cast<std::size_t>(n));
  for (std::string& s : v) {
    if (!get_bytes(in, s)) return false;
  }
  return true;
}

}  // namespace

std::string encode_request(const NvrtcRequest& r) {
  std::string out;
  out.reserve(256 + r.source.size());
  put_bytes(out, r.source);
  put_bytes(out, r.file_name);
  put_u64(out, r.headers.size());
  for (const Header& h : r.headers) {
    put_bytes(out, h.name);
    put_bytes(out, h.content);
  }
  put_strings(out, r.flags);
  put_strings(out, r.name_expressions);
  put_u64(out, (r.want_ptx ? 1u : 0u) | (r.want_cubin ? 2u : 0u));
  put_u64(out, r.limits.max_ptx_bytes);
  put_u64(out, r.limits.max_cubin_bytes);
  put_u64(out, r.limits.max_kernels);
  put_u64(out, r.limits.max_kernel_name_bytes);
  put_bytes(out, r.pch_dir);
  put_bytes(out, r.use_pch);
  put_bytes(out, r.pch_source);
  put_bytes(out, r.create_pch);
  return out;
}

std::optional<NvrtcRequest> decode_request(std::string_view in) {
  NvrtcRequest r;
  unsigned long long n = 0, want = 0;
  if (!get_bytes(in, r.source) || !get_bytes(in, r.file_name) || !get_u64(in, n) || n > in.size() / 16)
    return std::nullopt;
  r.headers.resize(static_cast<std::size_t>(n));
  for (Header& h : r.headers) {
    if (!get_bytes(in, h.name) || !get_bytes(in, h.content)) return std::nullopt;
  }
  if (!get_strings(in, r.flags) || !get_strings(in, r.name_expressions) || !get_u64(in, want) || want > 3)
    return std::nullopt;
  r.want_ptx = (want & 1u) != 0;
  r.want_cubin = (want & 2u) != 0;
  unsigned long long limit = 0;
  for (std::uint64_t* field :
       {&r.limits.max_ptx_bytes, &r.limits.max_cubin_bytes, &r.limits.max_kernels, &r.limits.max_kernel_name_bytes}) {
    if (!get_u64(in, limit)) return std::nullopt;
    *field = limit;
  }
  if (!get_bytes(in, r.pch_dir) || !get_bytes(in, r.use_pch) || !get_bytes(in, r.pch_source) ||
      !get_bytes(in, r.create_pch) || !in.empty())
    return std::nullopt;
  return r;
}

}  // namespace leap::sandbox::detail
