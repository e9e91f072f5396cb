// SPDX-License-Identifier: Apache-2.0
// Precompiled headers kept on disk (CompilerConfig::pch_directory): a PCH one Compiler made is used by
// a fresh one and by another process (the CLI), with the same bytes, log and status as a compile
// without it; a PCH file edited, replaced or recorded by another store is refused and the compile
// still succeeds; the budget evicts the least used; what follows a candidate's #include lines never
// reaches a stored PCH; the include list is read as the preprocessor reads it, so a licence header or a
// repeated include gets the bare source's PCH; making a PCH is charged to the compile that needed it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"

#include "compile/leading_includes.hpp"
#include "compile/nvrtc_compile.hpp"
#include "compile/pch_heap.hpp"
#include "compile/pch_store.hpp"
#include "cli_runner.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
namespace fs = std::filesystem;

namespace {

void require_confinement() {
  const sb::ConfinementSupport& s = sb::confinement_support();
  INFO("this machine lacks a confinement layer, and untrusted compiles refuse to run without it: " << s.missing());
  REQUIRE(s.full());
}

constexpr const char* k_prefix = "#include <cuda_fp16.h>\n";

std::string kernel(const std::string& name, const std::string& factor) {
  return std::string(k_prefix) + "extern \"C\" __global__ void " + name +
         "(const __half* x, float* y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = __half2float(x[i]) * " +
         factor + ";\n}\n";
}

sb::CompileJob job(const std::string& source) {
  sb::CompileJob j;
  j.source = source;
  j.options.want_cubin = true;
  j.options.timeout = std::chrono::seconds(120);
  return j;
}

sb::CompilerConfig with_store(const fs::path& dir, sb::Isolation iso = sb::Isolation::process) {
  sb::CompilerConfig c = leap_test::config(iso, 1);
  c.pool.size = 1;
  c.pch_directory = dir;
  return c;
}

// What a compile without any PCH says: the reference every stored-PCH compile must equal.
sb::CompileResult without_pch(const sb::CompileJob& j) {
  sb::Compiler plain(leap_test::config(sb::Isolation::process, 1));
  return plain.compile(j);
}

void same_result(const sb::CompileResult& a, const sb::CompileResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.log == b.log);
  CHECK(a.ptx == b.ptx);
  CHECK(a.cubin == b.cubin);
  CHECK(a.kernels == b.kernels);
}

std::vector<fs::path> pch_files(const fs::path& store) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(store / "files")) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("stored pch: the heap's address is one per secret, 1 GiB aligned, and a place this build's processes can map",
          "[sandbox][pch]") {
  // Under a sanitizer much of the address space is its shadow, where a mapping is refused (or ends
  // the process): the range must suit the build, or no stored PCH is ever usable by another process.
  namespace d = leap::sandbox::detail;
  const d::PchHeapRange range = d::pch_heap_range();
  constexpr std::uint64_t gib = 1ull << 30;
  const std::size_t heap = 256ull << 20;  // NVRTC 13's PCH heap
  std::set<std::uintptr_t> seen;
  for (int i = 0; i < 16; ++i) {
    const std::string secret = "machine secret " + std::to_string(i);
    const std::uintptr_t a = d::pch_heap_address_for(secret);
    INFO("secret " << i << ": address " << std::hex << a);
    CHECK(a == d::pch_heap_address_for(secret));
    CHECK(a % gib == 0);
    CHECK(a >= range.first);
    CHECK(a < range.first + range.slots * gib);
    seen.insert(a);
    void* want = reinterpret_cast<void*>(a);
    void* got = ::mmap(want, heap, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(got == want);
    if (got != MAP_FAILED) ::munmap(got, heap);
  }
  CHECK(seen.size() >= 14);  // spread over the range, not one place for every machine
}

TEST_CASE(
    "stored pch: a PCH one Compiler made is used by a fresh Compiler and by another process, with the same result",
    "[sandbox][pch]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  const sb::CompileJob first = job(kernel("scale_a", "2.0f"));
  const sb::CompileJob second = job(kernel("scale_b", "5.0f"));
  {
    sb::Compiler maker(with_store(store));
    const sb::CompileResult r = maker.compile(first);
    REQUIRE(r.ok());
    CHECK(r.pch == sb::PchUse::hit);  // made from the prefix, then used by this compile
    const sb::StoredPchStats s = maker.stored_pch_stats();
    REQUIRE(s.in_use);
    CHECK(s.created == 1);
    CHECK(s.heap_address != 0);
    same_result(r, without_pch(first));
  }
  REQUIRE(pch_files(store).size() == 1);
  {
    sb::Compiler fresh(with_store(store));  // a new launcher; every compile child is a new process
    const sb::CompileResult r = fresh.compile(second);
    CHECK(r.pch == sb::PchUse::hit);
    CHECK(fresh.stored_pch_stats().found == 1);
    CHECK(fresh.stored_pch_stats().created == 0);
    same_result(r, without_pch(second));
  }
  {
    // The first compile of a fresh pooled compiler, as in a new serve or fleet worker.
    sb::Compiler pool(with_store(store, sb::Isolation::pooled));
    const sb::CompileResult r = pool.compile(second);
    CHECK(r.pch == sb::PchUse::hit);
    CHECK(pool.stored_pch_stats().created == 0);
    same_result(r, without_pch(second));
  }
  // Another program, exec'd afresh with its own address-space layout: the CLI.
  dir.write("k.cu", second.source);
  const leap_test::CliRun run = leap_test::run_cli(
      "compile --json --no-cache --pch-dir '" + store.string() + "' '" + (dir.path / "k.cu").string() + "'", dir);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(run.out);
  CHECK(j.at("status") == "ok");
  CHECK(j.at("pch") == "hit");
  CHECK(pch_files(store).size() == 1);  // nothing made again
}

TEST_CASE("stored pch: an edited, replaced or foreign PCH is refused and the compile still succeeds",
          "[sandbox][pch]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  const sb::CompileJob j = job(kernel("scale_c", "3.0f"));
  const sb::CompileResult reference = without_pch(j);
  REQUIRE(reference.ok());
  sb::Compiler compiler(with_store(store));
  REQUIRE(compiler.compile(j).pch == sb::PchUse::hit);
  REQUIRE(pch_files(store).size() == 1);
  const fs::path file = pch_files(store).front();

  auto compile_after = [&](const char* what) {
    INFO(what);
    const sb::StoredPchStats before = compiler.stored_pch_stats();
    const sb::CompileResult r = compiler.compile(j);
    const sb::StoredPchStats after = compiler.stored_pch_stats();
    CHECK(after.refused == before.refused + 1);  // the record did not match: removed...
    CHECK(after.created == before.created + 1);  // ...and a good one made in its place
    CHECK(r.pch == sb::PchUse::hit);
    same_result(r, reference);
  };

  SECTION("a byte changed in place") {
    const int fd = ::open(file.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, "X", 1, 4096) == 1);
    ::close(fd);
    compile_after("edited");
  }
  SECTION("the file replaced by a copy of itself (another inode: a planted file)") {
    fs::copy_file(file, dir.path / "copy.pch");
    fs::rename(dir.path / "copy.pch", file);
    compile_after("replaced");
  }
  SECTION("a record from another store (another MAC key)") {
    leap_test::TempDir other;
    sb::Compiler foreign(with_store(other.path / "pch"));
    REQUIRE(foreign.compile(j).ok());
    const fs::path record = store / "records" / (file.stem().string() + ".rec");
    for (const auto& e : fs::directory_iterator(other.path / "pch" / "records")) {
      fs::copy_file(e.path(), record, fs::copy_options::overwrite_existing);
    }
    compile_after("foreign record");
  }
  SECTION("truncated") {
    fs::resize_file(file, fs::file_size(file) / 2);
    compile_after("truncated");
  }
}

TEST_CASE("stored pch: a store refuses what does not match its record, and its budget evicts the least used",
          "[sandbox][pch]") {
  leap_test::TempDir dir;
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  sb::detail::PchStore store(dir.path / "pch", 10000);
  auto put = [&](const std::string& key, std::size_t bytes) {
    const fs::path in = store.make_incoming();
    std::ofstream(in / "f.pch", std::ios::binary) << std::string(bytes, 'p');
    const std::optional<std::string> path = store.adopt(key, (in / "f.pch").string());
    store.remove_incoming(in.string());
    return path;
  };
  REQUIRE(put(a, 4000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct mtimes
  REQUIRE(put(b, 4000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(store.find(a));  // used: a is now more recent than b
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(put(c, 4000));  // 12000 > 10000: the least used goes first (b: made once; a: made and used again)
  CHECK(store.evictions() == 1);
  CHECK(store.find(a));
  CHECK_FALSE(store.find(b));
  CHECK(store.find(c));
  CHECK(store.stored_bytes() == 8000);
  CHECK_FALSE(put(std::string(64, 'd'), 20000));  // larger than the whole budget: not kept
  CHECK(store.stored_bytes() == 8000);

  // A second store object on the same directory (another process) reads the same records.
  sb::detail::PchStore again(dir.path / "pch", 10000);
  CHECK(again.find(a));
  // A file with no record, or a record for another key, is refused.
  bool refused = false;
  fs::copy_file(dir.path / "pch" / "records" / (a + ".rec"),
                dir.path / "pch" / "records" / (std::string(64, 'e') + ".rec"));
  fs::copy_file(dir.path / "pch" / "files" / (a + ".pch"),
                dir.path / "pch" / "files" / (std::string(64, 'e') + ".pch"));
  CHECK_FALSE(again.find(std::string(64, 'e'), &refused));
  CHECK(refused);
  CHECK_FALSE(fs::exists(dir.path / "pch" / "files" / (std::string(64, 'e') + ".pch")));  // removed
  CHECK_FALSE(again.find("../" + a));                                                     // not a key
}

TEST_CASE("stored pch: what follows a candidate's #include lines never reaches a stored PCH", "[sandbox][pch]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  // The hostile candidate goes first, so its compile is the one that makes the PCH. Had its macros
  // or its function reached the PCH, the next candidate would fail (#error, a redefinition) or change.
  const std::string hostile = std::string(k_prefix) +
                              "#define LEAP_PLANTED 1\n"
                              "#define __half2float(x) 0.0f\n"
                              "__device__ int leap_planted() { return 7; }\n"
                              "extern \"C\" __global__ void evil(int* y) { *y = leap_planted(); }\n";
  const std::string victim = kernel("victim", "4.0f") +
                             "#ifdef LEAP_PLANTED\n#error a candidate's macro reached the PCH\n#endif\n"
                             "__device__ int leap_planted() { return 1; }\n";
  sb::Compiler compiler(with_store(store));
  const sb::CompileResult h = compiler.compile(job(hostile));
  REQUIRE(h.ok());
  CHECK(h.pch == sb::PchUse::hit);
  REQUIRE(compiler.stored_pch_stats().created == 1);
  const sb::CompileResult v = compiler.compile(job(victim));
  CHECK(v.pch == sb::PchUse::hit);
  CHECK(compiler.stored_pch_stats().created == 1);  // the same PCH
  same_result(v, without_pch(job(victim)));
  REQUIRE(v.ok());

  // Options are part of the key: a candidate's -D makes another PCH, never changes this one.
  sb::CompileJob defined = job(victim);
  defined.options.defines.push_back({"LEAP_OTHER", "1"});
  const sb::CompileResult d = compiler.compile(defined);
  CHECK(d.pch == sb::PchUse::hit);
  CHECK(compiler.stored_pch_stats().created == 2);
  same_result(d, without_pch(defined));
}

TEST_CASE("stored pch: the leading includes are read as the preprocessor reads them", "[sandbox][pch]") {
  using Names = std::vector<std::string>;
  auto names = [](std::string_view source, bool guarded = true) {
    return sb::detail::leading_includes(source, [&](const std::string&) { return guarded; }).names;
  };
  CHECK(names("#include <cuda_fp16.h>\n#include <cub/cub.cuh>\nint x;\n") == Names{"cuda_fp16.h", "cub/cub.cuh"});
  CHECK(names("#include <a.h>\n#define X\n#include <b.h>\n") == Names{"a.h"});  // anything else ends it
  CHECK(names("#include <b.h>\n#include <a.h>\n") == Names{"b.h", "a.h"});      // in their order
  // Comments, wherever the preprocessor sees one, and blank lines are nothing.
  CHECK(names("/*\n * Copyright (c) 2024 Someone\n * SPDX-License-Identifier: MIT\n */\n\n#include <a.h>\n") ==
        Names{"a.h"});
  CHECK(names("// a comment\n#include <a.h>\n") == Names{"a.h"});
  CHECK(names("#include <a.h> // x\n") == Names{"a.h"});
  CHECK(names("#  include <a.h>\n\t#include<b.h>\n") == Names{"a.h", "b.h"});
  CHECK(names("# /* c */ include /* d */ <a.h> /* e\n */\n#include <b.h>\n") == Names{"a.h", "b.h"});
  CHECK(names("/* x\n*/#include <a.h>\n") == Names{"a.h"});
  // What is not a comment, or not certainly one, ends the leading part there.
  CHECK(names("#include <a.h>\n// a comment continued \\\n#include <b.h>\n") == Names{"a.h"});
  CHECK(names("/* closed here: *\\\n/ #include <a.h> */\n").empty());
  CHECK(names("?\?=include <a.h>\n").empty());
  CHECK(names("// what?\?/\n#include <a.h>\n").empty());
  CHECK(names("%:include <a.h>\n").empty());
  CHECK(names("/* never closed\n#include <a.h>\n").empty());
  CHECK(names(std::string_view("// \0\n#include <a.h>\n", 21)).empty());
  CHECK(names("int x;\n#include <a.h>\n").empty());
  CHECK(names("#include \"task.h\"\n").empty());
  CHECK(names("#include_next <a.h>\n").empty());
  CHECK(names("#include <a.h> extra\n").empty());
  CHECK(names("#include <../../etc/passwd>\n").empty());
  CHECK(names("#include </etc/passwd>\n").empty());
  CHECK(names("#include <a/./b.h>\n").empty());
  CHECK(names("#include <a.h>").empty());         // a line without its newline
  CHECK(names("#include <a\\\nb.h>\n").empty());  // a spliced line

  // A repeat of a guarded header is left out, and blanked line for line in the source a PCH compile
  // gets; a repeat of any other header stays.
  const std::string repeated = "#include <a.h>\n#include <b.h>\n#include <a.h> /* x\n y */\nint z;\n";
  const sb::detail::LeadingIncludes guarded =
      sb::detail::leading_includes(repeated, [](const std::string& n) { return n == "a.h"; });
  CHECK(guarded.names == Names{"a.h", "b.h"});
  CHECK(guarded.pch_source == "#include <a.h>\n#include <b.h>\n\n\nint z;\n");
  const sb::detail::LeadingIncludes unguarded =
      sb::detail::leading_includes(repeated, [](const std::string&) { return false; });
  CHECK(unguarded.names == Names{"a.h", "b.h", "a.h"});
  CHECK(unguarded.pch_source.empty());
  CHECK(sb::detail::pch_prefix_text(guarded.names) == "#include <a.h>\n#include <b.h>\n");
}

TEST_CASE("stored pch: a header counts as guarded only when all of it is inside its guard", "[sandbox][pch]") {
  using sb::detail::has_include_guard;
  CHECK(has_include_guard("#pragma once\nint x;\n"));
  CHECK(has_include_guard("// licence\n#ifndef A_H\n#define A_H\nint x;\n#endif // A_H\n"));
  CHECK(has_include_guard("#if !defined(A_H)\n#define A_H\n#endif\n"));
  CHECK(has_include_guard("#if !defined A_H\n# define A_H 1\n#endif\n\n"));
  CHECK(has_include_guard("#ifndef A_H\n#define A_H\n#if X\n#else\n#endif\n#endif\n"));  // an inner #else
  CHECK(has_include_guard("#ifndef A_H\n#define A_H\n/* #endif */\nint x = 1'000;\n#endif\n"));
  CHECK(has_include_guard("#ifndef A_H\n#define A_H\n#define M \\\n#endif\n#endif\n"));  // spliced: not a directive
  CHECK_FALSE(has_include_guard("#ifndef A_H\n#define A_H\n#endif\nint y;\n"));          // something after it
  CHECK_FALSE(has_include_guard("int y;\n#ifndef A_H\n#define A_H\n#endif\n"));          // something before it
  CHECK_FALSE(has_include_guard("#ifndef A_H\n#define B_H\n#endif\n"));                  // another macro
  CHECK_FALSE(has_include_guard("#ifndef A_H\n#define A_H\n#else\nint twice;\n#endif\n"));
  CHECK_FALSE(has_include_guard("#ifndef A_H\n#define A_H\nauto s = R\"(\n#endif\n)\";\n#endif\n"));
  CHECK_FALSE(has_include_guard("#undef assert\n#define assert(e) ((void)0)\n"));  // meant to be included again
  CHECK_FALSE(has_include_guard("#ifndef A_H\n#define A_H\n"));                    // unterminated
  const std::string toolkit = sb::default_cuda_include_dir();
  CHECK(has_include_guard(leap_test::read_file(toolkit + "/cuda_fp16.h")));
  CHECK(has_include_guard(leap_test::read_file(toolkit + "/cooperative_groups.h")));
}

// The licence block of NVIDIA's samples, then a kernel that includes cooperative groups: a real file.
std::string with_licence(const std::string& source) {
  return "/* Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.\n"
         " *\n"
         " * Redistribution and use in source and binary forms, with or without\n"
         " * modification, are permitted provided that the following conditions\n"
         " * are met: ...\n"
         " */\n"
         "\n"
         "// A one-line comment before the includes, as a model often writes.\n" +
         source;
}

TEST_CASE("stored pch: a source with a licence header gets the same stored PCH as the bare one", "[sandbox][pch]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  const sb::CompileJob bare = job(kernel("bare", "2.0f"));
  const sb::CompileJob licensed = job(with_licence(kernel("licensed", "3.0f")));
  sb::Compiler compiler(with_store(store));
  REQUIRE(compiler.compile(bare).pch == sb::PchUse::hit);
  REQUIRE(compiler.stored_pch_stats().created == 1);
  const sb::CompileResult r = compiler.compile(licensed);
  INFO(r.log);
  CHECK(r.pch == sb::PchUse::hit);
  CHECK(compiler.stored_pch_stats().created == 1);  // the bare source's
  CHECK(compiler.stored_pch_stats().found == 1);
  same_result(r, without_pch(licensed));
  CHECK(pch_files(store).size() == 1);
}

TEST_CASE("stored pch: duplicated-include variants make one PCH, the bare source's, and compile as without it",
          "[sandbox][pch]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  sb::Compiler compiler(with_store(store));
  REQUIRE(compiler.compile(job(kernel("bare", "2.0f"))).pch == sb::PchUse::hit);
  const std::string again = "#include <cuda_fp16.h>\n";
  const std::vector<std::string> variants = {
      again + kernel("twice", "2.0f"),
      again + again + kernel("three_times", "2.0f"),
      "#include <cuda_fp16.h> /* again,\n over two lines */\n" + kernel("commented", "2.0f"),
      with_licence(again + again + kernel("licensed_three_times", "2.0f")),
  };
  for (const std::string& v : variants) {
    INFO(v.substr(0, 120));
    const sb::CompileResult r = compiler.compile(job(v));
    INFO(r.log);
    CHECK(r.pch == sb::PchUse::hit);
    same_result(r, without_pch(job(v)));  // diagnostics' line numbers included: the repeats were blanked, not cut
  }
  CHECK(compiler.stored_pch_stats().created == 1);
  CHECK(pch_files(store).size() == 1);
  // A line number after the leading part is the source's own, with the PCH as without it.
  const std::string wrong = again + again + kernel("wrong", "2.0f") + "__device__ int oops() { return undeclared; }\n";
  const sb::CompileResult w = compiler.compile(job(wrong));
  CHECK(w.log.find("kernel.cu(8)") != std::string::npos);
  same_result(w, without_pch(job(wrong)));
}

TEST_CASE("stored pch: the CPU of making a PCH is charged to the compile that needed it, within its limit",
          "[sandbox][pch][limits]") {
  require_confinement();
  leap_test::TempDir dir;
  const fs::path store = dir.path / "pch";
  // What making this PCH costs on this machine, learnt in a store of its own: the limit below is a
  // fraction of it, so the test holds on a fast CPU as on a slow one.
  double making = 0;
  {
    sb::Compiler probe(with_store(dir.path / "probe"));
    REQUIRE(probe.compile(job(kernel("probe", "2.0f"))).ok());
    REQUIRE(probe.stored_pch_stats().created == 1);
    making = probe.stored_pch_stats().creation_cpu_seconds;
  }
  INFO("making the PCH took " << making << " s of CPU");
  REQUIRE(making >= 0.008);
  const auto limit = std::chrono::milliseconds(static_cast<long>(making * 1000 / 4));
  sb::Compiler compiler(with_store(store));
  // A limit that cannot pay for the PCH: the compile ends at its CPU limit, and no PCH is kept.
  sb::CompileJob poor = job(kernel("poor", "2.0f"));
  poor.options.timeout = limit;
  const sb::CompileResult p = compiler.compile(poor);
  INFO(p.log);
  CHECK(p.status == sb::CompileStatus::timeout);
  CHECK(p.limit == sb::CompileLimit::cpu_time);
  CHECK(p.log.find("making the precompiled header of its #include lines used") != std::string::npos);
  CHECK(p.cpu_seconds >= 0.9 * std::chrono::duration<double>(limit).count());
  CHECK(compiler.stored_pch_stats().created == 0);
  CHECK(pch_files(store).empty());

  // One that can: its cpu_seconds holds the making; the next candidate, which finds the PCH, pays nothing for it.
  const double before = compiler.stored_pch_stats().creation_cpu_seconds;
  const sb::CompileResult maker = compiler.compile(job(kernel("maker", "2.0f")));
  REQUIRE(maker.ok());
  const double made = compiler.stored_pch_stats().creation_cpu_seconds - before;
  CHECK(compiler.stored_pch_stats().created == 1);
  CHECK(made > making / 2);
  CHECK(maker.cpu_seconds >= made);
  const sb::CompileResult user = compiler.compile(job(kernel("user", "2.0f")));
  REQUIRE(user.ok());
  CHECK(user.pch == sb::PchUse::hit);
  CHECK(user.cpu_seconds < maker.cpu_seconds - made / 2);
}

TEST_CASE("stored pch: PCHs made once each do not push out one that many compiles use", "[sandbox][pch]") {
  leap_test::TempDir dir;
  sb::detail::PchStore store(dir.path / "pch", 10000);
  auto put = [&](const std::string& key) {
    const fs::path in = store.make_incoming();
    std::ofstream(in / "f.pch", std::ios::binary) << std::string(4000, 'p');
    const std::optional<std::string> path = store.adopt(key, (in / "f.pch").string());
    store.remove_incoming(in.string());
    return path;
  };
  const std::string honest(64, 'a');
  REQUIRE(put(honest));
  for (int i = 0; i < 5; ++i) REQUIRE(store.find(honest));  // honest traffic uses it
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Then a stream of variants, each made once (and so used once) and newer than every use of the honest one.
  for (char c : {'b', 'c', 'd', 'e', 'f', '0', '1'}) {
    REQUIRE(put(std::string(64, c)));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(store.find(honest));
  CHECK(store.use_score(honest) > 5.9);
  CHECK(store.stored_bytes() <= 10000);
  CHECK(store.evictions() == 6);
}
