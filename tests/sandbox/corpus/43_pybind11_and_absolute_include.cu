// SPDX-License-Identifier: Apache-2.0
// expect-status: refused
// expect-log: kernel.cu(5): #include <pybind11/pybind11.h>: host-only
// expect-log: kernel.cu(6): #include "/home/user/project/common.cuh": outside the toolkit
#include <pybind11/pybind11.h>
#include "/home/user/project/common.cuh"
__global__ void k() {}
