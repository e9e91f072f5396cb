// SPDX-License-Identifier: Apache-2.0
#include "verify/verify_target.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace leap::sandbox::verify {

namespace fs = std::filesystem;

VerifyTarget target_of(const BuiltinTask& task) { return {task.spec, task.variants, task.oracle_source, "built-in"}; }

bool names_spec_file(const std::string& name) noexcept {
  return name.find('/') != std::string::npos || name.ends_with(".json");
}

VerifyTarget find_target(const std::string& name, bool builtin_rules) {
  if (names_spec_file(name)) return load_target_file(name, builtin_rules);
  if (const BuiltinTask* t = find_builtin_task(name)) return target_of(*t);
  for (const BuiltinTaskError& e : builtin_task_errors())
    if (e.task == name) throw TaskError(e.message);
  throw TaskError("no built-in task '" + name + "'");
}

namespace {

// The variants a spec lists, read beside it: {"NAME": {"file": "fast.cu", "expect": "correct"}}.
std::vector<TaskVariant> read_variants(const nlohmann::json& doc, const FileResolver& resolve,
                                       const std::string& task) {
  std::vector<TaskVariant> out;
  if (!doc.contains("variants")) return out;
  const std::string where = "task '" + task + "': variants";
  if (!doc.at("variants").is_object()) throw TaskError(where + ": expected an object");
  for (const auto& [name, v] : doc.at("variants").items()) {
    if (!v.is_object() || !v.contains("file") || !v.at("file").is_string() || !v.contains("expect") ||
        !v.at("expect").is_string())
      throw TaskError(where + "." + name + ": expected {\"file\": \"NAME.cu\", \"expect\": \"VERDICT\"}");
    const std::string file = v.at("file").get<std::string>();
    std::optional<std::string> src = resolve(file);
    if (!src) throw TaskError(where + "." + name + ".file: cannot read \"" + file + "\"");
    out.push_back({name, v.at("expect").get<std::string>(), std::move(*src)});
  }
  return out;
}

}  // namespace

VerifyTarget load_target_file(const std::string& path, bool builtin_rules) {
  VerifyTarget t;
  t.origin = path;
  t.spec = load_task_file(path);
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  const FileResolver resolve = confined_resolver(dir);
  if (builtin_rules) {
    require_library_fields(t.spec);
    if (dir.filename() != t.spec.name)
      throw TaskError("task '" + t.spec.name + "': name: differs from its directory " + dir.filename().string());
    if (dir.parent_path().filename() != t.spec.library.category)
      throw TaskError("task '" + t.spec.name + "': category: \"" + t.spec.library.category +
                      "\", but the task is under " + dir.parent_path().filename().string() +
                      "/ (a built-in task lives in sandbox/tasks/<category>/)");
  }
  t.variants.push_back({"reference", "correct", t.spec.reference_source});
  std::optional<std::string> text = resolve(fs::path(path).filename().string());
  const nlohmann::json doc = nlohmann::json::parse(text.value_or("{}"));
  for (TaskVariant& v : read_variants(doc, resolve, t.spec.name)) t.variants.push_back(std::move(v));
  if (!t.spec.library.oracle_file.empty()) {
    std::optional<std::string> oracle;
    try {
      oracle = resolve(t.spec.library.oracle_file);
    } catch (const TaskError& e) {
      throw TaskError("task '" + t.spec.name + "': oracle_file: " + e.what());
    }
    if (!oracle)
      throw TaskError("task '" + t.spec.name + "': oracle_file: cannot read \"" + t.spec.library.oracle_file + "\"");
    t.oracle_source = std::move(*oracle);
  }
  return t;
}

}  // namespace leap::sandbox::verify
