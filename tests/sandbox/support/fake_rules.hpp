// SPDX-License-Identifier: Apache-2.0
// The rules by which the CPU fake of the driver (fake_gpu_driver.hpp) behaves like the CUDA driver
// and CUPTI, as cuda.h and cupti_activity.h describe them. FakeRules{} is the device as it is: faults
// reported late, a poisoned context that refuses work, events with a launch gap, a resolution and
// jitter, activity buffers handed over late and in pieces, durations that vary and depend on the L2,
// host time spent in the driver. FakeRules::idealised() is the fake before these rules: every
// kernel synchronous, every figure exact; for tests about something else that need exact figures.
// Every random draw comes from `seed`, so a test sees the same device every time.
// docs/sandbox.md ("The CPU fake of the driver") lists the rules and the harness faults each exposes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace leap::sandbox::test {

struct FakeRules {
  std::uint64_t seed = 1;

  // (a) A kernel's fault is reported asynchronously: launch() returns success, and up to this many
  // later asynchronous calls (launches, memsets, event records; drawn per fault) return success
  // too before the sticky error surfaces. A synchronising call (synchronize, a copy, a free, an
  // event's elapsed time) reports it at once. Launches accepted after the fault never run.
  int fault_latency_calls = 3;
  // (b) Once the sticky error is reported, every memset, copy, free and launch returns it and does
  // nothing (CUDA_ERROR_ILLEGAL_ADDRESS: "the process ... must be terminated and relaunched").
  bool poisoned_context_refuses = true;

  // (c) Events: the device idles this long before each kernel (the launch gap: the host enqueues
  // slower than a short kernel runs), and the events around a launch include it; elapsed times
  // come in steps of the resolution (cuEventElapsedTime: "around 0.5 microseconds") with jitter
  // (a normal draw of this standard deviation).
  double launch_gap_us = 4.0;
  double event_resolution_us = 0.5;
  double event_jitter_us = 1.0;

  // (d) CUPTI activity buffers hold this many kernel records (0: every record delivered at once,
  // complete). A full buffer is handed over by one of the next 1 + buffer_delay_flushes unforced
  // flushes after it filled (drawn per buffer, so pieces arrive out of order). An unforced flush hands over only
  // buffers whose records are all complete, and the newest record is still being written (newest_record_incomplete), so
  // the buffer being written waits for a forced flush, which hands it over with that record incomplete (start, end and
  // completed all CUPTI_TIMESTAMP_UNKNOWN).
  std::size_t records_per_buffer = 8;
  int buffer_delay_flushes = 3;
  bool newest_record_incomplete = true;

  // (e) Durations vary (a kernel's time times 1 + spread * a normal draw, at least half of it), and
  // a kernel that runs after a flush of the caches takes cold_l2_penalty longer than one that
  // finds the L2 warm (any kernel warms it; flush_caches() clears it). The flush itself is a kernel
  // of flush_ms, with its own activity record, as the real driver's L2 reader is.
  double duration_spread = 0.03;
  double cold_l2_penalty = 0.25;
  double flush_ms = 0.02;

  // (f) Host time: every driver call costs the host this long, and a synchronising call waits for
  // the device's queued work. host_now() is the real clock plus both, so the harness's deadline
  // feels the device's time.
  double host_call_us = 5.0;
  bool host_waits_for_device = true;

  static constexpr FakeRules idealised() {
    FakeRules r;
    r.fault_latency_calls = 0;
    r.poisoned_context_refuses = false;
    r.launch_gap_us = 0.001;  // the device clock still ticks between kernels
    r.event_resolution_us = 0.0;
    r.event_jitter_us = 0.0;
    r.records_per_buffer = 0;
    r.buffer_delay_flushes = 0;
    r.newest_record_incomplete = false;
    r.duration_spread = 0.0;
    r.cold_l2_penalty = 0.0;
    r.flush_ms = 0.0;
    r.host_call_us = 0.0;
    r.host_waits_for_device = false;
    return r;
  }
};

}  // namespace leap::sandbox::test
