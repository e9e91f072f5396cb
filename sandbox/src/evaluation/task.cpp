// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/task.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "common/json_keys.hpp"
#include "protocol/bounded_json.hpp"
#include "evaluation/size_expr.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;

constexpr DType k_dtypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::int32};
constexpr GeneratorKind k_generator_kinds[] = {GeneratorKind::uniform,  GeneratorKind::normal, GeneratorKind::randint,
                                               GeneratorKind::constant, GeneratorKind::zeros,  GeneratorKind::arange};

[[noreturn]] void fail(const std::string& task, const std::string& field, const std::string& problem) {
  throw TaskError("task '" + (task.empty() ? std::string("?") : task) + "': " + field + ": " + problem);
}

std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64 || (std::isdigit(static_cast<unsigned char>(s[0])) != 0)) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

bool is_task_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Reads one spec; every accessor names the field it reads.
struct Reader {
  std::string task;

  void only_keys(const json& obj, const std::string& field, std::initializer_list<std::string_view> keys) const {
    if (const std::optional<std::string> key = detail::first_unknown_key(obj, keys)) {
      fail(task, field.empty() ? *key : field + "." + *key, "unknown key");
    }
  }
  const json& object(const json& v, const std::string& field) const {
    if (!v.is_object()) fail(task, field, "expected an object, got " + shown(v));
    return v;
  }
  std::string string(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(task, field, "expected a string, got " + shown(v));
    return v.get<std::string>();
  }
  // A size expression: a string, or an integer written as a number.
  std::string expression(const json& v, const std::string& field) const {
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_string()) return v.get<std::string>();
    fail(task, field, "expected an integer or an expression string, got " + shown(v));
  }
  double number(const json& v, const std::string& field) const {
    if (!v.is_number()) fail(task, field, "expected a number, got " + shown(v));
    return v.get<double>();
  }
  int integer(const json& v, const std::string& field, int lo, int hi) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
      fail(task, field, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + shown(v));
    }
    return static_cast<int>(v.get<std::int64_t>());
  }
  Sizes sizes(const json& v, const std::string& field) const {
    object(v, field);
    Sizes out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string f = field + "." + it.key();
      if (!is_identifier(it.key())) fail(task, f, "not an identifier");
      if (!it->is_number_integer() || it->get<std::int64_t>() < 1) fail(task, f, "expected a positive integer, got " + shown(*it));
      out[it.key()] = it->get<std::int64_t>();
    }
    return out;
  }
  DType dtype(const json& v, const std::string& field) const {
    const std::string s = string(v, field);
    const std::optional<DType> d = dtype_from_string(s);
    if (!d) fail(task, field, "unknown dtype " + shown(v) + " (float32, float16, bfloat16 or int32)");
    return *d;
  }
  // A kind's defaults are the same whether the generator is written as a bare string ("normal") or as
  // an object ({"kind": "normal"}); the object's keys then override them.
  Generator generator_defaults(const std::string& kind, const std::string& field) const {
    const std::optional<GeneratorKind> known = generator_kind_from_string(kind);
    if (!known) fail(task, field, "unknown generator \"" + kind + "\" (uniform, normal, randint, constant, zeros, arange)");
    Generator g;
    g.kind = *known;
    if (g.kind == GeneratorKind::normal) {
      g.a = 0.0;  // mean
      g.b = 1.0;  // std
    } else if (g.kind == GeneratorKind::randint) {
      g.a = -100;
      g.b = 100;
    } else if (g.kind == GeneratorKind::constant) {
      g.a = 0.0;  // value
    }
    return g;
  }
  Generator generator(const json& v, const std::string& field) const {
    if (v.is_string()) return generator_defaults(v.get<std::string>(), field + ".kind");
    object(v, field);
    only_keys(v, field, {"kind", "low", "high", "mean", "std", "value", "special"});
    if (!v.contains("kind")) fail(task, field + ".kind", "missing");
    Generator g = generator_defaults(string(v.at("kind"), field + ".kind"), field + ".kind");
    if (v.contains("special")) {
      if (!v.at("special").is_boolean()) fail(task, field + ".special", "must be true or false");
      g.special = v.at("special").get<bool>();
    }
    auto get = [&](const char* key, double& out) {
      if (v.contains(key)) out = number(v.at(key), field + "." + key);
    };
    if (g.kind == GeneratorKind::uniform || g.kind == GeneratorKind::randint) {
      get("low", g.a);
      get("high", g.b);
    } else if (g.kind == GeneratorKind::normal) {
      get("mean", g.a);
      get("std", g.b);
    } else if (g.kind == GeneratorKind::constant) {
      get("value", g.a);
    }
    return g;
  }
};

}  // namespace

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::int32: return "int32";
  }
  return "unknown";
}

std::string_view to_string(Role role) noexcept {
  switch (role) {
    case Role::in: return "in";
    case Role::out: return "out";
    case Role::inout: return "inout";
  }
  return "unknown";
}

std::optional<DType> dtype_from_string(std::string_view name) noexcept {
  for (DType d : k_dtypes) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

std::string_view to_string(GeneratorKind kind) noexcept {
  switch (kind) {
    case GeneratorKind::uniform: return "uniform";
    case GeneratorKind::normal: return "normal";
    case GeneratorKind::randint: return "randint";
    case GeneratorKind::zeros: return "zeros";
    case GeneratorKind::constant: return "constant";
    case GeneratorKind::arange: return "arange";
  }
  return "unknown";
}

std::optional<GeneratorKind> generator_kind_from_string(std::string_view name) noexcept {
  for (GeneratorKind k : k_generator_kinds) {
    if (to_string(k) == name) return k;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) noexcept { return dtype == DType::float16 || dtype == DType::bfloat16 ? 2 : 4; }

TaskSpec parse_task(std::string_view json_text, const FileResolver& resolve) {
  json doc;
  try {
    doc = detail::parse_bounded_json(json_text, {k_max_task_spec_bytes, k_max_task_spec_depth});
  } catch (const detail::JsonLimitError& e) {
    throw TaskError(std::string("task spec: ") + e.what());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number such as 1e400
    throw TaskError(std::string("task spec is not valid JSON: ") + e.what());
  }
  Reader r;
  if (doc.is_object() && doc.contains("name") && doc.at("name").is_string()) r.task = doc.at("name").get<std::string>();
  r.object(doc, "spec");
  r.only_keys(doc, "", {"name", "description", "entry", "params", "sizes", "check_sizes", "launch", "candidate_launch",
                        "reference", "reference_file", "tolerance", "trials", "timing", "time_limit_ms", "variants"});
  TaskSpec t;
  auto need = [&](const char* key) -> const json& {
    if (!doc.contains(key)) fail(r.task, key, "missing");
    return doc.at(key);
  };
  t.name = r.string(need("name"), "name");
  if (doc.contains("description")) t.description = r.string(doc.at("description"), "description");
  t.entry = r.string(need("entry"), "entry");
  t.sizes = r.sizes(need("sizes"), "sizes");

  const json& params = need("params");
  if (!params.is_array()) fail(r.task, "params", "expected an array, got " + shown(params));
  if (params.size() > k_max_task_params) {
    fail(r.task, "params", std::to_string(params.size()) + " parameters, over the limit of " + std::to_string(k_max_task_params));
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string f = "params[" + std::to_string(i) + "]";
    const json& p = r.object(params[i], f);
    r.only_keys(p, f, {"name", "kind", "dtype", "role", "shape", "generator", "value"});
    Param q;
    if (!p.contains("name")) fail(r.task, f + ".name", "missing");
    q.name = r.string(p.at("name"), f + ".name");
    const std::string kind = p.contains("kind") ? r.string(p.at("kind"), f + ".kind") : "buffer";
    if (kind == "buffer") q.kind = ParamKind::buffer;
    else if (kind == "scalar") q.kind = ParamKind::scalar;
    else fail(r.task, f + ".kind", "unknown kind " + shown(p.at("kind")) + " (buffer or scalar)");
    if (!p.contains("dtype")) fail(r.task, f + ".dtype", "missing");
    q.dtype = r.dtype(p.at("dtype"), f + ".dtype");
    if (q.kind == ParamKind::buffer) {
      if (p.contains("value")) fail(r.task, f + ".value", "only scalars have a value");
      const std::string role = p.contains("role") ? r.string(p.at("role"), f + ".role") : "in";
      if (role == "in") q.role = Role::in;
      else if (role == "out") q.role = Role::out;
      else if (role == "inout") q.role = Role::inout;
      else fail(r.task, f + ".role", "unknown role " + shown(p.at("role")) + " (in, out or inout)");
      if (!p.contains("shape")) fail(r.task, f + ".shape", "missing");
      const json& shape = p.at("shape");
      if (!shape.is_array() || shape.empty()) fail(r.task, f + ".shape", "expected a non-empty array, got " + shown(shape));
      for (std::size_t k = 0; k < shape.size(); ++k) q.shape.push_back(r.expression(shape[k], f + ".shape[" + std::to_string(k) + "]"));
      if (p.contains("generator")) q.generator = r.generator(p.at("generator"), f + ".generator");
    } else {
      for (const char* k : {"role", "shape", "generator"}) {
        if (p.contains(k)) fail(r.task, f + "." + k, "only buffers have a " + std::string(k));
      }
      if (!p.contains("value")) fail(r.task, f + ".value", "missing");
      const json& v = p.at("value");
      if (v.is_number_float()) {
        std::ostringstream os;
        os.precision(17);
        os << v.get<double>();
        q.value = os.str();
      } else {
        q.value = r.expression(v, f + ".value");
      }
    }
    t.params.push_back(std::move(q));
  }

  if (doc.contains("check_sizes")) {
    const json& cs = doc.at("check_sizes");
    if (!cs.is_array()) fail(r.task, "check_sizes", "expected an array, got " + shown(cs));
    if (cs.size() > k_max_task_check_sizes) {
      fail(r.task, "check_sizes", std::to_string(cs.size()) + " size sets, over the limit of " + std::to_string(k_max_task_check_sizes));
    }
    for (std::size_t i = 0; i < cs.size(); ++i) {
      Sizes s = t.sizes;  // a check set overrides some sizes and keeps the rest
      for (const auto& [k, v] : r.sizes(cs[i], "check_sizes[" + std::to_string(i) + "]")) {
        if (!t.sizes.contains(k)) fail(r.task, "check_sizes[" + std::to_string(i) + "]." + k, "not a size named in sizes");
        s[k] = v;
      }
      t.check_sizes.push_back(std::move(s));
    }
  }

  const json& launch = r.object(need("launch"), "launch");
  r.only_keys(launch, "launch", {"grid", "block", "shared_bytes"});
  for (const char* key : {"grid", "block"}) {
    const std::string f = std::string("launch.") + key;
    if (!launch.contains(key)) fail(r.task, f, "missing");
    const json& dims = launch.at(key);
    std::string* out = key[0] == 'g' ? t.launch.grid : t.launch.block;
    if (dims.is_array()) {
      if (dims.empty() || dims.size() > 3) fail(r.task, f, "expected 1 to 3 dimensions, got " + shown(dims));
      for (std::size_t k = 0; k < dims.size(); ++k) out[k] = r.expression(dims[k], f + "[" + std::to_string(k) + "]");
    } else {
      out[0] = r.expression(dims, f);
    }
  }
  if (launch.contains("shared_bytes")) t.launch.shared_bytes = r.expression(launch.at("shared_bytes"), "launch.shared_bytes");

  if (doc.contains("candidate_launch")) {
    const json& cl = r.object(doc.at("candidate_launch"), "candidate_launch");
    r.only_keys(cl, "candidate_launch", {"allowed", "max_kernels", "max_threads_per_block", "max_shared_bytes", "max_scratch_bytes"});
    LaunchPolicy& pol = t.candidate_launch;
    if (cl.contains("allowed")) {
      if (!cl.at("allowed").is_boolean()) fail(r.task, "candidate_launch.allowed", "expected true or false, got " + shown(cl.at("allowed")));
      pol.allowed = cl.at("allowed").get<bool>();
    }
    auto bytes = [&](const char* key, std::uint64_t hi, std::uint64_t& out) {
      if (!cl.contains(key)) return;
      const json& v = cl.at(key);
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() > hi) {
        fail(r.task, std::string("candidate_launch.") + key, "expected an integer in [0, " + std::to_string(hi) + "], got " + shown(v));
      }
      out = v.get<std::uint64_t>();
    };
    if (cl.contains("max_kernels")) pol.max_kernels = r.integer(cl.at("max_kernels"), "candidate_launch.max_kernels", 1, k_max_plan_kernels);
    if (cl.contains("max_threads_per_block")) {
      pol.max_threads_per_block = static_cast<unsigned>(r.integer(cl.at("max_threads_per_block"), "candidate_launch.max_threads_per_block", 1, k_max_threads_per_block));
    }
    bytes("max_shared_bytes", k_max_plan_shared_bytes, pol.max_shared_bytes);
    bytes("max_scratch_bytes", k_max_plan_scratch_bytes, pol.max_scratch_bytes);
  }

  if (doc.contains("reference") == doc.contains("reference_file")) fail(r.task, "reference", "give exactly one of reference and reference_file");
  if (doc.contains("reference")) {
    t.reference_source = r.string(doc.at("reference"), "reference");
  } else {
    const std::string file = r.string(doc.at("reference_file"), "reference_file");
    std::optional<std::string> src;
    try {
      src = resolve ? resolve(file) : std::nullopt;
    } catch (const TaskError& e) {  // a resolver's reason, e.g. a path that leaves the spec's directory
      fail(r.task, "reference_file", e.what());
    }
    if (!src) fail(r.task, "reference_file", "cannot read \"" + file + "\"");
    t.reference_source = std::move(*src);
  }

  if (doc.contains("tolerance")) {
    const json& tol = r.object(doc.at("tolerance"), "tolerance");
    for (auto it = tol.begin(); it != tol.end(); ++it) {
      const std::string f = "tolerance." + it.key();
      const std::optional<DType> d = dtype_from_string(it.key());
      if (!d) fail(r.task, f, "unknown dtype \"" + it.key() + "\"");
      r.object(*it, f);
      r.only_keys(*it, f, {"atol", "rtol"});
      Tolerance& out = t.tolerance[static_cast<int>(*d)];
      if (it->contains("atol")) out.atol = r.number(it->at("atol"), f + ".atol");
      if (it->contains("rtol")) out.rtol = r.number(it->at("rtol"), f + ".rtol");
    }
  }
  if (doc.contains("trials")) t.trials = r.integer(doc.at("trials"), "trials", 1, 100);
  if (doc.contains("time_limit_ms")) t.time_limit_ms = r.integer(doc.at("time_limit_ms"), "time_limit_ms", 100, 600000);
  if (doc.contains("timing")) {
    const json& tm = r.object(doc.at("timing"), "timing");
    r.only_keys(tm, "timing", {"warmup", "min_reps", "max_reps", "target_spread", "budget_ms"});
    if (tm.contains("warmup")) t.timing.warmup = r.integer(tm.at("warmup"), "timing.warmup", 0, 1000);
    if (tm.contains("min_reps")) t.timing.min_reps = r.integer(tm.at("min_reps"), "timing.min_reps", 1, 100000);
    if (tm.contains("max_reps")) t.timing.max_reps = r.integer(tm.at("max_reps"), "timing.max_reps", 1, 100000);
    if (tm.contains("target_spread")) t.timing.target_spread = r.number(tm.at("target_spread"), "timing.target_spread");
    if (tm.contains("budget_ms")) t.timing.budget_ms = r.integer(tm.at("budget_ms"), "timing.budget_ms", 1, 600000);
  }
  validate(t);
  return t;
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads a regular file of at most `limit` bytes from an open descriptor; the message says what is wrong.
std::string read_regular(int fd, std::size_t limit, const std::string& shown_name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw TaskError("\"" + shown_name + "\" is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > limit) {
    throw TaskError("\"" + shown_name + "\" is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(limit));
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw TaskError("cannot read \"" + shown_name + "\": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > limit) throw TaskError("\"" + shown_name + "\" grew past the limit of " + std::to_string(limit) + " bytes");
  }
  return text;
}

}  // namespace

FileResolver confined_resolver(std::filesystem::path directory) {
  return [dir = std::move(directory)](std::string_view name) -> std::optional<std::string> {
    const std::string n(name);
    const std::string shown_name = n.size() <= 80 ? n : n.substr(0, 60) + "...";
    const std::string rule = " (a file named in a spec must lie in the spec's directory: no absolute path, no '..', "
                             "no symlink leading out)";
    if (n.empty() || n.find('\0') != std::string::npos) throw TaskError("an empty or malformed file name");
    const std::filesystem::path rel(n);
    if (rel.is_absolute()) throw TaskError("\"" + shown_name + "\" is an absolute path" + rule);
    for (const std::filesystem::path& part : rel) {
      if (part == "..") throw TaskError("\"" + shown_name + "\" contains '..'" + rule);
    }
    Fd dir_fd{::open(dir.empty() ? "." : dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (dir_fd.fd < 0) throw TaskError("cannot open the spec's directory: " + std::string(std::strerror(errno)));
    // The kernel resolves the name beneath the directory and refuses any step (a symlink, a mount
    // crossing through "..") that would leave it. O_NONBLOCK: a FIFO must not hang the reader.
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    Fd file{static_cast<int>(::syscall(SYS_openat2, dir_fd.fd, n.c_str(), &how, sizeof how))};
    if (file.fd < 0 && (errno == ENOSYS || errno == EPERM)) {
      // Kernels before 5.6 (or a seccomp filter without openat2): compare real paths, and open
      // the checked path without following a final symlink.
      std::error_code ec;
      const std::filesystem::path base = std::filesystem::canonical(dir.empty() ? "." : dir, ec);
      const std::filesystem::path real = std::filesystem::weakly_canonical(base / rel, ec);
      const auto [end, _] = std::mismatch(base.begin(), base.end(), real.begin(), real.end());
      if (ec || end != base.end()) throw TaskError("\"" + shown_name + "\" leads out of the spec's directory" + rule);
      file.fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    }
    if (file.fd < 0) {
      if (errno == EXDEV || errno == ELOOP) throw TaskError("\"" + shown_name + "\" leads out of the spec's directory" + rule);
      if (errno == ENOENT) return std::nullopt;
      throw TaskError("cannot open \"" + shown_name + "\": " + std::strerror(errno));
    }
    return read_regular(file.fd, k_max_task_spec_bytes, shown_name);
  };
}

TaskSpec load_task_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw TaskError("cannot read task spec " + path + ": " + std::strerror(errno));
  const Fd owner{fd};
  std::string text;
  try {
    text = read_regular(fd, k_max_task_spec_bytes, path);
  } catch (const TaskError& e) {
    throw TaskError(std::string("task spec: ") + e.what());
  }
  return parse_task(text, confined_resolver(std::filesystem::path(path).parent_path()));
}

std::size_t element_count(const Param& buffer, const Sizes& sizes) {
  std::int64_t n = 1;
  for (const std::string& e : buffer.shape) {
    std::int64_t d = 0;
    try {
      d = eval_size_expr(e, sizes);
    } catch (const std::invalid_argument& ex) {
      throw TaskError(buffer.name + ": " + ex.what());
    }
    if (d < 1) throw TaskError(buffer.name + ": shape dimension \"" + e + "\" is " + std::to_string(d) + ", not positive");
    if (n > (std::int64_t{1} << 40) / d) throw TaskError(buffer.name + ": too many elements");
    n *= d;
  }
  return static_cast<std::size_t>(n);
}

ResolvedLaunch resolve_launch(const TaskSpec& task, const Sizes& sizes) {
  ResolvedLaunch l;
  auto dim = [&](const std::string& e, const std::string& field, std::int64_t hi) {
    std::int64_t v = 0;
    try {
      v = eval_size_expr(e, sizes);
    } catch (const std::invalid_argument& ex) {
      throw TaskError(field + ": " + ex.what());
    }
    if (v < (field == "launch.shared_bytes" ? 0 : 1) || v > hi) {
      throw TaskError(field + ": \"" + e + "\" is " + std::to_string(v) + ", outside [1, " + std::to_string(hi) + "]");
    }
    return static_cast<unsigned>(v);
  };
  for (int k = 0; k < 3; ++k) {
    l.grid[k] = dim(task.launch.grid[k], "launch.grid[" + std::to_string(k) + "]", k_max_grid_dims[k]);
    l.block[k] = dim(task.launch.block[k], "launch.block[" + std::to_string(k) + "]", k_max_block_dims[k]);
  }
  if (static_cast<std::uint64_t>(l.block[0]) * l.block[1] * l.block[2] > k_max_threads_per_block) {
    throw TaskError("launch.block: more than " + std::to_string(k_max_threads_per_block) + " threads per block");
  }
  l.shared_bytes = dim(task.launch.shared_bytes, "launch.shared_bytes", static_cast<std::int64_t>(k_max_plan_shared_bytes));
  return l;
}

void validate(const TaskSpec& t) {
  const std::string& n = t.name;
  if (!is_task_name(n)) fail(n, "name", "expected [a-z0-9_]+ of at most 64 characters, got \"" + n + "\"");
  if (!is_identifier(t.entry)) fail(n, "entry", "not a C identifier: \"" + t.entry + "\"");
  if (t.params.empty()) fail(n, "params", "empty");
  if (t.sizes.empty()) fail(n, "sizes", "empty");
  std::set<std::string> names;
  bool has_output = false;
  std::vector<const Sizes*> all_sizes{&t.sizes};
  for (const Sizes& s : t.check_sizes) all_sizes.push_back(&s);
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const Param& p = t.params[i];
    const std::string f = "params[" + std::to_string(i) + "]";
    if (!is_identifier(p.name)) fail(n, f + ".name", "not a C identifier: \"" + p.name + "\"");
    if (!names.insert(p.name).second) fail(n, f + ".name", "duplicate name \"" + p.name + "\"");
    if (p.kind == ParamKind::scalar) {
      if (p.dtype != DType::float32 && p.dtype != DType::int32) fail(n, f + ".dtype", "a scalar is float32 or int32, got \"" + std::string(to_string(p.dtype)) + "\"");
      for (const Sizes* s : all_sizes) {
        try {
          const std::int64_t v = eval_size_expr(p.value, *s);
          if (p.dtype == DType::int32 && (v < INT32_MIN || v > INT32_MAX)) fail(n, f + ".value", "\"" + p.value + "\" does not fit int32");
        } catch (const std::invalid_argument& e) {
          if (p.dtype == DType::int32) fail(n, f + ".value", e.what());
          char* end = nullptr;
          const double d = std::strtod(p.value.c_str(), &end);
          if (end == p.value.c_str() || *end != '\0' || !std::isfinite(d)) fail(n, f + ".value", "neither a number nor a size expression: \"" + p.value + "\"");
        }
      }
      continue;
    }
    has_output = has_output || p.role != Role::in;
    for (const Sizes* s : all_sizes) {
      try {
        if (element_count(p, *s) * dtype_size(p.dtype) > (std::size_t{4} << 30)) fail(n, f + ".shape", "larger than 4 GiB");
      } catch (const TaskError& e) {
        fail(n, f + ".shape", e.what());
      }
    }
    if (p.role != Role::out) {
      const Generator& g = p.generator;
      if (!std::isfinite(g.a) || !std::isfinite(g.b)) fail(n, f + ".generator", "parameters must be finite");
      if ((g.kind == GeneratorKind::uniform && !(g.a < g.b)) || (g.kind == GeneratorKind::randint && !(g.a <= g.b))) fail(n, f + ".generator", "low must be below high");
      if (g.kind == GeneratorKind::normal && !(g.b > 0)) fail(n, f + ".generator.std", "must be positive");
      // Every timed run draws its inputs afresh; these two would draw the same ones every time, and a
      // kernel could keep its answer from one run for the next.
      if (g.kind == GeneratorKind::constant || g.kind == GeneratorKind::arange) {
        fail(n, f + ".generator.kind", "\"" + std::string(to_string(g.kind)) + "\" gives the same input on every timed run, so a kernel could reuse its "
             "last answer; draw it with uniform, normal or randint");
      }
      if (g.special && p.dtype == DType::int32) fail(n, f + ".generator.special", "NaN, infinities, subnormals and -0 need a float dtype");
    }
  }
  if (!has_output) fail(n, "params", "no buffer with role out or inout");
  for (const Sizes* s : all_sizes) {
    try {
      (void)resolve_launch(t, *s);
    } catch (const TaskError& e) {
      fail(n, "launch", e.what());
    }
  }
  const LaunchPolicy& pol = t.candidate_launch;
  if (pol.max_kernels < 1 || pol.max_kernels > k_max_plan_kernels) {
    fail(n, "candidate_launch.max_kernels", "expected [1, " + std::to_string(k_max_plan_kernels) + "], got " + std::to_string(pol.max_kernels));
  }
  if (pol.max_threads_per_block < 1 || pol.max_threads_per_block > k_max_threads_per_block) {
    fail(n, "candidate_launch.max_threads_per_block",
         "expected [1, " + std::to_string(k_max_threads_per_block) + "], got " + std::to_string(pol.max_threads_per_block));
  }
  if (pol.max_shared_bytes > k_max_plan_shared_bytes) {
    fail(n, "candidate_launch.max_shared_bytes", "expected at most " + std::to_string(k_max_plan_shared_bytes) + ", got " + std::to_string(pol.max_shared_bytes));
  }
  if (pol.max_scratch_bytes > k_max_plan_scratch_bytes) {
    fail(n, "candidate_launch.max_scratch_bytes", "expected at most " + std::to_string(k_max_plan_scratch_bytes) + ", got " + std::to_string(pol.max_scratch_bytes));
  }
  if (t.reference_source.empty()) fail(n, "reference", "empty");
  for (DType d : k_dtypes) {
    const Tolerance& tol = t.tolerance_for(d);
    if (!(tol.atol >= 0 && tol.rtol >= 0) || !std::isfinite(tol.atol) || !std::isfinite(tol.rtol)) {
      fail(n, "tolerance." + std::string(to_string(d)), "atol and rtol must be finite and non-negative");
    }
  }
  if (t.trials < 1 || t.trials > 100) fail(n, "trials", "expected [1, 100], got " + std::to_string(t.trials));
  if (t.time_limit_ms < 100) fail(n, "time_limit_ms", "expected at least 100, got " + std::to_string(t.time_limit_ms));
  const TimingSettings& tm = t.timing;
  if (tm.min_reps < 1 || tm.max_reps < tm.min_reps) fail(n, "timing", "need 1 <= min_reps <= max_reps");
  if (!(tm.target_spread >= 0) || !std::isfinite(tm.target_spread)) fail(n, "timing.target_spread", "must be finite and non-negative");
  if (tm.warmup < 0 || tm.budget_ms < 1) fail(n, "timing", "warmup must be >= 0 and budget_ms >= 1");
}

std::string task_to_json(const TaskSpec& t, int indent) {
  json params = json::array();
  for (const Param& p : t.params) {
    json q = {{"name", p.name}, {"kind", p.kind == ParamKind::buffer ? "buffer" : "scalar"}, {"dtype", to_string(p.dtype)}};
    if (p.kind == ParamKind::buffer) {
      q["role"] = to_string(p.role);
      q["shape"] = p.shape;
      if (p.role != Role::out) {
        const Generator& g = p.generator;
        json gj = {{"kind", to_string(g.kind)}};
        if (g.kind == GeneratorKind::uniform || g.kind == GeneratorKind::randint) gj.update({{"low", g.a}, {"high", g.b}});
        else if (g.kind == GeneratorKind::normal) gj.update({{"mean", g.a}, {"std", g.b}});
        else if (g.kind == GeneratorKind::constant) gj["value"] = g.a;
        if (g.special) gj["special"] = true;
        q["generator"] = gj;
      }
    } else {
      q["value"] = p.value;
    }
    params.push_back(std::move(q));
  }
  json tol = json::object();
  for (DType d : k_dtypes) tol[std::string(to_string(d))] = {{"atol", t.tolerance_for(d).atol}, {"rtol", t.tolerance_for(d).rtol}};
  json checks = json::array();
  for (const Sizes& s : t.check_sizes) checks.push_back(s);
  const json doc = {{"name", t.name},
                    {"description", t.description},
                    {"entry", t.entry},
                    {"params", params},
                    {"sizes", t.sizes},
                    {"check_sizes", checks},
                    {"launch", {{"grid", t.launch.grid}, {"block", t.launch.block}, {"shared_bytes", t.launch.shared_bytes}}},
                    {"candidate_launch", {{"allowed", t.candidate_launch.allowed}, {"max_kernels", t.candidate_launch.max_kernels},
                                          {"max_threads_per_block", t.candidate_launch.max_threads_per_block},
                                          {"max_shared_bytes", t.candidate_launch.max_shared_bytes},
                                          {"max_scratch_bytes", t.candidate_launch.max_scratch_bytes}}},
                    {"reference", t.reference_source},
                    {"tolerance", tol},
                    {"trials", t.trials},
                    {"timing", {{"warmup", t.timing.warmup}, {"min_reps", t.timing.min_reps}, {"max_reps", t.timing.max_reps},
                                {"target_spread", t.timing.target_spread}, {"budget_ms", t.timing.budget_ms}}},
                    {"time_limit_ms", t.time_limit_ms}};
  return doc.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace leap::sandbox
