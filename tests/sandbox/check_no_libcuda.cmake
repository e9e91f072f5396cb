# SPDX-License-Identifier: Apache-2.0
# Fails when any of BINARIES records libcuda among the shared libraries it needs.
foreach(binary IN LISTS BINARIES)
  execute_process(COMMAND "${READELF}" -d "${binary}" RESULT_VARIABLE rc OUTPUT_VARIABLE dynamic ERROR_VARIABLE error)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${binary} failed: ${error}")
  endif()
  if(dynamic MATCHES "NEEDED[^\n]*libcuda\\.so")
    message(FATAL_ERROR "${binary} links libcuda; the sandbox must load the driver with dlopen only")
  endif()
  message(STATUS "${binary}: no libcuda")
endforeach()
