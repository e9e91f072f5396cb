# SPDX-License-Identifier: Apache-2.0
# Warning flags for leap's own programs (tests, examples, benchmarks). Never put on exported targets:
# a trainer that links leap::leap gets none of these.
option(LEAP_STRICT_WARNINGS "Build leap's own programs with strict warnings as errors" OFF)

function(leap_target_warnings target)
  if(NOT LEAP_STRICT_WARNINGS)
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wsign-conversion -Wold-style-cast -Werror)
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 /WX)
  endif()
endfunction()
