// SPDX-License-Identifier: Apache-2.0
// The module compiler's source rewrite on small preprocessed sources: which kernels it lists, how it
// rewrites __shared__ declarations, that lines keep their numbers, and what it refuses.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "source_rewrite.hpp"

namespace leap::cpu_runtime::test {
namespace {

using detail::rewrite_module_source;

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST_CASE("the rewrite lists the kernels at namespace scope and leaves templates and members out",
          "[cpu_runtime][rewrite]") {
  const std::string src = R"(# 1 "k.cu"
extern "C" __leap_cpu_global__ void a(int* p) {}
extern "C" { __leap_cpu_global__ void b(int* p); __leap_cpu_global__ void c() {} }
namespace outer { namespace inner { __leap_cpu_global__ void d(float x) { auto f = [] { return 1; }; } } }
namespace { __leap_cpu_global__ void e() {} }
template <int N> __leap_cpu_global__ void f() {}
__leap_cpu_global__ void __attribute__((noinline)) g(const char* s = "}{;") {}
struct S { static __leap_cpu_global__ void h(); };
extern "C" __leap_cpu_global__ void b(int* p) {}
)";
  const auto r = rewrite_module_source(src);
  REQUIRE(r.ok);
  CHECK(r.kernels == std::vector<std::string>{"a", "b", "c", "outer::inner::d", "e", "g"});
  CHECK(r.text.find("__leap_cpu_global__") == std::string::npos);
  CHECK_THAT(r.text, Catch::Contains("kernel_entry<&::outer::inner::d>(\"outer::inner::d\")") &&
                         Catch::Contains("leap_cpu_module_attach"));
}

TEST_CASE("the rewrite turns each __shared__ declaration into a reference into the block's arena, on its lines",
          "[cpu_runtime][rewrite][shared]") {
  const std::string src = R"(# 1 "k.cu"
__leap_cpu_global__ void k() {
  __leap_cpu_shared__ float partial[256];
  __leap_cpu_shared__ float row_max,
      row_sum;
  static __leap_cpu_shared__ volatile int flags[2][4];
  extern __leap_cpu_shared__ __attribute__((aligned(16))) unsigned char raw[];
  __leap_cpu_shared__ Pair<int, 2> pairs[8];
  case_label: __leap_cpu_shared__ int after_label;
}
)";
  const auto r = rewrite_module_source(src);
  REQUIRE(r.ok);
  CHECK(r.text.find("__leap_cpu_shared__") == std::string::npos);
  CHECK_THAT(r.text, Catch::Contains("typedef float leap_cpu_shared_partial_1 [ 256 ];") &&
                         Catch::Contains("leap_cpu_shared_partial_1& partial = leap_cpu_slot_partial_1.get<"));
  CHECK_THAT(r.text, Catch::Contains("typedef float leap_cpu_shared_row_max_2 , leap_cpu_shared_row_sum_2;"));
  CHECK_THAT(r.text, Catch::Contains("typedef volatile int leap_cpu_shared_flags_3 [ 2 ] [ 4 ];"));
  CHECK_THAT(r.text, Catch::Contains("leap_cpu_shared_raw_4& raw = ::leap_cpu::detail::dynamic_shared<"));
  CHECK_THAT(r.text, Catch::Contains("typedef Pair < int , 2 > leap_cpu_shared_pairs_5 [ 8 ];"));
  CHECK_THAT(r.text, Catch::Contains("case_label: typedef int leap_cpu_shared_after_label_6;"));
  // The footer starts at its own line marker; before it, the lines are the source's.
  const std::string body = r.text.substr(0, r.text.find("# 1 \"<leap_cpu module table>\""));
  CHECK(lines(body) == lines(src) + 1);
  CHECK(lines(body.substr(0, body.find("leap_cpu_shared_flags_3"))) == lines(src.substr(0, src.find("flags[2]"))));
  CHECK(lines(body.substr(0, body.find("leap_cpu_shared_raw_4"))) == lines(src.substr(0, src.find("raw[]"))));
}

TEST_CASE("the rewrite refuses a __shared__ variable at namespace scope or with an initialiser",
          "[cpu_runtime][rewrite][shared]") {
  const auto global = rewrite_module_source("# 1 \"g.cu\"\n\n__leap_cpu_shared__ float table[4];\n");
  CHECK_FALSE(global.ok);
  CHECK_THAT(global.error, Catch::Contains("g.cu:2: a __shared__ variable at namespace scope"));
  const auto init = rewrite_module_source("# 7 \"i.cu\"\nvoid f() {\n  __leap_cpu_shared__ int x = 0;\n}\n");
  CHECK_FALSE(init.ok);
  CHECK_THAT(init.error, Catch::Contains("i.cu:8: a __shared__ variable with an initialiser"));
}

}  // namespace
}  // namespace leap::cpu_runtime::test
