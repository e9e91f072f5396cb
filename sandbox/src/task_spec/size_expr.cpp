// SPDX-License-Identifier: Apache-2.0
#include "task_spec/size_expr.hpp"

#include <cctype>
#include <limits>

#include "common/shortened.hpp"

namespace leap::sandbox {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const Sizes& sizes) : text_(text), sizes_(sizes) {}

  std::int64_t parse() {
    if (text_.size() > k_max_size_expr_length) {
      throw std::invalid_argument("expression of " + std::to_string(text_.size()) +
                                  " characters: longer than the limit of " + std::to_string(k_max_size_expr_length));
    }
    const std::int64_t v = expr();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    // A long expression is shown by its start: the reason matters, not a page of parentheses.
    const std::string shown = detail::shortened(text_, 80, 60);
    throw std::invalid_argument("expression \"" + shown + "\": " + why);
  }
  // Counts nesting (parentheses, calls, unary minus) so a hostile expression cannot exhaust the stack.
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.depth_ > k_max_size_expr_depth) {
        p.fail("nested deeper than the limit of " + std::to_string(k_max_size_expr_depth) + " levels");
      }
    }
    ~Nest() { --p.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
  };
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail("overflow");
    return r;
  }
  std::int64_t sub(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) fail("overflow");
    return r;
  }
  std::int64_t mul(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail("overflow");
    return r;
  }
  std::int64_t expr() {
    const Nest nest(*this);
    std::int64_t v = term();
    for (;;) {
      if (eat('+')) v = add(v, term());
      else if (eat('-')) v = sub(v, term());
      else return v;
    }
  }
  std::int64_t term() {
    std::int64_t v = unary();
    for (;;) {
      if (eat('*')) {
        v = mul(v, unary());
      } else if (eat('/')) {
        const std::int64_t d = unary();
        if (d == 0) fail("division by zero");
        if (d == -1) v = sub(0, v);
        else v = v / d;
      } else if (eat('%')) {
        const std::int64_t d = unary();
        if (d == 0) fail("division by zero");
        v = d == -1 ? 0 : v % d;
      } else {
        return v;
      }
    }
  }
  std::int64_t unary() {
    if (eat('-')) {
      const Nest nest(*this);
      return sub(0, unary());
    }
    return primary();
  }
  std::int64_t primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const std::int64_t v = expr();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      std::int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
        v = add(mul(v, 10), text_[pos_++] - '0');
      }
      if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '.')) {
        fail("not an integer near '" + std::string(text_.substr(pos_ - 1, 3)) + "'");
      }
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_'))
        ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      if (eat('(')) return call(name);
      const auto it = sizes_.find(name);
      if (it == sizes_.end()) fail("unknown size '" + std::string(name) + "'");
      return it->second;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
  std::int64_t call(std::string_view fn) {
    std::int64_t args[2] = {0, 0};
    int n = 0;
    do {
      if (n == 2) fail("too many arguments to " + std::string(fn));
      args[n++] = expr();
    } while (eat(','));
    if (!eat(')')) fail("missing ')' after the arguments of " + std::string(fn));
    const auto want = [&](int k) {
      if (n != k) fail(std::string(fn) + " takes " + std::to_string(k) + " argument(s)");
    };
    if (fn == "ceil_div") {
      want(2);
      if (args[1] <= 0) fail("ceil_div by a non-positive number");
      if (args[0] < 0) return args[0] / args[1];
      return args[0] / args[1] + (args[0] % args[1] != 0 ? 1 : 0);
    }
    if (fn == "min") {
      want(2);
      return args[0] < args[1] ? args[0] : args[1];
    }
    if (fn == "max") {
      want(2);
      return args[0] > args[1] ? args[0] : args[1];
    }
    if (fn == "pow2_ceil") {
      want(1);
      std::int64_t p = 1;
      while (p < args[0]) {
        if (p > (std::numeric_limits<std::int64_t>::max() >> 1)) fail("overflow");
        p <<= 1;
      }
      return p;
    }
    fail("unknown function '" + std::string(fn) + "'");
  }

  std::string_view text_;
  const Sizes& sizes_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::int64_t eval_size_expr(std::string_view expr, const Sizes& sizes) { return Parser(expr, sizes).parse(); }

std::string sizes_text(const Sizes& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return "{" + out + "}";
}

}  // namespace leap::sandbox
