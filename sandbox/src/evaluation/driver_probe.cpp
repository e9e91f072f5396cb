// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/driver_probe.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evaluation/driver_probe.hpp"
#include "evaluation/gpu_runner.hpp"
#include "runner_pipe/runner_control.hpp"

namespace leap::sandbox {
namespace {

// The driver API entry points the probe needs, declared here so no CUDA header (and no libcuda) is
// needed to build. Signatures as in cuda.h; CUdevice is an int.
using cuInit_t = int (*)(unsigned);
using cuDriverGetVersion_t = int (*)(int*);
using cuDeviceGetCount_t = int (*)(int*);
using cuDeviceGet_t = int (*)(int*, int);
using cuDeviceGetName_t = int (*)(char*, int, int);
using cuDeviceGetAttribute_t = int (*)(int*, int, int);
using cuDeviceTotalMem_t = int (*)(std::size_t*, int);
constexpr int k_stub_library = 34;   // CUDA_ERROR_STUB_LIBRARY
constexpr int k_no_device = 100;     // CUDA_ERROR_NO_DEVICE
constexpr int k_attr_cc_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int k_attr_cc_minor = 76;
constexpr int k_attr_pageable = 88;  // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

namespace detail {

std::string probe_driver_here(const std::string& library) {
  std::ostringstream out;
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = ::dlerror();
    out << "state no_driver\nreason cannot load " << library << ": " << (err ? err : "unknown error") << "\n";
    return out.str();
  }
  const auto init = symbol<cuInit_t>(lib, "cuInit");
  if (init == nullptr) {
    out << "state error\nreason " << library << " has no cuInit\n";
    return out.str();
  }
  if (const auto ver = symbol<cuDriverGetVersion_t>(lib, "cuDriverGetVersion")) {
    int v = 0;
    if (ver(&v) == 0) out << "driver " << v << "\n";
  }
  const int rc = init(0);
  if (rc == k_stub_library) {
    out << "state stub_driver\nreason " << library << " is the CUDA toolkit's stub driver (cuInit returned 34)\n";
    return out.str();
  }
  if (rc == k_no_device) {
    out << "state no_device\nreason the CUDA driver found no device (cuInit returned 100)\n";
    return out.str();
  }
  if (rc != 0) {
    out << "state error\nreason cuInit returned " << rc << "\n";
    return out.str();
  }
  const auto count_fn = symbol<cuDeviceGetCount_t>(lib, "cuDeviceGetCount");
  const auto get = symbol<cuDeviceGet_t>(lib, "cuDeviceGet");
  const auto name_fn = symbol<cuDeviceGetName_t>(lib, "cuDeviceGetName");
  const auto attr = symbol<cuDeviceGetAttribute_t>(lib, "cuDeviceGetAttribute");
  const auto mem = symbol<cuDeviceTotalMem_t>(lib, "cuDeviceTotalMem_v2");
  int count = 0;
  if (count_fn == nullptr || count_fn(&count) != 0 || count <= 0) {
    out << "state no_device\nreason the CUDA driver reports no device\n";
    return out.str();
  }
  out << "state available\n";
  for (int i = 0; i < count; ++i) {
    int dev = 0, major = 0, minor = 0, pageable = 0;
    std::size_t bytes = 0;
    char name[256] = {};
    if (get != nullptr && get(&dev, i) == 0) {
      if (name_fn != nullptr) name_fn(name, static_cast<int>(sizeof name) - 1, dev);
      if (attr != nullptr) {
        attr(&major, k_attr_cc_major, dev);
        attr(&minor, k_attr_cc_minor, dev);
        attr(&pageable, k_attr_pageable, dev);
      }
      if (mem != nullptr) mem(&bytes, dev);
    }
    out << "device " << i << " " << major << " " << minor << " " << bytes << " " << name << "\n";
    out << "pageable " << i << " " << (pageable != 0 ? 1 : 0) << "\n";
  }
  return out.str();
}

GpuStatus parse_driver_probe(const std::string& text) {
  GpuStatus s;
  s.state = GpuState::error;
  s.reason = "the probe reported nothing";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "state") {
      std::string v;
      ls >> v;
      s.reason.clear();
      if (v == "available") s.state = GpuState::available;
      else if (v == "no_driver") s.state = GpuState::no_driver;
      else if (v == "stub_driver") s.state = GpuState::stub_driver;
      else if (v == "no_device") s.state = GpuState::no_device;
      else s.state = GpuState::error;
    } else if (key == "reason") {
      std::getline(ls >> std::ws, s.reason);
    } else if (key == "driver") {
      ls >> s.driver_version;
    } else if (key == "device") {
      DeviceInfo d;
      ls >> d.ordinal >> d.cc_major >> d.cc_minor >> d.total_memory;
      std::getline(ls >> std::ws, d.name);
      s.devices.push_back(std::move(d));
    } else if (key == "pageable") {
      int ordinal = -1, on = 0;
      ls >> ordinal >> on;
      for (DeviceInfo& d : s.devices) {
        if (d.ordinal == ordinal) d.pageable_memory_access = on != 0;
      }
    }
  }
  return s;
}

}  // namespace detail

std::string_view to_string(GpuState state) noexcept {
  switch (state) {
    case GpuState::available: return "available";
    case GpuState::no_driver: return "no driver";
    case GpuState::stub_driver: return "stub driver";
    case GpuState::no_device: return "no device";
    case GpuState::error: return "error";
  }
  return "unknown";
}

GpuStatus probe_gpu(const ProbeOptions& options) {
  // Preferred: the runner program, spawned fresh, so no fork of this (perhaps multithreaded) process
  // ever loads the driver.
  if (const std::string exe = find_gpu_runner_executable(); !exe.empty()) {
    GpuRunnerConfig config;
    config.driver_library = options.library;
    config.executable = exe;
    config.init_timeout = options.timeout;
    GpuRunner runner(config);
    const std::vector<std::uint8_t> request = nlohmann::json::to_cbor(detail::runner_request(detail::RunnerOp::probe));
    const CallResult r =
        runner.call(std::string_view(reinterpret_cast<const char*>(request.data()), request.size()), options.timeout);
    if (r.status == CallStatus::timeout)
      return GpuStatus{GpuState::error, 0, {}, "the driver probe did not finish within the timeout"};
    if (r.status != CallStatus::ok) return GpuStatus{GpuState::error, 0, {}, "the driver probe failed: " + r.detail};
    try {
      return detail::parse_driver_probe(detail::probe_report_of(nlohmann::json::from_cbor(r.reply)));
    } catch (const std::exception& e) {
      return GpuStatus{GpuState::error, 0, {}, std::string("the driver probe answered garbage: ") + e.what()};
    }
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return GpuStatus{GpuState::error, 0, {}, "pipe failed: " + std::string(std::strerror(errno))};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return GpuStatus{GpuState::error, 0, {}, "fork failed: " + std::string(std::strerror(errno))};
  }
  if (pid == 0) {
    ::close(fds[0]);
    const std::string report = detail::probe_driver_here(options.library);
    std::size_t done = 0;
    while (done < report.size()) {
      const ssize_t n = ::write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  ::close(fds[1]);
  std::string text;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  if (timed_out) return GpuStatus{GpuState::error, 0, {}, "the driver probe did not finish within the timeout"};
  if (WIFSIGNALED(wstatus)) {
    return GpuStatus{
        GpuState::error, 0, {}, "the driver probe crashed (signal " + std::to_string(WTERMSIG(wstatus)) + ")"};
  }
  return detail::parse_driver_probe(text);
}

}  // namespace leap::sandbox
