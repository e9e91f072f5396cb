// SPDX-License-Identifier: Apache-2.0
#include "elf_kernels.hpp"

#include <algorithm>
#include <cstdint>

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
    for (std::size_t i = sizeof(T); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b_[static_cast<std::size_t>(offset) + i]);
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

}  // namespace

std::optional<std::vector<std::string>> cubin_kernels(std::string_view elf) {
  const Bytes b(elf);
  if (elf.size() < k_header_size || elf.substr(0, 4) != "\x7f" "ELF" || elf[4] != 2 /* 64-bit */ || elf[5] != 1 /* LE */) {
    return std::nullopt;
  }
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum16 = 0, shstrndx16 = 0;
  if (!b.get(0x28, shoff) || !b.get(0x3A, shentsize) || !b.get(0x3C, shnum16) || !b.get(0x3E, shstrndx16)) return std::nullopt;
  if (shoff == 0) return std::vector<std::string>{};  // no sections, so no symbols
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
  if (shnum == 0 || shnum > (elf.size() - std::min<std::uint64_t>(shoff, elf.size())) / k_section_size) return std::nullopt;
  std::vector<Section> sections(static_cast<std::size_t>(shnum));
  for (std::uint64_t i = 0; i < shnum; ++i) {
    if (!read_section(i, sections[static_cast<std::size_t>(i)])) return std::nullopt;
  }
  if (shstrndx >= shnum) return std::nullopt;
  const Section& names = sections[static_cast<std::size_t>(shstrndx)];
  if (!b.has(names.offset, names.size)) return std::nullopt;

  std::vector<std::string> kernels;
  for (const Section& symtab : sections) {
    if (symtab.type != k_sht_symtab) continue;
    if (symtab.entsize != k_symbol_size || !b.has(symtab.offset, symtab.size) || symtab.link >= shnum) return std::nullopt;
    const Section& strtab = sections[symtab.link];
    if (!b.has(strtab.offset, strtab.size)) return std::nullopt;
    for (std::uint64_t k = 1; k < symtab.size / k_symbol_size; ++k) {  // symbol 0 is the null symbol
      const std::uint64_t at = symtab.offset + k * k_symbol_size;
      std::uint32_t name = 0;
      std::uint8_t info = 0, other = 0;
      std::uint16_t shndx = 0;
      if (!b.get(at, name) || !b.get(at + 4, info) || !b.get(at + 5, other) || !b.get(at + 6, shndx)) return std::nullopt;
      const unsigned type = info & 0xF, bind = info >> 4;
      if (type != k_stt_func || (bind != k_stb_global && bind != k_stb_weak) || (other & k_sto_cuda_entry) == 0) continue;
      if (shndx == 0 || shndx >= k_shn_loreserve || shndx >= shnum) continue;
      const std::optional<std::string_view> symbol = b.string(strtab.offset, strtab.size, name);
      const std::optional<std::string_view> section = b.string(names.offset, names.size, sections[shndx].name);
      if (!symbol || !section) return std::nullopt;
      if (symbol->empty() || !section->starts_with(".text.") || section->substr(6) != *symbol) continue;
      kernels.emplace_back(*symbol);
    }
  }
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  return kernels;
}

}  // namespace leap::sandbox::detail
