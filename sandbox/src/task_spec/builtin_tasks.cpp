// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/builtin_tasks.hpp"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace leap::sandbox {
namespace detail {
struct EmbeddedFile {  // sandbox/tasks/<category>/<task>/<name>
  const char* category;
  const char* task;
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const EmbeddedFile k_embedded_task_files[];
}  // namespace detail

namespace {

// A task's directory under sandbox/tasks: <category>/<task>.
struct TaskDir {
  std::string category;
  std::string task;
};

std::optional<std::string> embedded(const TaskDir& dir, std::string_view name) {
  for (const detail::EmbeddedFile* f = detail::k_embedded_task_files; f->task != nullptr; ++f) {
    if (dir.task == f->task && dir.category == f->category && name == f->name)
      return std::string(reinterpret_cast<const char*>(f->data), f->size);
  }
  return std::nullopt;
}

// The variants a task.json lists: {"NAME": {"file": "fast.cu", "expect": "correct"}}.
void read_variants(const TaskDir& task_dir, const std::string& text, BuiltinTask& t) {
  const nlohmann::json doc = nlohmann::json::parse(text);
  if (!doc.contains("variants")) return;
  const std::string where = "task '" + t.spec.name + "': variants";
  if (!doc.at("variants").is_object()) throw TaskError(where + ": expected an object");
  static const std::set<std::string> verdicts{"correct", "wrong_answer", "compile_error", "runtime_error", "timeout"};
  for (const auto& [name, v] : doc.at("variants").items()) {
    const std::string f = where + "." + name;
    if (!v.is_object() || !v.contains("file") || !v.at("file").is_string() || !v.contains("expect") ||
        !v.at("expect").is_string())
      throw TaskError(f + ": expected {\"file\": \"NAME.cu\", \"expect\": \"VERDICT\"}");
    const std::string file = v.at("file").get<std::string>();
    const std::string expect = v.at("expect").get<std::string>();
    if (!verdicts.contains(expect))
      throw TaskError(f + ".expect: unknown verdict \"" + expect +
                      "\" (correct, wrong_answer, compile_error, runtime_error, timeout)");
    std::optional<std::string> src = embedded(task_dir, file);
    if (!src) throw TaskError(f + ".file: cannot read \"" + file + "\"");
    t.variants.push_back({name, expect, std::move(*src)});
  }
}

// One task directory: its spec with every library field, its variants and its oracle.
BuiltinTask load_one(const TaskDir& task_dir, const std::string& text) {
  auto resolve = [&](std::string_view name) { return embedded(task_dir, name); };
  BuiltinTask t;
  t.spec = parse_task(text, resolve);
  if (t.spec.name != task_dir.task)
    throw TaskError("task '" + t.spec.name + "': name: differs from its directory " + task_dir.task);
  require_library_fields(t.spec);
  if (t.spec.library.category != task_dir.category)
    throw TaskError("task '" + t.spec.name + "': category: \"" + t.spec.library.category +
                    "\", but the task is under sandbox/tasks/" + task_dir.category + "/ (move it to sandbox/tasks/" +
                    t.spec.library.category + "/)");
  t.variants.push_back({"reference", "correct", t.spec.reference_source});
  read_variants(task_dir, text, t);
  std::optional<std::string> oracle = embedded(task_dir, t.spec.library.oracle_file);
  if (!oracle)
    throw TaskError("task '" + t.spec.name + "': oracle_file: cannot read \"" + t.spec.library.oracle_file + "\"");
  t.oracle_source = std::move(*oracle);
  return t;
}

struct Library {
  std::vector<BuiltinTask> tasks;
  std::vector<BuiltinTaskError> errors;
};

Library load_all() {
  Library lib;
  for (const detail::EmbeddedFile* f = detail::k_embedded_task_files; f->task != nullptr; ++f) {
    if (std::string_view(f->name) != "task.json") continue;
    const TaskDir task_dir{f->category, f->task};
    try {
      lib.tasks.push_back(load_one(task_dir, std::string(reinterpret_cast<const char*>(f->data), f->size)));
    } catch (const std::exception& e) {  // TaskError, or nlohmann's for a malformed variants object
      lib.errors.push_back({task_dir.task, e.what()});
    }
  }
  std::stable_sort(lib.tasks.begin(), lib.tasks.end(),
                   [](const BuiltinTask& a, const BuiltinTask& b) { return a.spec.name < b.spec.name; });
  // A name is a task's key everywhere (rows, reward functions, the CLI): the second of a name is left out.
  for (std::size_t i = 1; i < lib.tasks.size();) {
    if (lib.tasks[i].spec.name != lib.tasks[i - 1].spec.name) {
      ++i;
      continue;
    }
    lib.errors.push_back({lib.tasks[i].spec.name, "task '" + lib.tasks[i].spec.name +
                                                      "': name: also the name of a task "
                                                      "in sandbox/tasks/" +
                                                      lib.tasks[i - 1].spec.library.category + "/"});
    lib.tasks.erase(lib.tasks.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return lib;
}

const Library& library() {
  static const Library lib = load_all();
  return lib;
}

}  // namespace

const TaskVariant* BuiltinTask::variant(std::string_view name) const noexcept {
  for (const TaskVariant& v : variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

const std::vector<BuiltinTask>& builtin_tasks() { return library().tasks; }

const std::vector<BuiltinTaskError>& builtin_task_errors() { return library().errors; }

const BuiltinTask* find_builtin_task(std::string_view name) noexcept {
  try {
    for (const BuiltinTask& t : builtin_tasks()) {
      if (t.spec.name == name) return &t;
    }
  } catch (...) {}
  return nullptr;
}

}  // namespace leap::sandbox
