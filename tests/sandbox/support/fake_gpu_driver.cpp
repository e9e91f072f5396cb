// SPDX-License-Identifier: Apache-2.0
#include "fake_gpu_driver.hpp"

#include <algorithm>
#include <stdexcept>

#include "evaluation/device_compare.hpp"
#include "evaluation/input_generator.hpp"

namespace leap::sandbox::test {

namespace {
constexpr DeviceStatus k_invalid_value = 1;    // CUDA_ERROR_INVALID_VALUE
constexpr DeviceStatus k_out_of_memory = 2;    // CUDA_ERROR_OUT_OF_MEMORY
constexpr DeviceStatus k_invalid_image = 200;  // CUDA_ERROR_INVALID_IMAGE
constexpr DeviceStatus k_not_found = 500;      // CUDA_ERROR_NOT_FOUND
constexpr DeviceStatus k_not_supported = 801;  // CUDA_ERROR_NOT_SUPPORTED
}  // namespace

float* FakeCall::floats(DevicePtr p, std::size_t count) {
  unsigned char* m = gpu.memory(p, count * sizeof(float));
  if (m == nullptr) status = k_illegal_address;
  return reinterpret_cast<float*>(m);
}

FakeGpu::FakeGpu(std::size_t arena_bytes) : arena_(arena_bytes, 0xEE) {}

void FakeGpu::add_module(const std::string& image, std::map<std::string, FakeKernel> kernels, KernelParams params) {
  registry_[image] = std::move(kernels);
  params_[image] = std::move(params);
}

void FakeGpu::set_params(const std::string& image, const std::string& kernel, std::vector<KernelParam> params) {
  params_[image][kernel] = std::move(params);
}

bool FakeGpu::has_params(const std::string& image, const std::string& kernel) const {
  const auto it = params_.find(image);
  return it != params_.end() && it->second.count(kernel) != 0;
}

std::vector<KernelParam> FakeGpu::signature_params(const TaskSpec& task) {
  std::vector<KernelParam> out;
  std::uint32_t end = 0;
  for (const Param& p : task.params) {
    const std::uint32_t size = p.kind == ParamKind::buffer ? 8 : static_cast<std::uint32_t>(dtype_size(p.dtype));
    const std::uint32_t offset = (end + size - 1) / size * size;
    out.push_back({offset, size});
    end = offset + size;
  }
  return out;
}

unsigned char* FakeGpu::memory(DevicePtr p, std::size_t bytes) {
  if (p < base_ || p - base_ > arena_.size() || bytes > arena_.size() - (p - base_)) return nullptr;
  return arena_.data() + (p - base_);
}

std::string FakeGpu::error_name(DeviceStatus status) const {
  switch (status) {
    case 0: return "CUDA_SUCCESS";
    case k_invalid_value: return "CUDA_ERROR_INVALID_VALUE";
    case k_out_of_memory: return "CUDA_ERROR_OUT_OF_MEMORY";
    case k_invalid_image: return "CUDA_ERROR_INVALID_IMAGE";
    case k_not_found: return "CUDA_ERROR_NOT_FOUND";
    case k_not_supported: return "CUDA_ERROR_NOT_SUPPORTED";
    case k_illegal_address: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case k_launch_failed: return "CUDA_ERROR_LAUNCH_FAILED";
  }
  return "CUDA error " + std::to_string(status);
}

std::string FakeGpu::error_text(DeviceStatus status) const {
  return status == k_illegal_address ? "an illegal memory access was encountered" : "";
}

DeviceStatus FakeGpu::load_module(std::string_view image, detail::ModuleHandle& module) {
  const std::string name(image.data(), image.size());
  log.push_back({"load", name});
  if (registry_.count(name) == 0) return k_invalid_image;
  modules_.push_back(std::make_unique<Module>(Module{name, {}}));
  module = modules_.back().get();
  return 0;
}

DeviceStatus FakeGpu::unload_module(detail::ModuleHandle module) {
  auto* m = static_cast<Module*>(module);
  log.push_back({"unload", m->image});
  const auto it = std::find_if(modules_.begin(), modules_.end(), [&](const auto& p) { return p.get() == m; });
  if (it == modules_.end()) return k_invalid_value;
  std::erase_if(functions_, [&](const auto& f) { return f->module == m; });
  modules_.erase(it);
  return 0;
}

DeviceStatus FakeGpu::get_function(detail::ModuleHandle module, const std::string& name,
                                   detail::FunctionHandle& function) {
  auto* m = static_cast<Module*>(module);
  const auto& kernels = registry_.at(m->image);
  const auto it = kernels.find(name);
  if (it == kernels.end()) return k_not_found;
  const unsigned static_bytes = static_shared.count(name) != 0 ? static_shared.at(name) : 0;
  std::optional<std::vector<KernelParam>> params;
  if (has_params(m->image, name)) params = params_.at(m->image).at(name);
  functions_.push_back(std::make_unique<Function>(
      Function{m, name, it->second, std::move(params), static_bytes, 48 * 1024 - std::min(static_bytes, 48u * 1024)}));
  function = functions_.back().get();
  return 0;
}

DeviceStatus FakeGpu::param_info(detail::FunctionHandle function, std::size_t index, std::size_t& offset,
                                 std::size_t& size) {
  const auto* f = static_cast<Function*>(function);
  if (!f->params) return k_not_supported;
  if (index >= f->params->size()) return k_invalid_value;
  offset = (*f->params)[index].offset;
  size = (*f->params)[index].size;
  return 0;
}

DeviceStatus FakeGpu::allow_dynamic_shared(detail::FunctionHandle function, unsigned bytes) {
  auto* f = static_cast<Function*>(function);
  log.push_back({"allow_shared", f->module->image + ":" + f->name, 0, bytes});
  if (f->static_shared + std::uint64_t{bytes} > shared_optin) return k_invalid_value;
  f->shared_allowed = bytes;
  return 0;
}

DeviceStatus FakeGpu::static_shared_bytes(detail::FunctionHandle function, unsigned& bytes) {
  bytes = static_cast<Function*>(function)->static_shared;
  return 0;
}

DeviceStatus FakeGpu::local_bytes_per_thread(detail::FunctionHandle function, std::size_t& bytes) {
  const auto it = local_bytes.find(static_cast<Function*>(function)->name);
  bytes = it != local_bytes.end() ? it->second : 0;
  return 0;
}

DeviceStatus FakeGpu::allocate(std::size_t bytes, DevicePtr& ptr) {
  const std::size_t need = (bytes + 255) / 256 * 256;
  DevicePtr at = base_;
  for (const auto& [start, size] : allocations_) {  // first fit: freed space is reused, as a GPU does
    if (start - at >= need) break;
    at = start + (size + 255) / 256 * 256;
  }
  if (at - base_ + need > arena_.size()) return k_out_of_memory;
  allocations_[at] = bytes;
  ptr = at;
  log.push_back({"alloc", "", at, bytes});
  return 0;
}

DeviceStatus FakeGpu::release(DevicePtr ptr) {
  const auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return k_invalid_value;
  const unsigned char* m = memory(ptr, it->second);
  if (std::any_of(m, m + it->second, [](unsigned char c) { return c != 0; })) ++unscrubbed_frees;
  log.push_back({"free", "", ptr, it->second});
  allocations_.erase(it);
  return 0;
}

DeviceStatus FakeGpu::upload(DevicePtr dst, const void* src, std::size_t bytes) {
  if (sticky_ != 0) return sticky_;
  unsigned char* m = memory(dst, bytes);
  if (m == nullptr) return k_invalid_value;
  std::memcpy(m, src, bytes);
  log.push_back({"upload", "", dst, bytes});
  return 0;
}

DeviceStatus FakeGpu::download(void* dst, DevicePtr src, std::size_t bytes) {
  if (sticky_ != 0) return sticky_;
  const unsigned char* m = memory(src, bytes);
  if (m == nullptr) return k_invalid_value;
  std::memcpy(dst, m, bytes);
  log.push_back({"download", "", src, bytes});
  return 0;
}

DeviceStatus FakeGpu::fill8(DevicePtr dst, std::uint8_t value, std::size_t count) {
  unsigned char* m = memory(dst, count);
  if (m == nullptr) return k_invalid_value;
  std::memset(m, value, count);
  log.push_back({"fill", "", dst, count, value});
  return sticky_;
}

DeviceStatus FakeGpu::fill16(DevicePtr dst, std::uint16_t value, std::size_t count) {
  unsigned char* m = memory(dst, count * 2);
  if (m == nullptr) return k_invalid_value;
  for (std::size_t i = 0; i < count; ++i) std::memcpy(m + 2 * i, &value, 2);
  log.push_back({"fill", "", dst, count * 2, value});
  return sticky_;
}

DeviceStatus FakeGpu::fill32(DevicePtr dst, std::uint32_t value, std::size_t count) {
  unsigned char* m = memory(dst, count * 4);
  if (m == nullptr) return k_invalid_value;
  for (std::size_t i = 0; i < count; ++i) std::memcpy(m + 4 * i, &value, 4);
  log.push_back({"fill", "", dst, count * 4, value});
  return sticky_;
}

DeviceStatus FakeGpu::generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                                      std::size_t n) {
  if (sticky_ != 0) return sticky_;
  unsigned char* m = memory(dst, n * dtype_size(dtype));
  if (m == nullptr) return k_invalid_value;
  detail::generate_inputs_on_host(dtype, generator, seed, m, n);
  log.push_back({"generate", "", dst, n * dtype_size(dtype), seed});
  record_kernel(generator_ms, 0);
  return 0;
}

// As the harness's kernel does on a GPU: the record is read, added to and written back in device
// memory, so whatever a candidate left there counts too.
DeviceStatus FakeGpu::compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n, Tolerance tol,
                                        bool exact, DevicePtr record) {
  if (sticky_ != 0) return sticky_;
  const std::size_t bytes = n * dtype_size(dtype);
  const unsigned char* a = memory(actual, bytes);
  const unsigned char* e = memory(expected, bytes);
  unsigned char* r = memory(record, sizeof(detail::CompareRecord));
  if (a == nullptr || e == nullptr || r == nullptr) return k_invalid_value;
  detail::CompareRecord rec;
  std::memcpy(&rec, r, sizeof rec);
  detail::compare_on_host(a, e, dtype, n, tol, exact, rec);
  std::memcpy(r, &rec, sizeof rec);
  log.push_back({"compare", "", actual, bytes, expected});
  record_kernel(compare_ms, 0);
  return 0;
}

DeviceStatus FakeGpu::flush_caches() {
  log.push_back({"flush"});
  return sticky_;
}

void FakeGpu::record_kernel(double ms, std::uint64_t external_id, bool delivered) {
  const std::uint64_t start = ++now_ns_;  // a launch starts after whatever the host read before it
  now_ns_ += static_cast<std::uint64_t>(ms * 1e6);
  if (!activity_on || !delivered) return;
  ++record_count_;
  if (drop_every > 0 && record_count_ % drop_every == 0) {
    ++dropped_;
    return;
  }
  // CUPTI writes the external correlation record only in front of the launch's driver API record.
  const bool ids_attach = external_ids && driver_api_records;
  records_.push_back({start, now_ns_, ids_attach ? external_id : 0});
}

DeviceStatus FakeGpu::launch(detail::FunctionHandle function, const detail::LaunchShape& shape, void** args,
                             std::size_t arg_count) {
  if (sticky_ != 0) return sticky_;
  auto* f = static_cast<Function*>(function);
  const auto it = std::find_if(functions_.begin(), functions_.end(), [&](const auto& p) { return p.get() == f; });
  if (it == functions_.end()) return k_invalid_value;  // a handle from an unloaded module
  if (shape.shared_bytes > f->shared_allowed) return k_invalid_value;
  FakeOp op{"launch", f->module->image + ":" + f->name};
  std::vector<std::uint64_t> slots;
  if (f->params) {
    // As the driver: one pointer per declared parameter, each read for the parameter's bytes,
    // whatever count the caller thinks it passed. The harness's slots are 8 bytes wide.
    bool overread = false;
    for (std::size_t i = 0; i < f->params->size(); ++i) {
      const std::size_t bytes = (*f->params)[i].size;
      std::uint64_t v = 0;
      if (i < arg_count && bytes <= sizeof v) std::memcpy(&v, args[i], bytes);
      else overread = true;
      slots.push_back(v);
    }
    argument_overreads += overread ? 1 : 0;
  } else {
    // The fake's kernels read 8-byte slots; the harness's argument slots are exactly that wide.
    for (std::size_t i = 0; i < arg_count; ++i) {
      std::uint64_t v = 0;
      std::memcpy(&v, args[i], sizeof v);
      slots.push_back(v);
    }
  }
  op.args = slots;
  log.push_back(op);
  FakeCall call{*this, slots, shape, f->module->globals, now_ns_};
  f->kernel(call);
  record_kernel(call.duration_ms, external_stack_.empty() ? 0 : external_stack_.back(), f->name != undelivered);
  sticky_ = call.status;  // reported by the next synchronising call, as on a GPU
  return 0;
}

DeviceStatus FakeGpu::synchronize() {
  log.push_back({"sync"});
  return sticky_;
}

DeviceStatus FakeGpu::record_start() {
  log.push_back({"record_start"});
  start_ns_ = now_ns_;
  return sticky_;
}

DeviceStatus FakeGpu::record_stop() {
  log.push_back({"record_stop"});
  stop_ns_ = now_ns_;
  return sticky_;
}

DeviceStatus FakeGpu::elapsed_ms(double& ms) {
  ms = static_cast<double>(stop_ns_ - start_ns_) * 1e-6;
  return sticky_;
}

void FakeGpu::activity_reset() {
  records_.clear();
  dropped_ = 0;
}

DeviceStatus FakeGpu::push_external_id(std::uint64_t id) {
  external_stack_.push_back(id);
  return 0;
}

DeviceStatus FakeGpu::pop_external_id() {
  if (external_stack_.empty()) return k_invalid_value;
  external_stack_.pop_back();
  return 0;
}

detail::ActivityHarvest FakeGpu::harvest_activity(std::size_t) {
  detail::ActivityHarvest h;
  h.kernels.swap(records_);
  h.dropped = dropped_;
  dropped_ = 0;
  return h;
}

}  // namespace leap::sandbox::test
