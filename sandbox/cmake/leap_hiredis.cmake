# SPDX-License-Identifier: Apache-2.0
# Defines leap::hiredis, an imported target for the hiredis C client, where hiredis is found. The one
# place that finds it: leap's build includes this, and so does the installed leapConfig.cmake, so the
# exported fleet library names the same target in both.
if(NOT TARGET leap::hiredis)
  find_path(LEAP_HIREDIS_INCLUDE_DIR hiredis/hiredis.h)
  find_library(LEAP_HIREDIS_LIBRARY NAMES hiredis)
  if(LEAP_HIREDIS_INCLUDE_DIR AND LEAP_HIREDIS_LIBRARY)
    add_library(leap::hiredis UNKNOWN IMPORTED)
    set_target_properties(leap::hiredis PROPERTIES IMPORTED_LOCATION "${LEAP_HIREDIS_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${LEAP_HIREDIS_INCLUDE_DIR}")
  endif()
endif()
