// SPDX-License-Identifier: Apache-2.0
#include "cpu_runtime_gpu.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>
#include <stdexcept>

#include "evaluation/device_compare.hpp"
#include "evaluation/input_generator.hpp"

namespace leap::sandbox::test {

namespace rt = cpu_runtime;
using detail::DevicePtr;
using detail::DeviceStatus;

namespace {

constexpr std::size_t k_alignment = 256;          // cuMemAlloc's guarantee
constexpr unsigned k_default_shared = 48 * 1024;  // without opting in

DeviceStatus status_of(rt::Failure f) {
  switch (f) {
    case rt::Failure::none: return CUDA_SUCCESS;
    case rt::Failure::trap: return CUDA_ERROR_ILLEGAL_INSTRUCTION;  // __trap; a failed assert is CUDA_ERROR_ASSERT
    case rt::Failure::shared_out_of_range:
    case rt::Failure::stack_overflow: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case rt::Failure::deadlock:
    case rt::Failure::time_limit: return CUDA_ERROR_LAUNCH_TIMEOUT;  // on a GPU: a hang until the watchdog
    default: return CUDA_ERROR_LAUNCH_FAILED;                        // undefined behaviour on a GPU
  }
}

bool launch_shape_fits(const detail::LaunchShape& s) {
  std::uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (s.grid[d] == 0 || s.block[d] == 0) return false;
    if (s.grid[d] > rt::k_max_grid[d] || s.block[d] > rt::k_max_block[d]) return false;
    threads *= s.block[d];
  }
  return threads <= rt::k_max_block_threads;
}

}  // namespace

CpuRuntimeGpu::CpuRuntimeGpu(verify::ModuleCache& cache, rt::Schedule schedule) : cache_(cache), schedule_(schedule) {}

CpuRuntimeGpu::~CpuRuntimeGpu() {
  for (auto& [p, bytes] : allocations_) std::free(reinterpret_cast<void*>(p));
}

std::string CpuRuntimeGpu::error_name(DeviceStatus status) const {
  const char* name = nullptr;
  switch (status) {
    case CUDA_SUCCESS: name = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_INVALID_IMAGE: name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_INVALID_HANDLE: name = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: name = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: name = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_LAUNCH_TIMEOUT: name = "CUDA_ERROR_LAUNCH_TIMEOUT"; break;
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: name = "CUDA_ERROR_ILLEGAL_INSTRUCTION"; break;
    case CUDA_ERROR_LAUNCH_FAILED: name = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_NOT_SUPPORTED: name = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: return "CUresult " + std::to_string(status);
  }
  return name;
}

std::string CpuRuntimeGpu::error_text(DeviceStatus status) const {
  return status == sticky_ && !last_fault.empty() ? last_fault : std::string();
}

DeviceStatus CpuRuntimeGpu::load_module(std::string_view image, detail::ModuleHandle& module) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  const verify::BuiltModule built = cache_.kernel_module(image, "module.cu");
  if (!built.ok) return CUDA_ERROR_INVALID_IMAGE;
  auto loaded = std::make_unique<LoadedModule>();
  try {
    loaded->module = &cache_.load_kernels(built.path);
  } catch (const rt::ModuleError&) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  LoadedModule* key = loaded.get();
  modules_.emplace(key, std::move(loaded));
  module = key;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::unload_module(detail::ModuleHandle module) {
  if (modules_.erase(static_cast<LoadedModule*>(module)) == 0) return CUDA_ERROR_INVALID_HANDLE;
  return sticky_;
}

DeviceStatus CpuRuntimeGpu::get_function(detail::ModuleHandle module, const std::string& name,
                                         detail::FunctionHandle& function) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  const auto it = modules_.find(static_cast<LoadedModule*>(module));
  if (it == modules_.end()) return CUDA_ERROR_INVALID_HANDLE;
  const rt::Kernel* k = it->second->module->find(name);
  if (k == nullptr) return CUDA_ERROR_NOT_FOUND;
  Function& f = it->second->functions[name];
  f.kernel = k;
  function = &f;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::param_info(detail::FunctionHandle function, std::size_t index, std::size_t& offset,
                                       std::size_t& size) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  const auto params = static_cast<Function*>(function)->kernel->params();
  if (index >= params.size()) return CUDA_ERROR_INVALID_VALUE;
  offset = 0;
  for (std::size_t i = 0; i <= index; ++i) {
    offset = (offset + params[i].align - 1) / params[i].align * params[i].align;
    if (i < index) offset += params[i].size;
  }
  size = params[index].size;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::allow_dynamic_shared(detail::FunctionHandle function, unsigned bytes) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (bytes > shared_optin) return CUDA_ERROR_INVALID_VALUE;
  static_cast<Function*>(function)->opted_in_shared = bytes;
  ++opt_ins;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::local_bytes_per_thread(detail::FunctionHandle, std::size_t& bytes) {
  bytes = 0;
  return sticky_;
}

DeviceStatus CpuRuntimeGpu::static_shared_bytes(detail::FunctionHandle, unsigned& bytes) {
  bytes = 0;  // the CPU runtime's modules do not say; dynamic shared memory is what the tasks use
  return sticky_;
}

DeviceStatus CpuRuntimeGpu::allocate(std::size_t bytes, DevicePtr& ptr) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::aligned_alloc(k_alignment, (bytes + k_alignment - 1) / k_alignment * k_alignment);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(p, 0xA5, bytes);  // fresh device memory holds whatever was there before
  ptr = reinterpret_cast<DevicePtr>(p);
  allocations_.emplace(ptr, bytes);
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::release(DevicePtr ptr) {
  const auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void*>(ptr));
  allocations_.erase(it);
  return sticky_;  // freeing works in a lost context, and still reports it
}

unsigned char* CpuRuntimeGpu::inside(DevicePtr p, std::size_t bytes) const {
  auto it = allocations_.upper_bound(p);
  if (it == allocations_.begin()) return nullptr;
  --it;
  if (p - it->first > it->second || bytes > it->second - (p - it->first)) return nullptr;
  return reinterpret_cast<unsigned char*>(p);
}

DeviceStatus CpuRuntimeGpu::upload(DevicePtr dst, const void* src, std::size_t bytes) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  unsigned char* d = inside(dst, bytes);
  if (d == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0) std::memcpy(d, src, bytes);
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::download(void* dst, DevicePtr src, std::size_t bytes) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  const unsigned char* s = inside(src, bytes);
  if (s == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0) std::memcpy(dst, s, bytes);
  return CUDA_SUCCESS;
}

template <class T>
DeviceStatus CpuRuntimeGpu::fill(DevicePtr dst, T value, std::size_t count) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (dst % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;  // cuMemsetD16/D32 want aligned pointers
  unsigned char* d = inside(dst, count * sizeof(T));
  if (d == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < count; ++i) std::memcpy(d + i * sizeof(T), &value, sizeof(T));
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::fill8(DevicePtr dst, std::uint8_t value, std::size_t count) {
  return fill(dst, value, count);
}
DeviceStatus CpuRuntimeGpu::fill16(DevicePtr dst, std::uint16_t value, std::size_t count) {
  return fill(dst, value, count);
}
DeviceStatus CpuRuntimeGpu::fill32(DevicePtr dst, std::uint32_t value, std::size_t count) {
  return fill(dst, value, count);
}

const rt::Module& CpuRuntimeGpu::harness_module() {
  if (harness_ == nullptr) {
    const std::string source = detail::input_generator_source() + detail::output_compare_source();
    const verify::BuiltModule built = cache_.kernel_module(source, "leap_input_generator.cu");
    if (!built.ok) throw std::runtime_error("the harness's kernels do not compile for the CPU runtime:\n" + built.log);
    harness_ = &cache_.load_kernels(built.path);
  }
  return *harness_;
}

// As cuda_driver.cpp launches them: the same arguments and launch (input_generator.hpp, device_compare.hpp).
DeviceStatus CpuRuntimeGpu::generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                                            std::size_t n) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (n == 0) return CUDA_SUCCESS;
  detail::GeneratorArgs g = detail::generator_args(dtype, generator, seed);
  DevicePtr out = dst;
  unsigned long long count = n, seed_arg = seed;
  void* args[] = {&out, &count, &g.dtype, &g.kind, &g.a, &g.b, &g.lo, &g.span, &seed_arg};
  detail::LaunchShape shape;
  shape.grid[0] = detail::generator_blocks(n);
  shape.block[0] = detail::k_generator_threads;
  ++harness_launches;
  return run(harness_module().kernel("leap_generate_inputs"), shape, args, std::size(args));
}

DeviceStatus CpuRuntimeGpu::compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n,
                                              Tolerance tol, bool exact, DevicePtr record) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (n == 0) return CUDA_SUCCESS;
  detail::CompareArgs c = detail::compare_args(actual, expected, dtype, n, tol, exact, record);
  void* args[] = {&c.actual, &c.expected, &c.count, &c.dtype, &c.exact, &c.atol, &c.rtol, &c.record};
  detail::LaunchShape shape;
  shape.grid[0] = detail::compare_blocks(n);
  shape.block[0] = detail::k_compare_threads;
  ++harness_launches;
  return run(harness_module().kernel("leap_compare_outputs"), shape, args, std::size(args));
}

DeviceStatus CpuRuntimeGpu::flush_caches() {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  ++flushes;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::launch(detail::FunctionHandle function, const detail::LaunchShape& shape, void** args,
                                   std::size_t arg_count) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  const Function& f = *static_cast<Function*>(function);
  if (!launch_shape_fits(shape)) return CUDA_ERROR_INVALID_VALUE;
  if (shape.shared_bytes > shared_optin) return CUDA_ERROR_INVALID_VALUE;
  if (shape.shared_bytes > k_default_shared && shape.shared_bytes > f.opted_in_shared) return CUDA_ERROR_INVALID_VALUE;
  ++launches;
  return run(*f.kernel, shape, args, arg_count);
}

DeviceStatus CpuRuntimeGpu::run(const rt::Kernel& kernel, const detail::LaunchShape& shape, void** args,
                                std::size_t arg_count) {
  if (pending_ != CUDA_SUCCESS) return CUDA_SUCCESS;  // queued behind a faulted kernel: it never runs
  try {
    const rt::LaunchResult r = rt::launch(kernel, {shape.grid[0], shape.grid[1], shape.grid[2]},
                                          {shape.block[0], shape.block[1], shape.block[2]}, shape.shared_bytes,
                                          std::span<void* const>(args, arg_count), schedule_);
    if (!r.ok()) {
      pending_ = status_of(r.failure);
      last_fault = std::string(rt::to_string(r.failure)) + ": " + r.message;
    }
  } catch (const rt::LaunchError&) {  // arguments that do not fit the kernel's parameters
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::synchronize() {
  if (pending_ != CUDA_SUCCESS) {
    sticky_ = pending_;
    pending_ = CUDA_SUCCESS;
  }
  return sticky_;
}

DeviceStatus CpuRuntimeGpu::record_start() {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  start_ = std::chrono::steady_clock::now();
  started_ = true;
  stopped_ = false;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::record_stop() {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  stop_ = std::chrono::steady_clock::now();
  stopped_ = true;
  return CUDA_SUCCESS;
}

DeviceStatus CpuRuntimeGpu::elapsed_ms(double& ms) {
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  if (!started_ || !stopped_) return CUDA_ERROR_INVALID_HANDLE;
  ms = std::chrono::duration<double, std::milli>(stop_ - start_).count();
  return CUDA_SUCCESS;
}

}  // namespace leap::sandbox::test
