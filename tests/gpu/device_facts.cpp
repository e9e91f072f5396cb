// SPDX-License-Identifier: Apache-2.0
// Prints, as key=value lines, the device facts a GPU check records next to its figures: driver,
// compute mode, clocks, memory clock and bus width (the peak bandwidth under the timing floor), L2,
// the opt-in shared memory per block, and whether device code can read the host's pageable memory (on such
// systems a kernel could read the GPU runner's heap). tests/gpu/run.sh compiles it with only cuda.h
// and -ldl. Exits 1 when there is no usable driver or device.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>

namespace {

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

int main() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::printf("driver=none (%s)\n", ::dlerror());
    return 1;
  }
  auto init = symbol<decltype(&cuInit)>(lib, "cuInit");
  auto version = symbol<decltype(&cuDriverGetVersion)>(lib, "cuDriverGetVersion");
  auto get = symbol<decltype(&cuDeviceGet)>(lib, "cuDeviceGet");
  auto name = symbol<decltype(&cuDeviceGetName)>(lib, "cuDeviceGetName");
  auto attribute = symbol<decltype(&cuDeviceGetAttribute)>(lib, "cuDeviceGetAttribute");
  if (init == nullptr || version == nullptr || get == nullptr || name == nullptr || attribute == nullptr) {
    std::printf("driver=incomplete\n");
    return 1;
  }
  int v = 0;
  if (init(0) != CUDA_SUCCESS || version(&v) != CUDA_SUCCESS) {
    std::printf("driver=unusable\n");
    return 1;
  }
  std::printf("driver_api=%d.%d\n", v / 1000, v % 1000 / 10);
  CUdevice dev = 0;
  if (get(&dev, 0) != CUDA_SUCCESS) {
    std::printf("device=none\n");
    return 1;
  }
  char n[256] = {};
  name(n, sizeof n - 1, dev);
  std::printf("device=%s\n", n);
  const struct {
    const char* key;
    CUdevice_attribute attr;
  } facts[] = {
      {"compute_capability_major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"compute_capability_minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {"compute_mode", CU_DEVICE_ATTRIBUTE_COMPUTE_MODE},  // 0 default, 2 prohibited, 3 exclusive process
      {"multiprocessors", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"clock_khz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {"l2_cache_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
      {"memory_clock_khz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {"memory_bus_width_bits", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
      {"max_shared_per_block_optin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"pageable_memory_access", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS},
      {"pageable_memory_access_uses_host_page_tables",
       CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES},
      {"concurrent_managed_access", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS},
      {"cooperative_launch", CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH},
  };
  for (const auto& f : facts) {
    int value = -1;
    if (attribute(&value, f.attr, dev) != CUDA_SUCCESS) value = -1;
    std::printf("%s=%d\n", f.key, value);
  }
  return 0;
}
