# SPDX-License-Identifier: Apache-2.0
# FindCUDAToolkit declares CUDA::nvrtc with a dependency on CUDA::cuda_driver, the toolkit's stub
# libcuda.so. NVRTC needs no driver, and leap's sandbox must never link one (it dlopens libcuda.so.1
# at run time, so its programs start on machines without a GPU). Linkers that drop unused libraries
# hide the stub; others (and sanitizer builds) record it and the program then fails to start without
# a driver. Strip the dependency from the imported target, in the build and in the installed config.
if(TARGET CUDA::nvrtc)
  get_target_property(_leap_nvrtc_deps CUDA::nvrtc INTERFACE_LINK_LIBRARIES)
  if(_leap_nvrtc_deps)
    list(REMOVE_ITEM _leap_nvrtc_deps CUDA::cuda_driver)
    set_target_properties(CUDA::nvrtc PROPERTIES INTERFACE_LINK_LIBRARIES "${_leap_nvrtc_deps}")
  endif()
  unset(_leap_nvrtc_deps)
endif()
