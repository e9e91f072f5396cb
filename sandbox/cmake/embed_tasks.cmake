# SPDX-License-Identifier: Apache-2.0
# Writes OUT: a C++ table of every file under TASK_DIR/<category>/<task>/, as byte arrays (no escaping
# issues), in the order of the tasks' names.
file(GLOB _dirs LIST_DIRECTORIES true "${TASK_DIR}/*/*")
set(_keyed "")
foreach(_dir IN LISTS _dirs)
  if(IS_DIRECTORY "${_dir}")
    get_filename_component(_task "${_dir}" NAME)
    list(APPEND _keyed "${_task}|${_dir}")
  endif()
endforeach()
list(SORT _keyed)
set(_arrays "")
set(_rows "")
set(_i 0)
foreach(_entry IN LISTS _keyed)
  string(REGEX REPLACE "^[^|]*\\|" "" _dir "${_entry}")
  get_filename_component(_task "${_dir}" NAME)
  get_filename_component(_category_dir "${_dir}" DIRECTORY)
  get_filename_component(_category "${_category_dir}" NAME)
  file(GLOB _files "${_dir}/*")
  list(SORT _files)
  foreach(_f IN LISTS _files)
    get_filename_component(_name "${_f}" NAME)
    file(READ "${_f}" _hex HEX)
    string(LENGTH "${_hex}" _len)
    math(EXPR _bytes "${_len} / 2")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _hex "${_hex}")
    string(APPEND _arrays "const unsigned char k_file_${_i}[] = {${_hex} 0};\n")
    string(APPEND _rows "  {\"${_category}\", \"${_task}\", \"${_name}\", k_file_${_i}, ${_bytes}},\n")
    math(EXPR _i "${_i} + 1")
  endforeach()
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from sandbox/tasks by embed_tasks.cmake; do not edit.
#include <cstddef>
namespace leap::sandbox::detail {
struct EmbeddedFile { const char* category; const char* task; const char* name; const unsigned char* data; std::size_t size; };
namespace {
${_arrays}}
extern const EmbeddedFile k_embedded_task_files[] = {
${_rows}  {nullptr, nullptr, nullptr, nullptr, 0}};
}  // namespace leap::sandbox::detail
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
