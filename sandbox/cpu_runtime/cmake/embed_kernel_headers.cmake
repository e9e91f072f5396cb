# SPDX-License-Identifier: Apache-2.0
# Writes OUT: a C++ table of every file under HEADER_DIR (the CPU runtime's kernel headers), as byte
# arrays, so a program finds them without a data directory (kernel_headers.cpp writes them out).
file(GLOB_RECURSE _files RELATIVE "${HEADER_DIR}" "${HEADER_DIR}/*")
list(SORT _files)
set(_arrays "")
set(_rows "")
set(_i 0)
foreach(_name IN LISTS _files)
  file(READ "${HEADER_DIR}/${_name}" _hex HEX)
  string(LENGTH "${_hex}" _len)
  math(EXPR _bytes "${_len} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _hex "${_hex}")
  string(APPEND _arrays "const unsigned char k_header_${_i}[] = {${_hex} 0};\n")
  string(APPEND _rows "  {\"${_name}\", k_header_${_i}, ${_bytes}},\n")
  math(EXPR _i "${_i} + 1")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from sandbox/cpu_runtime/kernel_include by embed_kernel_headers.cmake; do not edit.
#include <cstddef>
namespace leap::cpu_runtime::detail {
struct EmbeddedHeader { const char* name; const unsigned char* data; std::size_t size; };
namespace {
${_arrays}}
extern const EmbeddedHeader k_embedded_kernel_headers[] = {
${_rows}  {nullptr, nullptr, 0}};
}  // namespace leap::cpu_runtime::detail
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
