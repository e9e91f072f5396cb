# SPDX-License-Identifier: Apache-2.0
# Installs the built leap into a fresh prefix, then configures, builds and runs examples/consumer
# against it with find_package(leap 0.1 REQUIRED), exactly as a trainer's project would.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message(STATUS "${description}:\n${output}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${description} failed (${result})")
  endif()
endfunction()

run_step("install" ${CMAKE_COMMAND} --install "${LEAP_BINARY_DIR}" --prefix "${prefix}")
file(GLOB_RECURSE config_files "${prefix}/*/leapConfig.cmake")
if(NOT EXISTS "${prefix}/include/leap/version.hpp" OR NOT config_files)
  message(FATAL_ERROR "the install tree lacks include/leap/version.hpp or leapConfig.cmake")
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build"
         "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}" -DCONSUMER_STRICT=ON
         # leap's own flags (a sanitizer preset instruments the installed library, so its users must too)
         "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run_step("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("run the consumer" "${WORK_DIR}/build/consumer")
if(NOT EXISTS "${WORK_DIR}/build/consumer_adapters")
  message(FATAL_ERROR "find_package(leap COMPONENTS eigen json) did not provide leap::eigen and leap::json")
endif()
run_step("run the adapters consumer" "${WORK_DIR}/build/consumer_adapters")
if(EXISTS "${LEAP_BINARY_DIR}/sandbox")
  if(NOT EXISTS "${WORK_DIR}/build/consumer_sandbox")
    message(FATAL_ERROR "leap was built with the sandbox, but find_package(leap COMPONENTS sandbox) did not provide it")
  endif()
  run_step("run the sandbox consumer" "${WORK_DIR}/build/consumer_sandbox")
endif()
# A consumer of the core alone, configured as on a machine with neither Eigen nor nlohmann/json.
run_step("configure the core-only consumer without Eigen and nlohmann/json" ${CMAKE_COMMAND}
         -S "${CORE_ONLY_SOURCE_DIR}" -B "${WORK_DIR}/core_only" "-DCMAKE_PREFIX_PATH=${prefix}"
         "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}" -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON
         -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
         "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run_step("build the core-only consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/core_only")
run_step("run the core-only consumer" "${WORK_DIR}/core_only/core_only")
file(GLOB fleet_library "${LEAP_BINARY_DIR}/sandbox/*leap_sandbox_fleet*")
if(fleet_library)
  if(NOT EXISTS "${WORK_DIR}/build/consumer_fleet")
    message(FATAL_ERROR "leap was built with the fleet, but find_package(leap COMPONENTS fleet) did not provide it")
  endif()
  run_step("run the fleet consumer" "${WORK_DIR}/build/consumer_fleet")
endif()
