// SPDX-License-Identifier: Apache-2.0
// Precompiled headers kept on disk (CompilerConfig::pch_directory): a PCH one Compiler made is used by
// a fresh one and by another process (the CLI), with the same bytes, log and status as a compile
// without it; a PCH file edited, replaced or recorded by another store is refused and the compile
// still succeeds; the budget evicts the least recently used; what follows a candidate's #include lines
// never reaches a stored PCH; and only exact `#include <...>` lines make a prefix.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"

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

TEST_CASE("stored pch: a store refuses what does not match its record, and its budget evicts the least recently used",
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
  REQUIRE(put(c, 4000));  // 12000 > 10000: down to 7500, the least recently used (b) first
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

TEST_CASE("stored pch: only exact #include <...> lines at the top make a prefix", "[sandbox][pch]") {
  using sb::detail::trusted_header_prefix;
  CHECK(trusted_header_prefix("#include <cuda_fp16.h>\n#include <cub/cub.cuh>\nint x;\n") ==
        "#include <cuda_fp16.h>\n#include <cub/cub.cuh>\n");
  CHECK(trusted_header_prefix("#include <a.h>\n#define X\n#include <b.h>\n") == "#include <a.h>\n");
  CHECK(trusted_header_prefix("// comment\n#include <a.h>\n").empty());
  CHECK(trusted_header_prefix("#include \"task.h\"\n").empty());
  CHECK(trusted_header_prefix("#include <../../etc/passwd>\n").empty());
  CHECK(trusted_header_prefix("#include </etc/passwd>\n").empty());
  CHECK(trusted_header_prefix("#include <a/./b.h>\n").empty());
  CHECK(trusted_header_prefix("#include <a.h> // x\n").empty());
  CHECK(trusted_header_prefix("#  include <a.h>\n").empty());
  CHECK(trusted_header_prefix("#include <a.h>").empty());         // a line without its newline
  CHECK(trusted_header_prefix("#include <a\\\nb.h>\n").empty());  // a spliced line
}
