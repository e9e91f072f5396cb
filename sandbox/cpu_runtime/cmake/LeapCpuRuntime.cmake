# SPDX-License-Identifier: Apache-2.0
# leap_cpu_runtime_module(<name> SOURCE <file.cu> [OUTPUT <module.so>] [INCLUDE_DIRS <dir>...]
#                         [DEFINES <NAME[=VALUE]>...] [OPTIMIZATION -O1|-O2])
# Compiles a trusted .cu into a kernel module for the CPU runtime at build time (leap-cpu-cc), as the
# target <name>; OUTPUT defaults to ${CMAKE_CURRENT_BINARY_DIR}/<name>.so. The target's property
# LEAP_CPU_MODULE holds the module's path. Never a candidate's source.
function(leap_cpu_runtime_module name)
  cmake_parse_arguments(arg "" "SOURCE;OUTPUT;OPTIMIZATION" "INCLUDE_DIRS;DEFINES" ${ARGN})
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "leap_cpu_runtime_module(${name}): name the .cu with SOURCE")
  endif()
  get_filename_component(_source "${arg_SOURCE}" ABSOLUTE)
  if(arg_OUTPUT)
    set(_output "${arg_OUTPUT}")
  else()
    set(_output "${CMAKE_CURRENT_BINARY_DIR}/${name}.so")
  endif()
  set(_flags "")
  foreach(_dir IN LISTS arg_INCLUDE_DIRS)
    list(APPEND _flags "-I${_dir}")
  endforeach()
  foreach(_define IN LISTS arg_DEFINES)
    list(APPEND _flags "-D${_define}")
  endforeach()
  if(arg_OPTIMIZATION)
    list(APPEND _flags "${arg_OPTIMIZATION}")
  endif()
  add_custom_command(OUTPUT "${_output}"
    COMMAND leap-cpu-cc ${_flags} --kernel-include "${LEAP_CPU_RUNTIME_KERNEL_INCLUDE}" -o "${_output}" "${_source}"
    DEPENDS leap-cpu-cc "${_source}" ${LEAP_CPU_RUNTIME_KERNEL_HEADERS}
    COMMENT "Compiling ${arg_SOURCE} for the CPU runtime" VERBATIM)
  add_custom_target(${name} DEPENDS "${_output}")
  set_target_properties(${name} PROPERTIES LEAP_CPU_MODULE "${_output}")
endfunction()
