// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/builtin_tasks.hpp"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

namespace leap::sandbox {
namespace detail {
struct EmbeddedFile {
  const char* task;
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const EmbeddedFile k_embedded_task_files[];
}  // namespace detail

namespace {

std::optional<std::string> embedded(std::string_view task, std::string_view name) {
  for (const detail::EmbeddedFile* f = detail::k_embedded_task_files; f->task != nullptr; ++f) {
    if (task == f->task && name == f->name) return std::string(reinterpret_cast<const char*>(f->data), f->size);
  }
  return std::nullopt;
}

std::vector<BuiltinTask> load_all() {
  std::vector<BuiltinTask> tasks;
  for (const detail::EmbeddedFile* f = detail::k_embedded_task_files; f->task != nullptr; ++f) {
    if (std::string_view(f->name) != "task.json") continue;
    const std::string task_dir = f->task;
    const std::string text(reinterpret_cast<const char*>(f->data), f->size);
    auto resolve = [&](std::string_view name) { return embedded(task_dir, name); };
    BuiltinTask t;
    t.spec = parse_task(text, resolve);
    if (t.spec.name != task_dir)
      throw TaskError("task '" + t.spec.name + "': name: differs from its directory " + task_dir);
    t.variants.push_back({"reference", "correct", t.spec.reference_source});
    const nlohmann::json doc = nlohmann::json::parse(text);
    if (doc.contains("variants")) {
      for (const auto& [name, v] : doc.at("variants").items()) {
        const std::string file = v.at("file").get<std::string>();
        std::optional<std::string> src = embedded(task_dir, file);
        if (!src)
          throw TaskError("task '" + t.spec.name + "': variants." + name + ".file: cannot read \"" + file + "\"");
        t.variants.push_back({name, v.at("expect").get<std::string>(), std::move(*src)});
      }
    }
    tasks.push_back(std::move(t));
  }
  std::sort(tasks.begin(), tasks.end(),
            [](const BuiltinTask& a, const BuiltinTask& b) { return a.spec.name < b.spec.name; });
  return tasks;
}

}  // namespace

const TaskVariant* BuiltinTask::variant(std::string_view name) const noexcept {
  for (const TaskVariant& v : variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

const std::vector<BuiltinTask>& builtin_tasks() {
  static const std::vector<BuiltinTask> tasks = load_all();
  return tasks;
}

const BuiltinTask* find_builtin_task(std::string_view name) noexcept {
  try {
    for (const BuiltinTask& t : builtin_tasks()) {
      if (t.spec.name == name) return &t;
    }
  } catch (...) {}
  return nullptr;
}

}  // namespace leap::sandbox
