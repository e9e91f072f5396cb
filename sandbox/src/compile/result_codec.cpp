// SPDX-License-Identifier: Apache-2.0
#include "compile/result_codec.hpp"

#include <bit>

#include "common/little_endian.hpp"

namespace leap::sandbox::detail {

std::string encode_result(const CompileResult& r) {
  std::string out;
  out.reserve(64 + r.log.size() + r.ptx.size() + r.cubin.size());
  put_u64(out, static_cast<unsigned long long>(r.status));
  put_u64(out, static_cast<unsigned long long>(r.limit));
  put_u64(out, r.nvrtc_verdict ? 1 : 0);
  put_u64(out, std::bit_cast<unsigned long long>(r.seconds));
  put_bytes(out, r.log);
  put_bytes(out, r.ptx);
  put_bytes(out, r.cubin);
  put_u64(out, r.lowered_names.size());
  for (const LoweredName& n : r.lowered_names) {
    put_bytes(out, n.expression);
    put_bytes(out, n.lowered);
  }
  return out;
}

std::optional<CompileResult> decode_result(std::string_view in) {
  CompileResult r;
  unsigned long long status = 0, limit = 0, verdict = 0, seconds = 0, count = 0;
  if (!get_u64(in, status) || status > static_cast<unsigned long long>(CompileStatus::resource_limit))
    return std::nullopt;
  r.status = static_cast<CompileStatus>(status);
  if (!get_u64(in, limit) || limit > static_cast<unsigned long long>(CompileLimit::output_size)) return std::nullopt;
  r.limit = static_cast<CompileLimit>(limit);
  if (!get_u64(in, verdict) || verdict > 1) return std::nullopt;
  r.nvrtc_verdict = verdict == 1;
  if (!get_u64(in, seconds)) return std::nullopt;
  r.seconds = std::bit_cast<double>(seconds);
  if (!get_bytes(in, r.log) || !get_bytes(in, r.ptx) || !get_bytes(in, r.cubin) || !get_u64(in, count))
    return std::nullopt;
  if (count > in.size() / 16) return std::nullopt;
  r.lowered_names.resize(static_cast<std::size_t>(count));
  for (LoweredName& n : r.lowered_names) {
    if (!get_bytes(in, n.expression) || !get_bytes(in, n.lowered)) return std::nullopt;
  }
  if (!in.empty()) return std::nullopt;
  return r;
}

}  // namespace leap::sandbox::detail
