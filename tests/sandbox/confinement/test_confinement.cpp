// SPDX-License-Identifier: Apache-2.0
// The OS confinement of compile children and the GPU runner: no candidate reads a host file
// whatever its text (with the include jail's lexer on and off), nothing outlives its parent, memory and
// CPU limits end a compile as a result that says which limit it was, and the layers themselves.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"
#include "evaluation/gpu_runner.hpp"

#include "compile/compile_child.hpp"
#include "compile/compiler_exit.hpp"
#include "cli_runner.hpp"
#include "cpu_bound.hpp"
#include "queue_time_check.hpp"
#include "sanitizers.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* k_token = "LEAPCANARY_7e3f91";

// A host file whose text, once included, compiles cleanly and puts the token into the log's
// diagnostics, the PTX and the CUBIN: any leak is visible wherever it lands.
struct Canary {
  leap_test::TempDir dir;
  std::string path;     // exists
  std::string missing;  // same directory, does not exist
  Canary() {
    path = dir.write("canary.h", std::string("extern \"C\" __global__ void ") + k_token + "() {}\n").string();
    missing = (dir.path / "absent.h").string();
  }
};

// Every way of naming a host file the project knows; each takes the absolute path.
struct Form {
  const char* name;
  std::string (*source)(const std::string& path);
};
const Form k_forms[] = {
    {"absolute", [](const std::string& p) { return "#include \"" + p + "\"\n"; }},
    {"angle", [](const std::string& p) { return "#include <" + p + ">\n"; }},
    {"dot-dot",
     [](const std::string& p) {
       std::string up;
       for (int i = 0; i < 24; ++i) up += "../";
       return "#include \"" + up + p.substr(1) + "\"\n";
     }},
    {"macro-built", [](const std::string& p) { return "#define LEAP_PATH \"" + p + "\"\n#include LEAP_PATH\n"; }},
    // The jail splices the next line into the comment (backslash, space, newline); NVRTC does not.
    {"comment ending in backslash-space",
     [](const std::string& p) { return "// a comment \\ \n#include \"" + p + "\"\n"; }},
    // The jail reads a digit separator and a comment opening; NVRTC reads a character literal.
    {"digit separator before a comment opening",
     [](const std::string& p) { return "#define M(x)\nM(1'$/*')\n#include \"" + p + "\"\n// */\n"; }},
    {"stringised",
     [](const std::string& p) {
       return "#define STR(...) #__VA_ARGS__\n__device__ const char* leak = STR(\n#include \"" + p + "\"\n);\n";
     }},
    // The rest of the forms the include jail's own tests refuse, here with nothing but the OS in the way.
    {"macro-stringised path",
     [](const std::string& p) { return "#define S(x) #x\n#define F(x) S(x)\n#include F(" + p + ")\n"; }},
    {"#include_next", [](const std::string& p) { return "#include_next \"" + p + "\"\n"; }},
    {"#import", [](const std::string& p) { return "#import \"" + p + "\"\n"; }},
    {"#embed", [](const std::string& p) { return "__device__ const char data[] = {\n#embed \"" + p + "\"\n};\n"; }},
    {"digraph", [](const std::string& p) { return "%:include \"" + p + "\"\n"; }},
    {"spliced directive", [](const std::string& p) { return "#inc\\\nlude \"" + p + "\"\n"; }},
    {"comment inside the directive", [](const std::string& p) { return "# /* hidden */ include \"" + p + "\"\n"; }},
    {"after a multi-line comment",
     [](const std::string& p) { return "/* a comment\n spanning lines */ #include \"" + p + "\"\n"; }},
    {"trigraph", [](const std::string& p) { return "?\?=include \"" + p + "\"\n"; }},
    {"#line", [](const std::string& p) { return "#line 1 \"" + p + "\"\nint broken(\n"; }},
    {"line marker", [](const std::string& p) { return "# 1 \"" + p + "\"\nint broken(\n"; }},
    {"#pragma GCC dependency", [](const std::string& p) { return "#pragma GCC dependency \"" + p + "\"\n"; }},
    {"#pragma include_alias",
     [](const std::string& p) { return "#pragma include_alias(\"a.h\", \"" + p + "\")\n#include \"a.h\"\n"; }},
    {"_Pragma dependency", [](const std::string& p) { return "_Pragma(\"GCC dependency \\\"" + p + "\\\"\")\n"; }},
    {"after a raw string",
     [](const std::string& p) { return "const char* r = R\"x(text )\" still)x\";\n#include \"" + p + "\"\n"; }},
    {"unterminated comment", [](const std::string& p) { return "/* unterminated\n#include \"" + p + "\"\n"; }},
};

// __has_include spellings: the answer ("present"/"absent") lands in the log through #error.
const Form k_has_include_forms[] = {
    {"__has_include",
     [](const std::string& p) {
       return "#if __has_include(\"" + p + "\")\n#error present\n#else\n#error absent\n#endif\n";
     }},
    {"__has_include through a macro",
     [](const std::string& p) {
       return "#define LEAP_HAS(x) __has_include(x)\n#if LEAP_HAS(\"" + p +
              "\")\n#error present\n#else\n#error absent\n#endif\n";
     }},
    {"__has_include with angle brackets",
     [](const std::string& p) {
       return "#if __has_include(<" + p + ">)\n#error present\n#else\n#error absent\n#endif\n";
     }},
    {"__has_include_next",
     [](const std::string& p) {
       return "#if __has_include_next(\"" + p + "\")\n#error present\n#else\n#error absent\n#endif\n";
     }},
    {"_CCCL_HAS_INCLUDE",
     [](const std::string& p) {
       return "#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(\"" + p +
              "\")\n#error present\n#else\n#error absent\n#endif\n";
     }},
    {"__has_embed",
     [](const std::string& p) {
       return "#if defined(__has_embed) && __has_embed(\"" + p + "\")\n#error present\n#else\n#error absent\n#endif\n";
     }},
};

sb::CompilerConfig confined_config(bool jail, std::shared_ptr<sb::CompileCache> cache = {}) {
  sb::CompilerConfig c = leap_test::config(sb::Isolation::process, 1, std::move(cache));
  c.skip_include_jail_for_tests = !jail;
  return c;
}

sb::CompileResult compile_source(sb::Compiler& c, const std::string& source) {
  sb::CompileJob j;
  j.source = source;
  return c.compile(j);
}

bool contains(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Every file under `dir`, whole.
std::string all_bytes_under(const std::filesystem::path& dir) {
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) all += leap_test::read_file(e.path());
  }
  return all;
}

// Lines of /etc/shadow worth looking for (empty when the file is not readable here).
std::vector<std::string> shadow_lines() {
  std::vector<std::string> lines;
  std::ifstream in("/etc/shadow");
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= 8) lines.push_back(line);
  }
  return lines;
}

// The pid of `parent`'s only child, waiting up to 20 s for it to appear.
pid_t child_of(pid_t parent) {
  const std::string path = "/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children";
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

// Kills `helper` with SIGKILL and returns how long its child `orphan` lived on (we are the subreaper,
// so the orphan is ours to reap); -1 when it was still alive after 5 s.
double orphan_lifetime(pid_t helper, pid_t orphan) {
  ::kill(helper, SIGKILL);
  int status = 0;
  ::waitpid(helper, &status, 0);
  const auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::seconds(5)) {
    if (::waitpid(orphan, &status, WNOHANG) == orphan) return std::chrono::duration<double>(Clock::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(orphan, SIGKILL);
  ::waitpid(orphan, &status, 0);
  return -1.0;
}

struct Subreaper {
  Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

const std::string k_macro_bomb =  // 10^7 initialisers: gigabytes in NVRTC's front end
    "#define COMMA ,\n#define A(x) x x x x x x x x x x\n__device__ int v[] = { A(A(A(A(A(A(A(1 COMMA))))))) 0 };\n";

}  // namespace

TEST_CASE("confinement: this machine offers Landlock and seccomp, and info lists every layer",
          "[sandbox][confinement]") {
  leap_test::require_confinement();
  const sb::ConfinementSupport& s = sb::confinement_support();
  CHECK(s.landlock_abi == sb::detail::landlock_abi());
  CHECK(s.missing().empty());
  CHECK(s.missing_layers().empty());
  const std::vector<sb::ConfinementLayer> layers = sb::describe_confinement();
  REQUIRE(layers.size() == 5);
  CHECK(layers[0].name == "landlock");
  CHECK(layers[0].in_force);
  CHECK(contains(layers[0].detail, "ABI " + std::to_string(s.landlock_abi)));
  CHECK(layers[1].name == "seccomp");
  CHECK(layers[2].name == "mount namespace");
  CHECK(layers[2].in_force == s.mount_namespace);
  CHECK(layers[3].name == "rlimits");
  CHECK(contains(layers[3].detail, "+4096 MiB"));
  CHECK(sb::landlock_abi_features(6).find("scoped signals") != std::string::npos);
  CHECK(sb::landlock_abi_features(3).find("TCP") == std::string::npos);

  sb::ConfinementSupport none;
  none.landlock_reason = "no Landlock here";
  none.seccomp_reason = "no seccomp here";
  none.mount_namespace_reason = "no user namespaces here";
  CHECK_FALSE(none.sufficient());
  CHECK_FALSE(none.full());
  CHECK(none.missing() ==
        "Landlock unavailable: no Landlock here; seccomp unavailable: no seccomp here; mount namespace unavailable: no "
        "user namespaces here");
  CHECK(none.missing_layers() == std::vector<std::string>{"landlock", "seccomp", "mount namespace"});
  sb::ConfinementSupport no_root = s;
  no_root.mount_namespace = false;
  CHECK(no_root.sufficient());
  CHECK_FALSE(no_root.full());
  CHECK(no_root.missing_layers() == std::vector<std::string>{"mount namespace"});
}

TEST_CASE("confinement: no include form leaks a host file, with the jail's lexer on or off",
          "[sandbox][confinement][leak]") {
  leap_test::require_confinement();
  const Canary canary;
  const std::vector<std::string> shadow = shadow_lines();
  leap_test::TempDir cache_dir;
  sb::CacheOptions cache_options;
  cache_options.directory = cache_dir.path;
  auto cache = std::make_shared<sb::CompileCache>(cache_options);
  for (const bool jail : {true, false}) {
    sb::Compiler c(confined_config(jail, cache));
    for (const Form& form : k_forms) {
      INFO("form: " << form.name << ", jail lexer " << (jail ? "on" : "off"));
      const sb::CompileResult leak = compile_source(c, form.source(canary.path));
      // Some forms NVRTC ignores, and they compile; what matters is that nothing of the file shows.
      if (std::string_view(form.name) == "absolute") CHECK_FALSE(leak.ok());
      CHECK_FALSE(leak.unconfined);
      CHECK_FALSE(contains(leak.log, k_token));
      CHECK_FALSE(contains(leak.ptx, k_token));
      CHECK_FALSE(contains(leak.cubin, k_token));
      // A forbidden file reads exactly like a missing one.
      const sb::CompileResult absent = compile_source(c, form.source(canary.missing));
      CHECK(absent.status == leak.status);
      CHECK(replaced(leak.log, "canary.h", "X.h") == replaced(absent.log, "absent.h", "X.h"));

      const sb::CompileResult secret = compile_source(c, form.source("/etc/shadow"));
      const sb::CompileResult no_secret = compile_source(c, form.source("/etc/shadoz"));
      for (const std::string& line : shadow) CHECK_FALSE(contains(secret.log, line));
      CHECK(secret.status == no_secret.status);
      CHECK(replaced(secret.log, "/etc/shadow", "X") == replaced(no_secret.log, "/etc/shadoz", "X"));
    }
    for (const Form& form : k_has_include_forms) {
      INFO("form: " << form.name << ", jail lexer " << (jail ? "on" : "off"));
      const sb::CompileResult existing = compile_source(c, form.source(canary.path));
      const sb::CompileResult missing = compile_source(c, form.source(canary.missing));
      CHECK(existing.status == missing.status);
      CHECK(replaced(existing.log, "canary.h", "X.h") == replaced(missing.log, "absent.h", "X.h"));
      CHECK_FALSE(contains(existing.log, "present"));
      const sb::CompileResult shadow_existing = compile_source(c, form.source("/etc/shadow"));
      const sb::CompileResult shadow_missing = compile_source(c, form.source("/etc/shadoz"));
      CHECK(replaced(shadow_existing.log, "/etc/shadow", "X") == replaced(shadow_missing.log, "/etc/shadoz", "X"));
    }
  }
  // A header the task ships that includes the file.
  for (const bool jail : {true, false}) {
    sb::Compiler c(confined_config(jail, cache));
    sb::CompileJob j;
    j.source = "#include \"helper.h\"\n";
    j.headers = {{"helper.h", "#include \"" + canary.path + "\"\n"}};
    const sb::CompileResult r = c.compile(j);
    CHECK_FALSE(r.ok());
    CHECK_FALSE(contains(r.log, k_token));
    CHECK_FALSE(contains(r.ptx, k_token));
  }
  const std::string cached = all_bytes_under(cache_dir.path);
  CHECK_FALSE(cached.empty());  // the cache did store results: the check below looked at something
  CHECK_FALSE(contains(cached, k_token));
  for (const std::string& line : shadow) CHECK_FALSE(contains(cached, line));
}

TEST_CASE("confinement: a pooled compiler leaks no host file either, one candidate after another",
          "[sandbox][confinement][leak][pool]") {
  leap_test::require_confinement();
  const Canary canary;
  // One pooled compiler for every form, the jail's lexer off: its confinement, applied once before its
  // first source, holds for all of them, and its PCH directory lets nothing through.
  sb::CompilerConfig config = leap_test::config(sb::Isolation::pooled, 1);
  config.pool.size = 1;
  config.skip_include_jail_for_tests = true;
  sb::Compiler c(config);
  for (const Form& form : k_forms) {
    INFO("form: " << form.name);
    const sb::CompileResult leak =
        compile_source(c, "#include <cuda_fp16.h>\n__device__ int leap_marker;\n" + form.source(canary.path));
    CHECK_FALSE(leak.unconfined);
    CHECK_FALSE(contains(leak.log, k_token));
    CHECK_FALSE(contains(leak.ptx, k_token));
    CHECK_FALSE(contains(leak.cubin, k_token));
    const sb::CompileResult absent =
        compile_source(c, "#include <cuda_fp16.h>\n__device__ int leap_marker;\n" + form.source(canary.missing));
    CHECK(absent.status == leak.status);
    CHECK(replaced(leak.log, "canary.h", "X.h") == replaced(absent.log, "absent.h", "X.h"));
  }
  for (const Form& form : k_has_include_forms) {
    INFO("form: " << form.name);
    const sb::CompileResult existing = compile_source(c, form.source(canary.path));
    const sb::CompileResult missing = compile_source(c, form.source(canary.missing));
    CHECK(replaced(existing.log, "canary.h", "X.h") == replaced(missing.log, "absent.h", "X.h"));
    CHECK_FALSE(contains(existing.log, "present"));
  }
  const sb::CompilePoolStats s = c.pool_stats();
  CHECK(s.processes_started == 1);  // all of it went through the one pooled compiler
  CHECK(s.pch_hits > 0);            // with its precompiled headers in use
}

TEST_CASE("confinement: without it the same sources do leak (the leak test can fail)", "[sandbox][confinement][leak]") {
  const Canary canary;
  sb::CompilerConfig config = leap_test::config(sb::Isolation::process, 1);
  config.unconfined = true;
  config.skip_include_jail_for_tests = true;
  sb::Compiler c(config);
  const sb::CompileResult leak = compile_source(c, k_forms[0].source(canary.path));  // #include "absolute"
  CHECK(leak.ok());
  CHECK(leak.unconfined);
  CHECK(contains(leak.ptx, k_token));
  const sb::CompileResult present = compile_source(c, k_has_include_forms[0].source(canary.path));
  CHECK(contains(present.log, "present"));
}

TEST_CASE("confinement: toolkit headers that include their siblings compile (mma.h, cooperative_groups.h)",
          "[sandbox][confinement]") {
  leap_test::require_confinement();
  sb::Compiler c(leap_test::config(sb::Isolation::process, 1));
  const sb::CompileResult wmma =
      compile_source(c,
                     "#include <mma.h>\n"
                     "using namespace nvcuda;\n"
                     "extern \"C\" __global__ void wmma16(const half* a, const half* b, float* d) {\n"
                     "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
                     "  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
                     "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;\n"
                     "  wmma::fill_fragment(acc, 0.0f);\n"
                     "  wmma::load_matrix_sync(fa, a, 16);\n"
                     "  wmma::load_matrix_sync(fb, b, 16);\n"
                     "  wmma::mma_sync(acc, fa, fb, acc);\n"
                     "  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);\n"
                     "}\n");
  INFO(wmma.log);
  CHECK(wmma.ok());
  CHECK(contains(wmma.ptx, "wmma.mma.sync"));
  const sb::CompileResult groups =
      compile_source(c,
                     "#include <cooperative_groups.h>\n"
                     "#include <cooperative_groups/reduce.h>\n"
                     "namespace cg = cooperative_groups;\n"
                     "extern \"C\" __global__ void warp_sum(const float* x, float* out) {\n"
                     "  cg::thread_block block = cg::this_thread_block();\n"
                     "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
                     "  const float s = cg::reduce(warp, x[block.thread_rank()], cg::plus<float>());\n"
                     "  if (warp.thread_rank() == 0) out[block.thread_rank() / 32] = s;\n"
                     "}\n");
  INFO(groups.log);
  CHECK(groups.ok());
  CHECK(contains(groups.ptx, "warp_sum"));
}

TEST_CASE("confinement: a compile past its address-space limit ends promptly as a resource error",
          "[sandbox][confinement][limits]") {
  leap_test::require_confinement();
  if (leap_test::k_sanitizer) {
    WARN(leap_test::k_no_address_space_limits);
    return;
  }
  sb::CompilerConfig config = leap_test::config(sb::Isolation::process, 1);
  config.limits.address_space_bytes = 256ull << 20;
  sb::Compiler c(config);
  sb::CompileJob j;
  j.source = k_macro_bomb;
  j.options.timeout = std::chrono::seconds(60);
  const sb::CompileResult r = c.compile(j);
  INFO(r.log);
  CHECK(r.status == sb::CompileStatus::resource_limit);
  CHECK(r.limit == sb::CompileLimit::address_space);
  CHECK(contains(r.log, "address-space limit (256 MiB"));
  CHECK(r.cpu_seconds < 10.0);
  CHECK(compile_source(c, leap_test::plain_kernel()).ok());
}

TEST_CASE("confinement: limits count the compile's own CPU time, not the queue", "[sandbox][confinement][limits]") {
  leap_test::require_confinement();
  SECTION("a batch queued behind one pooled compiler finishes although it waits longer than each compile's limit") {
    sb::Compiler c(leap_test::config(sb::Isolation::process, 1));
    leap_test::check_queue_time_not_charged(c, 12);
  }
  SECTION("scanning and hashing the source are charged to the budget") {
    sb::Compiler c(leap_test::config(sb::Isolation::process, 1, std::make_shared<sb::CompileCache>()));
    sb::CompileJob j;
    j.source = std::string(leap_test::plain_kernel());
    for (int i = 0; i < 400000; ++i)
      j.source += "// a long comment line that the jail must scan and the cache must hash\n";
    j.options.timeout = std::chrono::milliseconds(1);
    const sb::CompileResult r = c.compile(j);
    CHECK(r.status == sb::CompileStatus::timeout);
    CHECK(r.limit == sb::CompileLimit::cpu_time);
    CHECK(contains(r.log, "scanning and hashing the source alone used"));
    CHECK(r.cpu_seconds >= 0.001);
  }
  SECTION("the wall clock is a backstop, and the result says it was the one") {
    sb::Compiler c(leap_test::config(sb::Isolation::process, 1));
    sb::CompileJob j;
    j.source = leap_test::plain_kernel();
    j.options.wall_backstop = std::chrono::milliseconds(1);
    const sb::CompileResult r = c.compile(j);
    CHECK(r.status == sb::CompileStatus::timeout);
    CHECK(r.limit == sb::CompileLimit::wall_clock);
    CHECK(contains(r.log, "wall-clock backstop of 1 ms"));
  }
}

// The processes this process's threads have started and not yet reaped, and theirs (a one-shot
// compile child is the compile launcher's child).
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> out;
  const auto add_children_of = [&out](const std::filesystem::path& tasks) {
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream in(task.path() / "children");
      for (pid_t pid = 0; in >> pid;) out.push_back(pid);
    }
  };
  add_children_of("/proc/self/task");
  for (std::size_t i = 0, n = out.size(); i < n; ++i) add_children_of("/proc/" + std::to_string(out[i]) + "/task");
  return out;
}

// A child this process started that is not in `before`, waiting up to 20 s for one; 0 if none came.
pid_t new_child(const std::vector<pid_t>& before) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    for (pid_t pid : children_of_this_process()) {
      if (std::find(before.begin(), before.end(), pid) == before.end()) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

const std::string k_slow_kernel =  // seconds of NVRTC's optimiser
    "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
    "__global__ void k(float* p) { float v = p[threadIdx.x];\n  A(A(A(C(v = v * 1.0001f + p[(int)v & 7];)))) p[0] = v; "
    "}\n";

TEST_CASE("confinement: a compile child that stops making progress is ended in its idle window, not at the backstop",
          "[sandbox][confinement][limits][idle]") {
  leap_test::require_confinement();
  sb::CompilerConfig config = leap_test::config(sb::Isolation::process, 1);
  config.idle_limit = std::chrono::milliseconds(1500);
  sb::Compiler c(config);
  sb::CompileJob j;
  j.source = k_slow_kernel;
  j.options.timeout = std::chrono::seconds(120);
  j.options.wall_backstop = std::chrono::seconds(600);
  const std::vector<pid_t> before = children_of_this_process();
  const auto t0 = Clock::now();
  auto pending = std::async(std::launch::async, [&] { return c.compile(j); });
  const pid_t child = new_child(before);
  REQUIRE(child > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside NVRTC by then
  ::kill(child, SIGSTOP);  // frozen: its CPU time stands still, and it will never answer
  const sb::CompileResult r = pending.get();
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r.log);
  CHECK(r.status == sb::CompileStatus::timeout);
  CHECK(r.limit == sb::CompileLimit::idle);
  CHECK(contains(r.log, "made no progress for 1500 ms"));
  CHECK(nlohmann::json::parse(sb::to_json(r)).at("limit") == "idle");
  CHECK_FALSE(r.nvrtc_verdict);
  CHECK(took < 120.0);           // long before its CPU limit, let alone the 600 s backstop
  CHECK(::kill(child, 0) != 0);  // killed and reaped
  CHECK(compile_source(c, leap_test::plain_kernel()).ok());
}

TEST_CASE("confinement: the idle window ends a process that waits, never one that computes",
          "[sandbox][confinement][limits][idle]") {
  const auto watch_child = [](bool spin) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      if (spin) {
        std::atomic<unsigned long> n{0};
        for (;;) n.fetch_add(1, std::memory_order_relaxed);
      }
      leap_test::stop_sanitizer_thread();  // else ThreadSanitizer's own thread keeps using CPU here
      ::pause();                           // asleep, holding the pipe open: no answer, no end of file
      _exit(0);
    }
    ::close(fds[1]);
    sb::detail::Watch watch;
    watch.pid = pid;
    watch.clock = sb::detail::cpu_clock_of(pid);
    watch.cpu_limit = std::chrono::milliseconds(800);
    watch.idle_limit = std::chrono::milliseconds(300);
    watch.wall_deadline = Clock::now() + std::chrono::seconds(120);
    std::string data;
    const sb::CompileLimit limit = sb::detail::watch_compiler_process(fds[0], watch, data, nullptr);
    ::close(fds[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return limit;
  };
  CHECK(watch_child(false) == sb::CompileLimit::idle);
  CHECK(watch_child(true) == sb::CompileLimit::cpu_time);  // on a busy machine it waits for the CPU: not idle either
}

// Forks a helper that runs `start`, which starts one process of the sandbox below the helper and
// does not return while that process should live; after `settle`, kills the helper with SIGKILL and
// checks that the process below it went within a second.
void check_dies_with_its_parent(const std::function<void()>& start, std::chrono::milliseconds settle) {
  const pid_t helper = ::fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    start();
    _exit(0);
  }
  const pid_t below = child_of(helper);
  REQUIRE(below > 0);
  std::this_thread::sleep_for(settle);
  const double lived = orphan_lifetime(helper, below);
  CHECK(lived >= 0.0);
  CHECK(lived < 1.0);
}

TEST_CASE("confinement: no compile child or pooled compiler outlives its parent by a second",
          "[sandbox][confinement][lifetime]") {
  leap_test::require_confinement();
  const Subreaper subreaper;
  SECTION("a compile child whose parent is killed") {
    check_dies_with_its_parent(
        [] {
          sb::Compiler c(leap_test::config(sb::Isolation::process, 1));
          sb::CompileJob j;
          j.source =
              "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
              "__global__ void k(float* p) { float v = p[threadIdx.x];\n  A(A(A(C(v = v * 1.0001f + p[(int)v & 7];)))) "
              "p[0] = v; }\n";
          j.options.timeout = std::chrono::seconds(120);
          (void)c.compile(j);  // killed with the helper long before it ends
        },
        std::chrono::milliseconds(300));  // well inside NVRTC by then
  }
  SECTION("a pooled compiler whose parent is killed, idle between compiles") {
    check_dies_with_its_parent(
        [] {
          sb::CompilerConfig config = leap_test::config(sb::Isolation::pooled, 1);
          config.pool.size = 1;
          sb::Compiler c(config);
          (void)c.compile(sb::CompileJob{leap_test::plain_kernel(), {}, {}, "kernel.cu"});
          ::pause();  // the idle pooled compiler lives with c
        },
        std::chrono::milliseconds(500));
  }
  SECTION("an GPU runner whose parent is killed") {
    check_dies_with_its_parent(
        [] {
          sb::GpuRunnerConfig config;
          config.fake = true;
          sb::GpuRunner w(config);
          const std::vector<std::uint8_t> ping = nlohmann::json::to_cbor(nlohmann::json{{"op", "ping"}});
          (void)w.call(std::string_view(reinterpret_cast<const char*>(ping.data()), ping.size()),
                       std::chrono::seconds(30));
          ::pause();  // the GPU runner lives with w
        },
        std::chrono::milliseconds(300));
  }
}

TEST_CASE("confinement: the GPU runner program starts without a GPU, confined, and answers its probe",
          "[sandbox][confinement][gpu_runner]") {
  leap_test::require_confinement();
  REQUIRE_FALSE(sb::find_gpu_runner_executable().empty());
  auto call = [](sb::GpuRunner& w, const char* op) {
    const std::vector<std::uint8_t> req = nlohmann::json::to_cbor(nlohmann::json{{"op", op}});
    const sb::CallResult r =
        w.call(std::string_view(reinterpret_cast<const char*>(req.data()), req.size()), std::chrono::seconds(30));
    INFO(r.detail);
    REQUIRE(r.status == sb::CallStatus::ok);
    return nlohmann::json::from_cbor(r.reply);
  };
  SECTION("a real GPU runner: the driver probe answers with a state and a reason") {
    sb::GpuRunnerConfig config;
    if (std::string(LEAP_TEST_STUB_LIBCUDA).size() > 0) config.driver_library = LEAP_TEST_STUB_LIBCUDA;
    sb::GpuRunner w(config);
    const nlohmann::json probe = call(w, "probe");
    const std::string report = probe.at("report");
    CHECK(contains(report, "state "));
    CHECK(w.pid() != ::getpid());
    CHECK(::getpgid(w.pid()) == w.pid());  // its own process group
  }
  SECTION("a fake GPU runner: confined from the start, its own group, only its pipes open") {
    sb::GpuRunnerConfig config;
    config.fake = true;
    sb::GpuRunner w(config);
    const nlohmann::json ping = call(w, "ping");
    CHECK(ping.at("pid") == w.pid());
    CHECK(ping.at("confinement").at("landlock_abi") == sb::confinement_support().landlock_abi);
    CHECK(ping.at("confinement").at("seccomp") == true);
    CHECK(ping.at("confinement").at("error") == "");
    CHECK(::getpgid(w.pid()) == w.pid());
    std::vector<int> fds;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(w.pid()) + "/fd")) {
      fds.push_back(std::stoi(e.path().filename().string()));
    }
    std::sort(fds.begin(), fds.end());
    CHECK(fds == std::vector<int>{0, 1, 2, 3, 4});
  }
}

TEST_CASE("confinement: results say when they were compiled unconfined", "[sandbox][confinement]") {
  leap_test::require_confinement();
  sb::Compiler confined(leap_test::config(sb::Isolation::process, 1));
  CHECK_FALSE(compile_source(confined, leap_test::plain_kernel()).unconfined);
  sb::Compiler trusted(leap_test::config(sb::Isolation::trusted_in_process, 1));
  CHECK(compile_source(trusted, leap_test::plain_kernel()).unconfined);
  sb::CompilerConfig opted_out = leap_test::config(sb::Isolation::process, 1);
  opted_out.unconfined = true;
  sb::Compiler unconfined(opted_out);
  const sb::CompileResult r = compile_source(unconfined, leap_test::plain_kernel());
  CHECK(r.ok());
  CHECK(r.unconfined);
}

// The layers one by one, in throwaway children.
namespace {
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) _exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}
}  // namespace

TEST_CASE("confinement: seccomp kills exec, sockets and new processes, and lets threads run",
          "[sandbox][confinement][seccomp]") {
  leap_test::require_confinement();
  const sb::detail::SeccompFilter filter = sb::detail::compile_child_filter();
  auto confined = [&](const std::function<int()>& body) {
    return in_child([&] {
      if (sb::detail::apply_seccomp(filter) != 0) return 90;
      return body();
    });
  };
  CHECK(confined([] { return 7; }) == 7);
  CHECK(confined([] {
          int x = 0;
          std::thread t([&] { x = 5; });
          t.join();
          return x;
        }) == 5);
  CHECK(confined([] {
          char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
          ::execv("/bin/true", argv);
          return 91;
        }) == 1000 + SIGSYS);
  CHECK(confined([] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 92 : 93; }) == 1000 + SIGSYS);
  CHECK(confined([] { return ::fork() >= 0 ? 94 : 95; }) == 1000 + SIGSYS);
  CHECK(confined([] { return ::unshare(0) == 0 ? 96 : 97; }) == 1000 + SIGSYS);
}

TEST_CASE("confinement: Landlock leaves the allowed tree readable and nothing else",
          "[sandbox][confinement][landlock]") {
  leap_test::require_confinement();
  leap_test::TempDir allowed;
  const std::string inside = allowed.write("inside.h", "ok").string();
  const int abi = sb::detail::landlock_abi();
  sb::detail::LandlockPlan plan;
  plan.rules.push_back({allowed.path.string(), false});
  const int rc = in_child([&] {
    if (sb::detail::apply_landlock(plan, abi) != 0) return 10;
    const int in = ::open(inside.c_str(), O_RDONLY);
    if (in < 0) return 11;
    ::close(in);
    if (::open("/etc/passwd", O_RDONLY) >= 0 || errno != EACCES) return 12;
    if (::open((allowed.path / "new.h").c_str(), O_WRONLY | O_CREAT, 0600) >= 0) return 13;
    if (::open(inside.c_str(), O_WRONLY) >= 0) return 14;
    return 0;
  });
  CHECK(rc == 0);
}

TEST_CASE("confinement: the log filter gives every file that cannot be opened the words of a missing one",
          "[sandbox][confinement]") {
  const auto filtered = [](const std::string& log) { return sb::detail::same_words_for_every_unopenable_file(log); };
  const std::string missing = "k.cu(1): catastrophic error: cannot open source file \"/a/b\"\n";
  // Each reason NVRTC appends tells a candidate something about the host's files.
  for (const char* reason :
       {"Permission denied", "Not a directory", "Too many levels of symbolic links", "Is a directory",
        "File name too long", "No such device or address", "Input/output error"}) {
    INFO(reason);
    CHECK(filtered("k.cu(1): catastrophic error: cannot open source file \"/a/b\": " + std::string(reason) + "\n") ==
          missing);
  }
  // Every line, not only the first; other lines are left alone, the last one without a newline too.
  CHECK(filtered("a.h(2): error: cannot open source file \"x\": Not a directory\n1 error\nk.cu(1): error: cannot open "
                 "source file "
                 "\"y\": Permission denied") ==
        "a.h(2): error: cannot open source file \"x\"\n1 error\nk.cu(1): error: cannot open source file \"y\"");
  // A name may hold quotes and colons of its own: only the reason after the closing quote goes.
  CHECK(filtered("k.cu(1): error: cannot open source file \"a\": b\": Not a directory\n") ==
        "k.cu(1): error: cannot open source file \"a\": b\"\n");
  const std::string untouched =
      "k.cu(1): error: could not open source file \"x\" (no directories in search list)\n"
      "k.cu(2): error: identifier \"x\" is undefined: try this\n";
  CHECK(filtered(untouched) == untouched);
}

// The filter runs in the long-lived process over the whole raw log, and a candidate's #warning lines
// can say the words: it used to erase each reason in place, moving the rest of the log once per line
// (quadratic: 90 ms of CPU for 1 MiB of such lines, past this test's 10 s for 16 MiB). Now one pass.
TEST_CASE("confinement: the log filter is linear in the lines it rewrites", "[sandbox][confinement][scans]") {
  const std::string line = "k.cu(7): warning #1105-D: #warning directive: cannot open source file \"x\": y\n";
  const std::string kept = "k.cu(7): warning #1105-D: #warning directive: cannot open source file \"x\"\n";
  std::string log, expected;
  while (log.size() < (16u << 20)) {
    log += line;
    expected += kept;
  }
  CHECK(leap_test::finishes_within_cpu_seconds(
      10, [&] { return sb::detail::same_words_for_every_unopenable_file(log) == expected; }));
}

TEST_CASE("confinement: the private root holds only what is bound into it", "[sandbox][confinement][mounts]") {
  leap_test::require_confinement();
  if (!sb::confinement_support().mount_namespace) {
    WARN("no private mount namespace here (" << sb::confinement_support().mount_namespace_reason
                                             << "); the log filter stands in");
    return;
  }
  leap_test::TempDir mountpoint, bound;
  const std::string inside = bound.write("inside.h", "ok").string();
  sb::detail::PrivateRoot root;
  root.mountpoint = mountpoint.path.string();
  root.binds.push_back({bound.path.string(), bound.path.string()});
  root.uid = ::getuid();
  root.gid = ::getgid();
  const int rc = in_child([&] {
    const char* step = "";
    if (sb::detail::enter_private_root(root, step) != 0) return 20;
    const int in = ::open(inside.c_str(), O_RDONLY);
    if (in < 0) return 21;
    ::close(in);
    if (::open("/etc/passwd", O_RDONLY) >= 0 || errno != ENOENT) return 22;
    if (::open((bound.path / "new.h").c_str(), O_WRONLY | O_CREAT, 0600) >= 0) return 23;
    return 0;
  });
  CHECK(rc == 0);
}

TEST_CASE("confinement: info reports the layers in force, --unconfined results say so, on every command",
          "[sandbox][confinement][cli]") {
  leap_test::require_confinement();
  leap_test::TempDir dir;
  const leap_test::CliRun info = leap_test::run_cli("info --json", dir);
  REQUIRE(info.exit_code == 0);
  const nlohmann::json c = nlohmann::json::parse(info.out).at("confinement");
  CHECK(c.at("sufficient") == true);
  CHECK(c.at("missing") == "");
  CHECK(c.at("layers").at("landlock").at("abi") == sb::confinement_support().landlock_abi);
  for (const char* layer : {"landlock", "seccomp", "mount_namespace", "rlimits", "process"}) {
    CHECK_FALSE(c.at("layers").at(layer).at("detail").get<std::string>().empty());
  }
  CHECK(c.at("layers").at("landlock").at("in_force") == true);
  CHECK(c.at("layers").at("seccomp").at("in_force") == true);
  CHECK_FALSE(c.at("gpu_runner_executable").get<std::string>().empty());
  const leap_test::CliRun text = leap_test::run_cli("info", dir);
  CHECK(contains(text.out, "confinement of compile children: in force"));
  CHECK(contains(text.out, "landlock: yes - ABI " + std::to_string(sb::confinement_support().landlock_abi)));

  const std::string kernel = dir.write("k.cu", leap_test::plain_kernel()).string();
  const leap_test::CliRun confined = leap_test::run_cli("compile --no-cache --json '" + kernel + "'", dir);
  REQUIRE(confined.exit_code == 0);
  CHECK(nlohmann::json::parse(confined.out).at("unconfined") == false);
  CHECK(confined.err.empty());
  const leap_test::CliRun opted_out =
      leap_test::run_cli("compile --no-cache --json --unconfined '" + kernel + "'", dir);
  REQUIRE(opted_out.exit_code == 0);
  CHECK(nlohmann::json::parse(opted_out.out).at("unconfined") == true);
  CHECK(contains(opted_out.err, "trusted source only"));
  const leap_test::CliRun opted_out_text = leap_test::run_cli("compile --no-cache --unconfined '" + kernel + "'", dir);
  CHECK(contains(opted_out_text.out, "UNCONFINED"));

  const std::string request =
      nlohmann::json{{"id", 1}, {"op", "compile"}, {"source", leap_test::plain_kernel()}}.dump() + "\n";
  const leap_test::CliRun served = leap_test::run_cli("serve --unconfined", dir, request);
  REQUIRE(served.exit_code == 0);
  CHECK(nlohmann::json::parse(served.out).at("result").at("unconfined") == true);
  const leap_test::CliRun served_confined = leap_test::run_cli("serve", dir, request);
  CHECK(nlohmann::json::parse(served_confined.out).at("result").at("unconfined") == false);

  const leap_test::CliRun eval = leap_test::run_cli("eval --json --unconfined row_sum '" + kernel + "'", dir);
  CHECK(nlohmann::json::parse(eval.out).at("compile").at("unconfined") == true);
}
