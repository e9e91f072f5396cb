// SPDX-License-Identifier: Apache-2.0
#include "verify/report.hpp"

#include <cstdio>

namespace leap::sandbox::verify {

bool TaskReport::ok() const noexcept {
  if (checks.empty()) return false;
  for (const CheckResult& c : checks)
    if (!c.ok) return false;
  return true;
}

void TaskReport::add(std::string name, bool ok_, std::string detail) {
  checks.push_back({std::move(name), ok_, std::move(detail)});
}

std::string to_text(const TaskReport& r, bool brief) {
  char head[160];
  std::snprintf(head, sizeof head, "%s %s (%zu checks, %.1f s, %.1f CPU s)\n", r.ok() ? "PASS" : "FAIL",
                r.task.c_str(), r.checks.size(), r.seconds, r.cpu_seconds);
  std::string s = head;
  for (const CheckResult& c : r.checks) {
    if (brief && c.ok) continue;
    s += (c.ok ? "  ok   " : "  FAIL ") + c.name + (c.detail.empty() ? "" : ": " + c.detail) + "\n";
  }
  return s;
}

nlohmann::json to_json(const TaskReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : r.checks) checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  return {{"task", r.task},       {"origin", r.origin},           {"ok", r.ok()},
          {"seconds", r.seconds}, {"cpu_seconds", r.cpu_seconds}, {"checks", checks}};
}

TaskReport report_from_json(const nlohmann::json& j) {
  TaskReport r;
  r.task = j.at("task").get<std::string>();
  r.origin = j.at("origin").get<std::string>();
  r.seconds = j.at("seconds").get<double>();
  r.cpu_seconds = j.at("cpu_seconds").get<double>();
  for (const auto& c : j.at("checks"))
    r.add(c.at("name").get<std::string>(), c.at("ok").get<bool>(), c.at("detail").get<std::string>());
  return r;
}

}  // namespace leap::sandbox::verify
