// SPDX-License-Identifier: Apache-2.0
// The real-kernel corpus (tests/sandbox/corpus): device-only kernels in the styles real code uses,
// and sources with host code, each with the status it must get. A file states its expectations in
// comments:
//   // expect-status: ok | error | refused | timeout
//   // expect-kernels: name ...        the module's kernels, in order (empty: none)
//   // expect-log: text                the compile log contains it (repeatable)
//   // expect-advice: text             the no-kernel advice contains it (repeatable)
//   // needs: sibling-includes         (a note) toolkit headers resolve their own "..." includes, which
//                                     the confined compile child allows (<mma.h> needs "mma.hpp")
// check_with_nvcc.sh holds every "ok" file to nvcc -cubin as well.
#include <catch2/catch.hpp>
#include <leap/sandbox/compiler.hpp>
#include "compile/kernel_diagnostics.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace leap::sandbox;

namespace {

struct CorpusEntry {
  std::string file;
  std::string source;
  std::string status;
  bool kernels_given = false;
  std::vector<std::string> kernels;
  std::vector<std::string> log_needles;
  std::vector<std::string> advice_needles;
};

std::vector<CorpusEntry> load_corpus() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(LEAP_CORPUS_DIR)) {
    if (e.path().extension() == ".cu") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<CorpusEntry> corpus;
  for (const auto& f : files) {
    CorpusEntry c;
    c.file = f.filename().string();
    c.source = leap_test::read_file(f);
    std::istringstream lines(c.source);
    std::string line;
    auto value = [&](std::string_view key) { return line.substr(key.size()); };
    while (std::getline(lines, line)) {
      if (line.starts_with("// expect-status: ")) c.status = value("// expect-status: ");
      else if (line.starts_with("// expect-kernels:")) {
        c.kernels_given = true;
        std::istringstream names(value("// expect-kernels:"));
        for (std::string n; names >> n;) c.kernels.push_back(n);
      } else if (line.starts_with("// expect-log: ")) c.log_needles.push_back(value("// expect-log: "));
      else if (line.starts_with("// expect-advice: ")) c.advice_needles.push_back(value("// expect-advice: "));
    }
    corpus.push_back(std::move(c));
  }
  return corpus;
}

CompileJob job_of(const std::string& source) {
  CompileJob j;
  j.source = source;
  j.options.timeout = std::chrono::seconds(180);  // CUB kernels take several seconds on a busy 2-core machine
  return j;
}

}  // namespace

TEST_CASE("corpus: every kernel gets the status it must, with its kernels, log and advice", "[sandbox][corpus]") {
  const std::vector<CorpusEntry> corpus = load_corpus();
  REQUIRE(corpus.size() >= 30);
  Compiler compiler(leap_test::config(Isolation::process, 2));

  std::vector<CompileJob> jobs;
  for (const CorpusEntry& c : corpus) jobs.push_back(job_of(c.source));
  const std::vector<CompileResult> results = compiler.compile_batch(jobs);

  std::size_t device_only_ok = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const CorpusEntry& c = corpus[i];
    const CompileResult& r = results[i];
    INFO(c.file << "\n" << r.log);
    REQUIRE_FALSE(c.status.empty());
    CHECK(to_string(r.status) == c.status);
    for (const std::string& needle : c.log_needles) CHECK(r.log.find(needle) != std::string::npos);
    if (r.ok()) {
      REQUIRE(r.kernels.has_value());
      std::vector<std::string> kernels = *r.kernels;
      if (c.kernels_given) {  // the CUBIN's symbol table order is the linker's: compare as sets
        std::vector<std::string> expected = c.kernels;
        std::sort(kernels.begin(), kernels.end());
        std::sort(expected.begin(), expected.end());
        CHECK(kernels == expected);
      }
      const std::string advice = missing_kernel_advice(c.source, "kernel.cu", kernels);
      for (const std::string& needle : c.advice_needles) CHECK(advice.find(needle) != std::string::npos);
      if (c.advice_needles.empty()) CHECK(advice.empty());
      ++device_only_ok;
    }
  }
  WARN("corpus: " << device_only_ok << " device-only kernels compile, of " << corpus.size() << " sources");
}
