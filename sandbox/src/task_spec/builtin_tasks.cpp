// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/builtin_tasks.hpp"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

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

// The variants a task.json lists: {"NAME": {"file": "fast.cu", "expect": "correct"}}.
void read_variants(const std::string& task_dir, const std::string& text, BuiltinTask& t) {
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
BuiltinTask load_one(const std::string& task_dir, const std::string& text) {
  auto resolve = [&](std::string_view name) { return embedded(task_dir, name); };
  BuiltinTask t;
  t.spec = parse_task(text, resolve);
  if (t.spec.name != task_dir)
    throw TaskError("task '" + t.spec.name + "': name: differs from its directory " + task_dir);
  require_library_fields(t.spec);
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
    const std::string task_dir = f->task;
    try {
      lib.tasks.push_back(load_one(task_dir, std::string(reinterpret_cast<const char*>(f->data), f->size)));
    } catch (const std::exception& e) {  // TaskError, or nlohmann's for a malformed variants object
      lib.errors.push_back({task_dir, e.what()});
    }
  }
  std::sort(lib.tasks.begin(), lib.tasks.end(),
            [](const BuiltinTask& a, const BuiltinTask& b) { return a.spec.name < b.spec.name; });
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
