// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the task-spec reader (JSON limits, every field, validation with its size
// expressions, reference_file through a resolver). Only TaskError may come out; a spec that parses
// must survive its own round trip through task_to_json.
#include <leap/sandbox/task.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sb = leap::sandbox;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const sb::FileResolver resolve = [](std::string_view name) -> std::optional<std::string> {
    if (name == "ref.cu") return std::string("extern \"C\" __global__ void k(float* y) { y[0] = 1; }");
    if (name == "refused.cu") throw sb::TaskError("\"refused.cu\" leads out of the spec's directory");
    return std::nullopt;
  };
  sb::TaskSpec task;
  try {
    task = sb::parse_task(text, resolve);
  } catch (const sb::TaskError&) {
    return 0;
  }
  try {
    (void)sb::parse_task(sb::task_to_json(task));
  } catch (const sb::TaskError&) {
    std::abort();  // a spec that was accepted must read back
  }
  return 0;
}
