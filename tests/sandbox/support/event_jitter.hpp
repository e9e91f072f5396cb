// SPDX-License-Identifier: Apache-2.0
// A GpuDriver that passes every operation to a FakeGpu and adds host launch jitter to the CUDA
// events alone, as on a device, where an event pair around a short kernel also spans the launch gap
// while CUPTI's records hold the kernel's own time. It records the runs each harvest was asked for.
// The fake itself is unchanged: this wraps it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "fake_gpu_driver.hpp"

namespace leap::sandbox::test {

class EventJitter final : public detail::GpuDriver {
 public:
  EventJitter(FakeGpu& gpu, double max_jitter_ms, std::uint64_t seed = 1) : g_(gpu), max_(max_jitter_ms), rng_(seed) {}

  std::vector<std::vector<detail::RunWindow>> harvests;  // the runs of every harvest_runs call, in order
  int plain_harvests = 0;                                // harvest_activity calls

  std::string error_name(DeviceStatus s) const override { return g_.error_name(s); }
  std::string error_text(DeviceStatus s) const override { return g_.error_text(s); }
  std::string device_name() const override { return g_.device_name(); }
  bool reads_pageable_host_memory() const override { return g_.reads_pageable_host_memory(); }
  double peak_memory_bandwidth() const override { return g_.peak_memory_bandwidth(); }
  unsigned max_shared_bytes_optin() const override { return g_.max_shared_bytes_optin(); }
  DeviceStatus load_module(std::string_view image, detail::ModuleHandle& m) override {
    return g_.load_module(image, m);
  }
  DeviceStatus unload_module(detail::ModuleHandle m) override { return g_.unload_module(m); }
  DeviceStatus get_function(detail::ModuleHandle m, const std::string& name, detail::FunctionHandle& f) override {
    return g_.get_function(m, name, f);
  }
  DeviceStatus param_info(detail::FunctionHandle f, std::size_t i, std::size_t& offset, std::size_t& size) override {
    return g_.param_info(f, i, offset, size);
  }
  DeviceStatus allow_dynamic_shared(detail::FunctionHandle f, unsigned bytes) override {
    return g_.allow_dynamic_shared(f, bytes);
  }
  DeviceStatus local_bytes_per_thread(detail::FunctionHandle f, std::size_t& bytes) override {
    return g_.local_bytes_per_thread(f, bytes);
  }
  DeviceStatus static_shared_bytes(detail::FunctionHandle f, unsigned& bytes) override {
    return g_.static_shared_bytes(f, bytes);
  }
  DeviceStatus allocate(std::size_t bytes, DevicePtr& p) override { return g_.allocate(bytes, p); }
  DeviceStatus release(DevicePtr p) override { return g_.release(p); }
  DeviceStatus upload(DevicePtr d, const void* s, std::size_t n) override { return g_.upload(d, s, n); }
  DeviceStatus download(void* d, DevicePtr s, std::size_t n) override { return g_.download(d, s, n); }
  DeviceStatus fill8(DevicePtr d, std::uint8_t v, std::size_t n) override { return g_.fill8(d, v, n); }
  DeviceStatus fill16(DevicePtr d, std::uint16_t v, std::size_t n) override { return g_.fill16(d, v, n); }
  DeviceStatus fill32(DevicePtr d, std::uint32_t v, std::size_t n) override { return g_.fill32(d, v, n); }
  DeviceStatus generate_inputs(DevicePtr d, DType t, const Generator& gen, std::uint64_t seed, std::size_t n) override {
    return g_.generate_inputs(d, t, gen, seed, n);
  }
  DeviceStatus compare_on_device(DevicePtr a, DevicePtr e, DType t, std::size_t n, Tolerance tol, bool exact,
                                 DevicePtr record) override {
    return g_.compare_on_device(a, e, t, n, tol, exact, record);
  }
  DeviceStatus flush_caches() override { return g_.flush_caches(); }
  DeviceStatus launch(detail::FunctionHandle f, const detail::LaunchShape& s, void** args, std::size_t n) override {
    return g_.launch(f, s, args, n);
  }
  DeviceStatus synchronize() override { return g_.synchronize(); }
  DeviceStatus record_start() override { return g_.record_start(); }
  DeviceStatus record_stop() override { return g_.record_stop(); }
  DeviceStatus elapsed_ms(double& ms) override {
    const DeviceStatus rc = g_.elapsed_ms(ms);
    ms += std::uniform_real_distribution<double>(0.0, max_)(rng_);
    return rc;
  }
  bool activity_enabled() const override { return g_.activity_enabled(); }
  std::string activity_note() const override { return g_.activity_note(); }
  void activity_reset() override { g_.activity_reset(); }
  DeviceStatus push_external_id(std::uint64_t id) override { return g_.push_external_id(id); }
  DeviceStatus pop_external_id() override { return g_.pop_external_id(); }
  std::uint64_t activity_timestamp_ns() override { return g_.activity_timestamp_ns(); }
  detail::ActivityHarvest harvest_activity(std::size_t expected) override {
    ++plain_harvests;
    return g_.harvest_activity(expected);
  }
  detail::ActivityHarvest harvest_runs(const std::vector<detail::RunWindow>& runs) override {
    harvests.push_back(runs);
    return g_.harvest_runs(runs);
  }

 private:
  FakeGpu& g_;
  double max_;
  std::mt19937_64 rng_;
};

}  // namespace leap::sandbox::test
