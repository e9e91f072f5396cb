// SPDX-License-Identifier: Apache-2.0
// The confinement never degrades without a word: with files planted at every path the sandbox makes
// or used to make, every layer is in force or the compile is refused; where a layer cannot be applied
// (user namespaces taken away, as a container's seccomp profile does), `info` says so, untrusted
// compiles are refused unless the caller accepts the weaker set, and every result names what is
// missing; and whatever the reason a file cannot be opened, a candidate reads the same words.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"

#include "test_support.hpp"

namespace sb = leap::sandbox;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Makes unshare fail with EPERM in this process and all it starts, as a container's seccomp profile
// does: no user namespace, so no private root.
bool take_away_user_namespaces() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog program{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Counts what went wrong in a forked child (whose Catch checks would not reach the parent), saying each
// on stderr.
struct Problems {
  int count = 0;
  void expect(bool ok, const std::string& what) {
    if (ok) return;
    ++count;
    std::cerr << "problem: " << what << "\n";
  }
};

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

sb::CompileResult compile_source(sb::Compiler& c, const std::string& source) {
  sb::CompileJob j;
  j.source = source;
  return c.compile(j);
}

// Host paths that cannot be opened, each for another reason, and a missing path beside each that
// differs in one word of the same length (logs show paths scrubbed, and point a caret under them): a
// candidate must not tell any of them from the missing one.
struct Unopenable {
  struct Pair {
    std::string there, missing, word, other_word;
  };
  leap_test::TempDir dir;
  std::vector<Pair> pairs;
  Unopenable() {
    const std::string d = dir.path.string();
    dir.write("canary.h", "#error present\n");
    fs::create_symlink("loop", dir.path / "loop");
    fs::create_directory(dir.path / "sub");
    pairs = {{d + "/canary.h", d + "/absent.h", "canary.h", "absent.h"},          // forbidden (Landlock)
             {d + "/canary.h/x.h", d + "/absent.h/x.h", "canary.h", "absent.h"},  // not a directory
             {d + "/loop", d + "/pool", "loop", "pool"},                          // a symbolic link loop
             {d + "/sub", d + "/bus", "sub", "bus"},                              // a directory
             {"/etc/passwd/x.h", "/etc/passwz/x.h", "passwd", "passwz"},          // not a directory, a system file
             {"/etc/shadow", "/etc/shadoz", "shadow", "shadoz"}};
  }
};

// Each unopenable path against its missing twin, through a compile that NVRTC sees unscanned.
void expect_unopenable_read_as_missing(sb::Compiler& c, Problems& p, const std::string& who) {
  const Unopenable u;
  for (const Unopenable::Pair& pair : u.pairs) {
    const sb::CompileResult a = compile_source(c, "#include \"" + pair.there + "\"\n");
    const sb::CompileResult b = compile_source(c, "#include \"" + pair.missing + "\"\n");
    p.expect(a.status == b.status, who + ": status differs for " + pair.there);
    p.expect(replaced(a.log, pair.word, "X") == replaced(b.log, pair.other_word, "X"),
             who + ": " + pair.there + " reads differently from a missing file:\n" + a.log + "\n---\n" + b.log);
    p.expect(a.log.find("present") == std::string::npos, who + ": the file's text showed");
  }
}

sb::CompilerConfig unscanned(sb::Isolation isolation) {
  sb::CompilerConfig c = leap_test::config(isolation, 1);
  c.pool.size = 1;
  c.skip_include_jail_for_tests = true;  // only the OS stands between NVRTC and the host
  return c;
}

// Runs `command` with sh in a forked child, user namespaces taken away when asked; stdin from
// `input`, and the CLI's cache inside `dir`.
struct ShellRun {
  int exit_code = -1;
  std::string out, err;
};
ShellRun run_shell(const std::string& command, const leap_test::TempDir& dir, bool without_user_namespaces,
                   const std::string& input = "") {
  const std::string in = dir.write("stdin.txt", input).string();
  const std::string out = (dir.path / "stdout.txt").string(), err = (dir.path / "stderr.txt").string();
  const std::string line = "LEAP_SANDBOX_CACHE_DIR='" + (dir.path / "cache").string() + "' " + command + " <'" + in +
                           "' >'" + out + "' 2>'" + err + "'";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (without_user_namespaces && !take_away_user_namespaces()) _exit(120);
    ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ShellRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = leap_test::read_file(out);
  r.err = leap_test::read_file(err);
  return r;
}

const std::string k_cli = std::string("'") + LEAP_SANDBOX_CLI + "'";

}  // namespace

TEST_CASE(
    "confinement layers: where user namespaces are taken away, untrusted compiles are refused unless the weaker set is "
    "accepted",
    "[sandbox][confinement][layers]") {
  REQUIRE(sb::confinement_support().full());
  leap_test::check_in_children(1, [](int) {
    Problems p;
    p.expect(take_away_user_namespaces(), "the test's seccomp filter could not be installed");
    sb::detail::reprobe_confinement_for_tests();
    const sb::ConfinementSupport& s = sb::confinement_support();
    p.expect(!s.mount_namespace && s.sufficient() && !s.full(),
             "the probe did not notice that user namespaces are gone");
    p.expect(s.missing_layers() == std::vector<std::string>{"mount namespace"}, "missing_layers: " + s.missing());
    p.expect(s.mount_namespace_reason.find("Operation not permitted") != std::string::npos,
             "reason: " + s.mount_namespace_reason);
    for (const sb::ConfinementLayer& l : sb::describe_confinement()) {
      p.expect(l.in_force == (l.name != "mount namespace"),
               "describe_confinement says " + l.name + " is " + (l.in_force ? "" : "not ") + "in force");
    }
    for (const sb::Isolation isolation : {sb::Isolation::process, sb::Isolation::pooled}) {
      try {
        sb::Compiler refused(unscanned(isolation));
        p.expect(false, "a Compiler started with a layer missing and no opt-in");
      } catch (const std::runtime_error& e) {
        p.expect(std::string(e.what()).find("accept_weaker_confinement") != std::string::npos &&
                     std::string(e.what()).find("mount namespace unavailable") != std::string::npos,
                 std::string("the refusal does not say what is missing and how to accept it: ") + e.what());
      }
      sb::CompilerConfig config = unscanned(isolation);
      config.accept_weaker_confinement = true;
      sb::Compiler weaker(config);
      const std::string who = isolation == sb::Isolation::process ? "a compile child" : "a pooled compiler";
      const sb::CompileResult r = compile_source(weaker, leap_test::plain_kernel());
      p.expect(r.ok(), who + ": a plain kernel did not compile: " + r.log);
      p.expect(!r.unconfined, who + ": says unconfined");
      p.expect(r.missing_layers == std::vector<std::string>{"mount namespace"},
               who + ": the result does not name the missing layer");
      p.expect(json::parse(sb::to_json(r)).at("missing_layers") == json::array({"mount namespace"}),
               who + ": not in the JSON");
      expect_unopenable_read_as_missing(weaker, p, who);
    }
    return p.count;
  });
}

TEST_CASE("confinement layers: a compiler process that cannot apply a layer it was set up with refuses, naming it",
          "[sandbox][confinement][layers]") {
  REQUIRE(sb::confinement_support().full());
  leap_test::check_in_children(1, [](int) {
    Problems p;
    // Taken away after the probe (cached with every layer there), before the Compilers start the
    // processes that fork their compilers, so those inherit the loss.
    p.expect(take_away_user_namespaces(), "the test's seccomp filter could not be installed");
    sb::Compiler child(unscanned(sb::Isolation::process));  // set up as if every layer were there
    sb::Compiler pooled(unscanned(sb::Isolation::pooled));
    for (sb::Compiler* c : {&child, &pooled}) {
      try {
        const sb::CompileResult r = compile_source(*c, leap_test::plain_kernel());
        p.expect(false, "compiled without its private root: " + std::string(sb::to_string(r.status)));
      } catch (const std::runtime_error& e) {
        p.expect(std::string(e.what()).find(
                     "could not confine itself (unshare(user, mount): Operation not permitted)") != std::string::npos,
                 std::string("the refusal does not name the layer: ") + e.what());
      }
    }
    return p.count;
  });
}

TEST_CASE("confinement layers: files planted at every path the sandbox makes change nothing",
          "[sandbox][confinement][layers]") {
  REQUIRE(sb::confinement_support().full());
  // What an attacker sharing $TMPDIR can put at a path before the sandbox uses it: a file, a link
  // (to the root), a directory of someone else's.
  enum Kind { file, link, foreign_directory };
  const leap_test::TempDir tmp;
  leap_test::check_in_children(3, [&](int kind) {
    Problems p;
    const fs::path dir = tmp.path / ("kind-" + std::to_string(kind));
    fs::create_directory(dir);
    ::setenv("TMPDIR", dir.c_str(), 1);
    // The probe's old path (this process's pid), the names every pattern starts from, and a few more.
    std::vector<std::string> planted = {"leap-probe-root-" + std::to_string(::getpid()), "leap-sandbox-XXXXXX",
                                        "leap-compile-XXXXXX", "leap-compiler-scratch-XXXXXX"};
    for (int i = 1; i <= 3; ++i) planted.push_back("leap-probe-root-" + std::to_string(::getpid() + i));
    for (const std::string& name : planted) {
      const fs::path at = dir / name;
      if (kind == file) std::ofstream(at) << "planted\n";
      if (kind == link) fs::create_symlink("/", at);
      if (kind == foreign_directory) {
        fs::create_directory(at);
        fs::permissions(at, fs::perms::all);
        if (::geteuid() == 0) p.expect(::chown(at.c_str(), 65534, 65534) == 0, "chown");
      }
    }
    sb::detail::reprobe_confinement_for_tests();
    const sb::ConfinementSupport& s = sb::confinement_support();
    p.expect(s.full(), "a planted path turned a layer off: " + s.missing());
    for (const sb::Isolation isolation : {sb::Isolation::process, sb::Isolation::pooled}) {
      const std::string who = isolation == sb::Isolation::process ? "a compile child" : "a pooled compiler";
      sb::Compiler c(unscanned(isolation));
      const sb::CompileResult r = compile_source(c, leap_test::plain_kernel());
      p.expect(r.ok() && r.missing_layers.empty(), who + ": " + r.log);
      expect_unopenable_read_as_missing(c, p, who);
      // Everything the sandbox made is its own: one base directory, 0700, holding 0700 directories.
      unsigned bases = 0;
      for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (std::find(planted.begin(), planted.end(), name) != planted.end()) continue;
        ++bases;
        struct stat st {};
        p.expect(::lstat(e.path().c_str(), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 &&
                     st.st_uid == ::geteuid(),
                 who + ": " + name + " is not a 0700 directory of ours");
        p.expect(name.starts_with("leap-sandbox-") && name != "leap-sandbox-XXXXXX", who + ": unexpected " + name);
        for (const auto& inner : fs::directory_iterator(e.path())) {
          struct stat ist {};
          p.expect(::lstat(inner.path().c_str(), &ist) == 0 && S_ISDIR(ist.st_mode) && (ist.st_mode & 07777) == 0700,
                   who + ": " + inner.path().string() + " is not a 0700 directory");
        }
      }
      p.expect(bases == 1, who + ": " + std::to_string(bases) + " directories of the sandbox's own under $TMPDIR");
    }
    for (const auto& e : fs::directory_iterator(dir)) {  // and once the compilers are gone, nothing of theirs is left
      const std::string name = e.path().filename().string();
      p.expect(std::find(planted.begin(), planted.end(), name) != planted.end(), "left behind: " + name);
    }
    return p.count;
  });
}

TEST_CASE("confinement layers: the sandbox's directories have names nobody can predict, and a tampered base is refused",
          "[sandbox][confinement][layers]") {
  const leap_test::TempDir tmp;
  leap_test::check_in_children(1, [&](int) {
    Problems p;
    ::setenv("TMPDIR", tmp.path.c_str(), 1);
    const std::string a = sb::detail::make_private_dir("probe-root");
    const std::string b = sb::detail::make_private_dir("probe-root");
    p.expect(a != b, "two directories with one name");
    const fs::path base = fs::path(a).parent_path();
    p.expect(base == fs::path(b).parent_path() && base.parent_path() == tmp.path,
             "not in one base directory under $TMPDIR");
    p.expect(base.filename().string().size() == std::string("leap-sandbox-XXXXXX").size() &&
                 base.filename() != "leap-sandbox-XXXXXX",
             "the base's name is not random: " + base.string());
    fs::permissions(base,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);  // someone opened it up
    try {
      (void)sb::detail::make_private_dir("probe-root");
      p.expect(false, "made a directory in a base that is no longer 0700");
    } catch (const std::runtime_error& e) {
      p.expect(std::string(e.what()).find("no longer a directory of this process's own") != std::string::npos,
               e.what());
    }
    fs::permissions(base, fs::perms::owner_all);
    sb::detail::remove_private_dir(a, false);
    sb::detail::remove_private_dir(b, false);
    p.expect(!fs::exists(base), "the base outlived its last directory");
    return p.count;
  });
}

TEST_CASE("confinement layers: info tells the truth, and compile and serve refuse a weaker set unless it is accepted",
          "[sandbox][confinement][layers][cli]") {
  REQUIRE(sb::confinement_support().full());
  leap_test::TempDir dir;
  const std::string kernel = dir.write("k.cu", leap_test::plain_kernel()).string();
  const std::string tmp = (dir.path / "tmp").string();
  fs::create_directory(tmp);
  SECTION("a file planted at the probe's old path (the CLI's own pid) changes nothing") {
    // exec keeps the shell's pid: the file is planted at exactly the path the probe used to take.
    const std::string plant = "export TMPDIR='" + tmp + "'; touch \"$TMPDIR/leap-probe-root-$$\"; exec ";
    const ShellRun info = run_shell(plant + k_cli + " info --json", dir, false);
    REQUIRE(info.exit_code == 0);
    const json c = json::parse(info.out).at("confinement");
    CHECK(c.at("in_force") == true);
    CHECK(c.at("missing_layers") == json::array());
    CHECK(c.at("layers").at("mount_namespace").at("in_force") == true);
    const ShellRun compiled = run_shell(plant + k_cli + " compile --no-cache --json '" + kernel + "'", dir, false);
    INFO(compiled.err);
    REQUIRE(compiled.exit_code == 0);
    CHECK(json::parse(compiled.out).at("missing_layers") == json::array());
  }
  SECTION("without user namespaces, every command says so and refuses until the weaker set is accepted") {
    const ShellRun info = run_shell(k_cli + " info --json", dir, true);
    REQUIRE(info.exit_code == 0);
    const json c = json::parse(info.out).at("confinement");
    CHECK(c.at("in_force") == false);
    CHECK(c.at("sufficient") == true);
    CHECK(c.at("missing_layers") == json::array({"mount namespace"}));
    CHECK(c.at("layers").at("mount_namespace").at("in_force") == false);
    CHECK_THAT(c.at("untrusted_compiles").get<std::string>(), Catch::Contains("--accept-weaker-confinement"));
    const ShellRun text = run_shell(k_cli + " info", dir, true);
    CHECK_THAT(text.out,
               Catch::Contains("confinement of compile children: WEAKER") && Catch::Contains("mount namespace: no"));

    const ShellRun refused = run_shell(k_cli + " compile --no-cache --json '" + kernel + "'", dir, true);
    CHECK(refused.exit_code != 0);
    CHECK(refused.out.empty());
    CHECK_THAT(refused.err,
               Catch::Contains("--accept-weaker-confinement") && Catch::Contains("mount namespace unavailable"));
    const ShellRun accepted =
        run_shell(k_cli + " compile --no-cache --json --accept-weaker-confinement '" + kernel + "'", dir, true);
    INFO(accepted.err);
    REQUIRE(accepted.exit_code == 0);
    const json r = json::parse(accepted.out);
    CHECK(r.at("status") == "ok");
    CHECK(r.at("unconfined") == false);
    CHECK(r.at("missing_layers") == json::array({"mount namespace"}));
    const ShellRun accepted_text =
        run_shell(k_cli + " compile --no-cache --accept-weaker-confinement '" + kernel + "'", dir, true);
    CHECK_THAT(accepted_text.out, Catch::Contains("WEAKER CONFINEMENT (no mount namespace)"));

    const std::string request = json{{"id", 1}, {"op", "compile"}, {"source", leap_test::plain_kernel()}}.dump() + "\n";
    const ShellRun serve_refused = run_shell(k_cli + " serve", dir, true, request);
    CHECK(serve_refused.exit_code != 0);
    CHECK_THAT(serve_refused.err, Catch::Contains("--accept-weaker-confinement"));
    const ShellRun served = run_shell(k_cli + " serve --accept-weaker-confinement", dir, true, request);
    INFO(served.err);
    REQUIRE(served.exit_code == 0);
    CHECK(json::parse(served.out).at("result").at("missing_layers") == json::array({"mount namespace"}));
  }
}
