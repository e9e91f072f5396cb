// SPDX-License-Identifier: Apache-2.0
// find_package(leap COMPONENTS sandbox): compile a kernel with NVRTC behind the include jail, and
// ask whether a GPU is there to run it. Starts on machines without a CUDA driver.
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/driver_probe.hpp>

#include <cstdio>
#include <string>

int main() {
  leap::sandbox::Compiler compiler;
  leap::sandbox::CompileJob job;
  job.source =
      "extern \"C\" __global__ void twice(float* x, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] *= 2.0f;\n"
      "}\n";
  const leap::sandbox::CompileResult result = compiler.compile(job);
  std::printf("compile: %s in %.3f s, %zu bytes of CUBIN\n", std::string(to_string(result.status)).c_str(),
              result.seconds, result.cubin.size());
  const leap::sandbox::GpuStatus gpu = leap::sandbox::probe_gpu();
  std::printf("gpu: %s %s\n", std::string(to_string(gpu.state)).c_str(), gpu.reason.c_str());
  return result.ok() ? 0 : 1;
}
