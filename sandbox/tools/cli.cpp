// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <leap/sandbox/compile_cache.hpp>

namespace leap_cli {

void usage_error(const std::string& what) {
  std::cerr << "leap-sandbox: " << what << "\n(try leap-sandbox --help)\n";
  std::exit(2);
}

const std::string& option_value(const Arguments& args, std::size_t& i) {
  if (i + 1 >= args.size()) usage_error(args[i] + " needs a value");
  return args[++i];
}

long parse_number(const std::string& option, const std::string& text, long lo, long hi) {
  long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi) {
    usage_error(option + " expects a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + text +
                "'");
  }
  return v;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("LEAP_SANDBOX_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return std::string(x) + "/leap-sandbox";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/leap-sandbox";
  return {};
}

std::optional<std::string> default_pch_dir() {
  const std::string dir = default_cache_dir();
  if (dir.empty()) return std::nullopt;
  return dir + "/pch";
}

void warn_unconfined() {
  static bool said = false;
  if (said) return;
  said = true;
  std::cerr << "leap-sandbox: --unconfined: compiles run without Landlock, seccomp and the private root; a candidate "
               "can read any file this process can. Use it for trusted source only.\n";
}

leap::sandbox::EvaluatorConfig evaluator_config(const std::string& arch, std::optional<std::uint64_t> seed, bool time,
                                                bool unconfined, std::optional<std::size_t> cache_max_mb) {
  leap::sandbox::EvaluatorConfig c;
  c.compiler.unconfined = unconfined;
  if (unconfined) warn_unconfined();
  c.arch = arch;
  c.seed = seed;
  c.time = time;
  leap::sandbox::CacheOptions cache;
  if (const std::string dir = default_cache_dir(); !dir.empty()) cache.directory = dir;
  if (cache_max_mb) cache.disk_bytes = *cache_max_mb << 20;
  c.compiler.cache = std::make_shared<leap::sandbox::CompileCache>(cache);
  c.compiler.pch_directory = default_pch_dir();
  return c;
}

}  // namespace leap_cli
