// SPDX-License-Identifier: Apache-2.0
#include "task_spec/task_spec_rules.hpp"

#include "common/shortened.hpp"

namespace leap::sandbox::detail::task_spec {

using nlohmann::json;

[[noreturn]] void fail(const std::string& task, const std::string& field, const std::string& problem) {
  throw TaskError("task '" + (task.empty() ? std::string("?") : task) + "': " + field + ": " + problem);
}

std::string shown(const json& v) { return shortened(v.dump(-1, ' ', false, json::error_handler_t::replace), 60, 57); }

bool is_task_name(std::string_view s) {
  if (s.empty() || s.size() > k_max_task_name_length) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace leap::sandbox::detail::task_spec
