// SPDX-License-Identifier: Apache-2.0
#include "fake_gpu_driver.hpp"

#include <algorithm>
#include <cmath>
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

FakeGpu::FakeGpu(FakeRules rules, std::size_t arena_bytes)
    : arena_(arena_bytes, 0xEE), rules_(rules), random_(rules.seed) {}

// ---- the driver's rules (fake_rules.hpp) ---------------------------------------------------------

void FakeGpu::charge_call() { host_charged_ns_ += static_cast<std::int64_t>(rules_.host_call_us * 1e3); }

// An asynchronous call: refused once the context is poisoned; while a fault is pending, accepted
// (success) but never carried out, until the fault surfaces.
DeviceStatus FakeGpu::async_call(Gate& gate) {
  charge_call();
  gate = Gate::run;
  if (sticky_ != 0) {
    gate = rules_.poisoned_context_refuses ? Gate::skip : Gate::run;
    return sticky_;
  }
  if (pending_fault_ == 0) return 0;
  gate = Gate::skip;
  if (pending_calls_ > 0) {
    --pending_calls_;
    return 0;
  }
  sticky_ = std::exchange(pending_fault_, 0);
  return sticky_;
}

// A synchronising call: waits for the device's queued work and reports any fault.
DeviceStatus FakeGpu::sync_call() {
  charge_call();
  if (rules_.host_waits_for_device) host_charged_ns_ += static_cast<std::int64_t>(device_pending_ns_);
  device_pending_ns_ = 0;
  if (pending_fault_ != 0) sticky_ = std::exchange(pending_fault_, 0);
  return sticky_;
}

void FakeGpu::fault(DeviceStatus status) {
  if (status == 0 || sticky_ != 0 || pending_fault_ != 0) return;
  if (rules_.fault_latency_calls <= 0) {
    sticky_ = status;  // reported by the next call
    return;
  }
  pending_fault_ = status;
  pending_calls_ = std::uniform_int_distribution<int>(0, rules_.fault_latency_calls)(random_);
}

double FakeGpu::kernel_ms(double ms) {
  if (rules_.duration_spread > 0.0) {
    const double z = std::normal_distribution<double>(0.0, 1.0)(random_);
    ms *= std::max(0.5, 1.0 + rules_.duration_spread * z);
  }
  if (!l2_warm_) ms *= 1.0 + rules_.cold_l2_penalty;
  l2_warm_ = true;
  return ms;
}

double FakeGpu::event_ms(std::uint64_t ns) {
  double us = static_cast<double>(ns) * 1e-3;
  if (rules_.event_jitter_us > 0.0) us += std::normal_distribution<double>(0.0, rules_.event_jitter_us)(random_);
  if (rules_.event_resolution_us > 0.0) us = std::round(us / rules_.event_resolution_us) * rules_.event_resolution_us;
  return std::max(us, 0.0) * 1e-3;
}

void FakeGpu::write_record(const RawRecord& r) {
  if (rules_.records_per_buffer == 0) {
    delivered_.push_back(r);
    return;
  }
  open_buffer_.records.push_back(r);
  if (open_buffer_.records.size() < rules_.records_per_buffer) return;
  open_buffer_.flushes_left = std::uniform_int_distribution<int>(0, std::max(0, rules_.buffer_delay_flushes))(random_);
  full_buffers_.push_back(std::move(open_buffer_));
  open_buffer_ = {};
}

// cuptiActivityFlushAll: unforced, the buffers whose records are all complete (full ones once
// their delay is over; the one being written only when its newest record is not still being
// written); forced, every buffer, the newest record incomplete.
void FakeGpu::flush_activity(bool forced) {
  forced_flushes += forced ? 1 : 0;
  auto hand_over = [&](ActivityBuffer& b) {
    delivered_.insert(delivered_.end(), b.records.begin(), b.records.end());
    ++activity_pieces;
  };
  while (!full_buffers_.empty() && (forced || full_buffers_.front().flushes_left <= 0)) {
    hand_over(full_buffers_.front());
    full_buffers_.pop_front();
  }
  for (ActivityBuffer& b : full_buffers_) --b.flushes_left;
  if (open_buffer_.records.empty()) return;
  if (forced) {
    if (rules_.newest_record_incomplete) open_buffer_.records.back() = {};
    hand_over(open_buffer_);
    open_buffer_ = {};
  } else if (!rules_.newest_record_incomplete) {
    hand_over(open_buffer_);
    open_buffer_ = {};
  }
}

// As the real driver's harvest decides it has what it waited for: records carrying an external id
// when ids attach, else any kernel records.
bool FakeGpu::activity_matched(std::size_t expected) const {
  const bool ids = external_ids && driver_api_records;
  std::size_t n = 0;
  for (const RawRecord& r : delivered_)
    n += (!ids || r.external_id != 0) && detail::kernel_record_usable(r.start, r.end);
  return n >= expected;
}

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
  charge_call();
  if (sticky_ != 0 && rules_.poisoned_context_refuses) return sticky_;
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
  if (DeviceStatus rc = sync_call(); rc != 0 && rules_.poisoned_context_refuses) return rc;  // cuMemFree synchronises
  const auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return k_invalid_value;
  const unsigned char* m = memory(ptr, it->second);
  if (std::any_of(m, m + it->second, [](unsigned char c) { return c != 0; })) ++unscrubbed_frees;
  log.push_back({"free", "", ptr, it->second});
  allocations_.erase(it);
  return 0;
}

DeviceStatus FakeGpu::upload(DevicePtr dst, const void* src, std::size_t bytes) {
  if (DeviceStatus rc = sync_call(); rc != 0) return rc;
  unsigned char* m = memory(dst, bytes);
  if (m == nullptr) return k_invalid_value;
  std::memcpy(m, src, bytes);
  log.push_back({"upload", "", dst, bytes});
  return 0;
}

DeviceStatus FakeGpu::download(void* dst, DevicePtr src, std::size_t bytes) {
  if (DeviceStatus rc = sync_call(); rc != 0) return rc;
  const unsigned char* m = memory(src, bytes);
  if (m == nullptr) return k_invalid_value;
  std::memcpy(dst, m, bytes);
  log.push_back({"download", "", src, bytes});
  return 0;
}

DeviceStatus FakeGpu::fill8(DevicePtr dst, std::uint8_t value, std::size_t count) {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  unsigned char* m = memory(dst, count);
  if (m == nullptr) return k_invalid_value;
  if (gate == Gate::skip) return rc;
  std::memset(m, value, count);
  log.push_back({"fill", "", dst, count, value});
  return rc;
}

DeviceStatus FakeGpu::fill16(DevicePtr dst, std::uint16_t value, std::size_t count) {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  unsigned char* m = memory(dst, count * 2);
  if (m == nullptr) return k_invalid_value;
  if (gate == Gate::skip) return rc;
  for (std::size_t i = 0; i < count; ++i) std::memcpy(m + 2 * i, &value, 2);
  log.push_back({"fill", "", dst, count * 2, value});
  return rc;
}

DeviceStatus FakeGpu::fill32(DevicePtr dst, std::uint32_t value, std::size_t count) {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  unsigned char* m = memory(dst, count * 4);
  if (m == nullptr) return k_invalid_value;
  if (gate == Gate::skip) return rc;
  for (std::size_t i = 0; i < count; ++i) std::memcpy(m + 4 * i, &value, 4);
  log.push_back({"fill", "", dst, count * 4, value});
  return rc;
}

DeviceStatus FakeGpu::generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                                      std::size_t n) {
  Gate gate{};
  if (DeviceStatus rc = async_call(gate); gate == Gate::skip || rc != 0) return rc;
  unsigned char* m = memory(dst, n * dtype_size(dtype));
  if (m == nullptr) return k_invalid_value;
  detail::generate_inputs_on_host(dtype, generator, seed, m, n);
  if (generator_fault) generator_fault(m, n * dtype_size(dtype));
  log.push_back({"generate", "", dst, n * dtype_size(dtype), seed});
  record_kernel(generator_ms, 0);
  return 0;
}

// As the harness's kernel does on a GPU: the record is read, added to and written back in device
// memory, so whatever a candidate left there counts too.
DeviceStatus FakeGpu::compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n, Tolerance tol,
                                        bool exact, DevicePtr record) {
  Gate gate{};
  if (DeviceStatus rc = async_call(gate); gate == Gate::skip || rc != 0) return rc;
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
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  if (gate == Gate::skip) return rc;
  log.push_back({"flush"});
  if (rules_.flush_ms > 0.0) record_kernel(rules_.flush_ms, 0);  // the flush is a kernel of its own
  l2_warm_ = false;
  return rc;
}

void FakeGpu::record_kernel(double ms, std::uint64_t external_id, bool delivered, bool complete) {
  // A launch starts after the launch gap (at least a tick: after whatever the host read before it).
  const auto gap = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(rules_.launch_gap_us * 1e3)));
  const std::uint64_t start = now_ns_ + gap;
  now_ns_ = start + static_cast<std::uint64_t>(kernel_ms(ms) * 1e6);
  device_pending_ns_ += now_ns_ - (start - gap);
  if (!activity_on || !delivered) return;
  ++record_count_;
  if (drop_every > 0 && record_count_ % drop_every == 0) {
    ++dropped_;
    return;
  }
  // CUPTI writes the external correlation record only in front of the launch's driver API record.
  const bool ids_attach = external_ids && driver_api_records;
  RawRecord r{start, now_ns_, now_ns_, ids_attach ? external_id : 0};
  if (!complete) r.start = r.end = r.completed = 0;  // CUPTI_TIMESTAMP_UNKNOWN
  write_record(r);
}

DeviceStatus FakeGpu::launch(detail::FunctionHandle function, const detail::LaunchShape& shape, void** args,
                             std::size_t arg_count) {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  if (rc != 0) return rc;
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
  if (gate == Gate::skip) {  // accepted after a fault that has not surfaced yet: it never runs
    ++kernels_skipped;
    return 0;
  }
  FakeCall call{*this, slots, shape, f->module->globals, now_ns_};
  f->kernel(call);
  record_kernel(call.duration_ms, external_stack_.empty() ? 0 : external_stack_.back(), f->name != undelivered,
                f->name != incomplete);
  fault(call.status);  // reported later, by some call after this one, as on a GPU
  return 0;
}

DeviceStatus FakeGpu::synchronize() {
  log.push_back({"sync"});
  return sync_call();
}

DeviceStatus FakeGpu::record_start() {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  log.push_back({"record_start"});
  start_ns_ = now_ns_;
  return rc;
}

DeviceStatus FakeGpu::record_stop() {
  Gate gate{};
  const DeviceStatus rc = async_call(gate);
  log.push_back({"record_stop"});
  stop_ns_ = now_ns_;
  return rc;
}

// cuEventElapsedTime: the events' difference, in steps of the resolution, with jitter; as the
// driver, it needs both events complete, so the host waits for them.
DeviceStatus FakeGpu::elapsed_ms(double& ms) {
  const DeviceStatus rc = sync_call();
  ms = event_ms(stop_ns_ - start_ns_);
  return rc;
}

// As the real driver: a forced flush, and whatever it handed over forgotten.
void FakeGpu::activity_reset() {
  flush_activity(true);
  delivered_.clear();
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

// As the real driver (cuda_driver.cpp): unforced flushes, a 2 ms wait between them, until the
// expected records are in; then a forced flush if they are not. Records that arrive incomplete are
// left out by the same rule (detail::kernel_record_usable).
detail::ActivityHarvest FakeGpu::harvest_activity(std::size_t expected) {
  detail::ActivityHarvest h;
  for (int i = 0; i < 20; ++i) {
    flush_activity(false);
    if (activity_matched(expected)) break;
    host_charged_ns_ += rules_.records_per_buffer == 0 ? 0 : 2'000'000;
  }
  if (!activity_matched(expected)) flush_activity(true);
  for (const RawRecord& r : delivered_) {
    if (detail::kernel_record_usable(r.start, r.end)) h.kernels.push_back({r.start, r.end, r.external_id});
  }
  delivered_.clear();
  h.dropped = dropped_;
  dropped_ = 0;
  return h;
}

}  // namespace leap::sandbox::test
