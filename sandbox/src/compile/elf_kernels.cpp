// SPDX-License-Identifier: Apache-2.0
#include "compile/elf_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace leap::sandbox::detail {
namespace {

// ELF64 layout facts (System V gABI): header 64 bytes, section headers 64, symbols 24.
constexpr std::size_t k_header_size = 64;
constexpr std::size_t k_section_size = 64;
constexpr std::size_t k_symbol_size = 24;
constexpr std::uint32_t k_sht_symtab = 2;
constexpr unsigned k_stt_func = 2;
constexpr unsigned k_stb_global = 1;
constexpr unsigned k_stb_weak = 2;
constexpr unsigned k_sto_cuda_entry = 0x10;
constexpr std::uint16_t k_shn_loreserve = 0xff00;
constexpr std::uint16_t k_shn_xindex = 0xffff;

// Little-endian reads that fail instead of reading past the end.
class Bytes {
 public:
  explicit Bytes(std::string_view b) : b_(b) {}
  bool has(std::uint64_t offset, std::uint64_t size) const { return offset <= b_.size() && size <= b_.size() - offset; }
  template <class T>
  bool get(std::uint64_t offset, T& out) const {
    if (!has(offset, sizeof(T))) return false;
    std::uint64_t v = 0;
    for (std::size_t i = sizeof(T); i-- > 0;)
      v = (v << 8) | static_cast<unsigned char>(b_[static_cast<std::size_t>(offset) + i]);
    out = static_cast<T>(v);
    return true;
  }
  // The NUL-terminated string at `offset` inside [begin, begin + size).
  std::optional<std::string_view> string(std::uint64_t begin, std::uint64_t size, std::uint64_t offset) const {
    if (!has(begin, size) || offset >= size) return std::nullopt;
    const std::string_view table = b_.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(size));
    const std::size_t end = table.find('\0', static_cast<std::size_t>(offset));
    if (end == std::string_view::npos) return std::nullopt;
    return table.substr(static_cast<std::size_t>(offset), end - static_cast<std::size_t>(offset));
  }

 private:
  std::string_view b_;
};

struct Section {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint64_t entsize = 0;
};

// The section table of a little-endian ELF64 file, every entry checked against the buffer.
struct Elf {
  std::vector<Section> sections;
  Section names;  // the section-name string table
};

std::optional<Elf> read_elf(const Bytes& b, std::string_view elf) {
  if (elf.size() < k_header_size ||
      elf.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      elf[4] != 2 /* 64-bit */ || elf[5] != 1 /* LE */) {
    return std::nullopt;
  }
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum16 = 0, shstrndx16 = 0;
  if (!b.get(0x28, shoff) || !b.get(0x3A, shentsize) || !b.get(0x3C, shnum16) || !b.get(0x3E, shstrndx16))
    return std::nullopt;
  if (shoff == 0) return Elf{};  // no sections, so no symbols
  if (shentsize != k_section_size) return std::nullopt;
  auto read_section = [&](std::uint64_t index, Section& s) {
    const std::uint64_t at = shoff + index * k_section_size;
    return b.get(at, s.name) && b.get(at + 4, s.type) && b.get(at + 24, s.offset) && b.get(at + 32, s.size) &&
           b.get(at + 40, s.link) && b.get(at + 56, s.entsize);
  };
  // Section 0 carries the real count and string-table index when they do not fit 16 bits.
  Section first;
  if (!read_section(0, first)) return std::nullopt;
  const std::uint64_t shnum = shnum16 != 0 ? shnum16 : first.size;
  const std::uint64_t shstrndx = shstrndx16 == k_shn_xindex ? first.link : shstrndx16;
  if (shnum == 0 || shnum > (elf.size() - std::min<std::uint64_t>(shoff, elf.size())) / k_section_size)
    return std::nullopt;
  Elf out;
  out.sections.resize(static_cast<std::size_t>(shnum));
  for (std::uint64_t i = 0; i < shnum; ++i) {
    if (!read_section(i, out.sections[static_cast<std::size_t>(i)])) return std::nullopt;
  }
  if (shstrndx >= shnum) return std::nullopt;
  out.names = out.sections[static_cast<std::size_t>(shstrndx)];
  if (!b.has(out.names.offset, out.names.size)) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> entry_kernels(const Bytes& b, const Elf& elf) {
  const std::uint64_t shnum = elf.sections.size();
  std::vector<std::string> kernels;
  for (const Section& symtab : elf.sections) {
    if (symtab.type != k_sht_symtab) continue;
    if (symtab.entsize != k_symbol_size || !b.has(symtab.offset, symtab.size) || symtab.link >= shnum)
      return std::nullopt;
    const Section& strtab = elf.sections[symtab.link];
    if (!b.has(strtab.offset, strtab.size)) return std::nullopt;
    for (std::uint64_t k = 1; k < symtab.size / k_symbol_size; ++k) {  // symbol 0 is the null symbol
      const std::uint64_t at = symtab.offset + k * k_symbol_size;
      std::uint32_t name = 0;
      std::uint8_t info = 0, other = 0;
      std::uint16_t shndx = 0;
      if (!b.get(at, name) || !b.get(at + 4, info) || !b.get(at + 5, other) || !b.get(at + 6, shndx))
        return std::nullopt;
      const unsigned type = info & 0xF, bind = info >> 4;
      if (type != k_stt_func || (bind != k_stb_global && bind != k_stb_weak) || (other & k_sto_cuda_entry) == 0)
        continue;
      if (shndx == 0 || shndx >= k_shn_loreserve || shndx >= shnum) continue;
      const std::optional<std::string_view> symbol = b.string(strtab.offset, strtab.size, name);
      const std::optional<std::string_view> section =
          b.string(elf.names.offset, elf.names.size, elf.sections[shndx].name);
      if (!symbol || !section) return std::nullopt;
      if (symbol->empty() || !section->starts_with(".text.") || section->substr(6) != *symbol) continue;
      kernels.emplace_back(*symbol);
    }
  }
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  return kernels;
}

// EIATTR record formats and the attributes that describe parameters.
constexpr std::uint8_t k_eifmt_nval = 1, k_eifmt_bval = 2, k_eifmt_hval = 3, k_eifmt_sval = 4;
constexpr std::uint8_t k_eiattr_param_cbank = 0x0a, k_eiattr_kparam_info = 0x17, k_eiattr_cbank_param_size = 0x19,
                       k_eiattr_kparam_info_v2 = 0x45;
constexpr std::uint32_t k_sht_cuda_info = 0x70000000;

struct ParamRecord {
  std::uint32_t ordinal = 0, offset = 0, size = 0;
};

// The parameters one .nv.info.<kernel> section describes; nullopt when anything in it is out of
// place. A record is 1 byte of format, 1 of attribute, then: nothing (padded to 4 bytes), 1 byte
// (padded to 2), 2 bytes, or a 2-byte length and that many bytes.
std::optional<std::vector<KernelParam>> section_params(const Bytes& b, const Section& s) {
  if (!b.has(s.offset, s.size)) return std::nullopt;
  std::vector<ParamRecord> records;
  std::optional<std::uint32_t> total;
  auto set_total = [&](std::uint32_t v) {
    if (total && *total != v) return false;
    total = v;
    return true;
  };
  std::uint64_t pos = 0;
  while (pos < s.size) {
    if (s.size - pos < 2) return std::nullopt;
    std::uint8_t format = 0, attribute = 0;
    b.get(s.offset + pos, format);
    b.get(s.offset + pos + 1, attribute);
    if (format == k_eifmt_nval) {
      pos += 2;
      pos = (pos + 3) / 4 * 4;
    } else if (format == k_eifmt_bval) {
      pos += 3;
      pos = (pos + 1) / 2 * 2;
    } else if (format == k_eifmt_hval) {
      if (s.size - pos < 4) return std::nullopt;
      std::uint16_t value = 0;
      b.get(s.offset + pos + 2, value);
      if (attribute == k_eiattr_cbank_param_size && !set_total(value)) return std::nullopt;
      pos += 4;
    } else if (format == k_eifmt_sval) {
      std::uint16_t length = 0;
      if (s.size - pos < 4) return std::nullopt;
      b.get(s.offset + pos + 2, length);
      if (s.size - pos - 4 < length) return std::nullopt;
      const std::uint64_t at = s.offset + pos + 4;
      if (attribute == k_eiattr_kparam_info || attribute == k_eiattr_kparam_info_v2) {
        // u32 index, u16 ordinal, u16 offset, then a u32 whose bits 18..31 are the size (0x17), or a
        // u16 size and u16 flags (0x45).
        if (length != 12) return std::nullopt;
        std::uint16_t ordinal = 0, offset = 0;
        b.get(at + 4, ordinal);
        b.get(at + 6, offset);
        std::uint32_t size = 0;
        if (attribute == k_eiattr_kparam_info) {
          std::uint32_t word = 0;
          b.get(at + 8, word);
          size = (word >> 18) & 0x3fff;
        } else {
          std::uint16_t v2 = 0;
          b.get(at + 8, v2);
          size = v2;
        }
        records.push_back({ordinal, offset, size});
      } else if (attribute == k_eiattr_param_cbank) {
        // u32 symbol of the constant bank, u16 offset in it, u16 size of the parameter block.
        if (length != 8) return std::nullopt;
        std::uint16_t size = 0;
        b.get(at + 6, size);
        if (!set_total(size)) return std::nullopt;
      }
      pos += 4 + std::uint64_t{length};
    } else {
      return std::nullopt;
    }
  }
  if (pos != s.size) return std::nullopt;  // a padded record ran past the end
  // Ordinals 0..n-1, once each; parameters in that order, none empty, none overlapping the one
  // before, the last ending where the block does (as the compiler writes it).
  std::sort(records.begin(), records.end(),
            [](const ParamRecord& x, const ParamRecord& y) { return x.ordinal < y.ordinal; });
  std::vector<KernelParam> params;
  params.reserve(records.size());
  std::uint32_t end = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ParamRecord& r = records[i];
    if (r.ordinal != i || r.size == 0 || r.offset < end) return std::nullopt;
    end = r.offset + r.size;
    params.push_back({r.offset, r.size});
  }
  if (end != total.value_or(0)) return std::nullopt;
  return params;
}

}  // namespace

std::optional<std::vector<std::string>> cubin_kernels(std::string_view elf) {
  const Bytes b(elf);
  const std::optional<Elf> e = read_elf(b, elf);
  if (!e) return std::nullopt;
  return entry_kernels(b, *e);
}

std::optional<KernelParams> cubin_kernel_params(std::string_view elf) {
  const Bytes b(elf);
  const std::optional<Elf> e = read_elf(b, elf);
  if (!e) return std::nullopt;
  const std::optional<std::vector<std::string>> kernels = entry_kernels(b, *e);
  if (!kernels) return std::nullopt;
  // The info section of each kernel by name; a name found twice describes nothing for certain.
  std::map<std::string_view, const Section*, std::less<>> info;
  std::set<std::string_view, std::less<>> twice;
  for (const Section& s : e->sections) {
    if (s.type != k_sht_cuda_info) continue;
    const std::optional<std::string_view> name = b.string(e->names.offset, e->names.size, s.name);
    if (!name || !name->starts_with(".nv.info.")) continue;
    if (!info.emplace(name->substr(9), &s).second) twice.insert(name->substr(9));
  }
  KernelParams out;
  for (const std::string& kernel : *kernels) {
    const auto it = info.find(kernel);
    if (it == info.end() || twice.count(kernel) != 0) continue;
    if (std::optional<std::vector<KernelParam>> params = section_params(b, *it->second))
      out.emplace(kernel, std::move(*params));
  }
  return out;
}

}  // namespace leap::sandbox::detail
