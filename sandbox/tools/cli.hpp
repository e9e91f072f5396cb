// SPDX-License-Identifier: Apache-2.0
// What the leap-sandbox commands share: the command table entry, usage errors, option values and
// the default cache. Each command lives in its own cmd_<name>.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <leap/sandbox/evaluator.hpp>

namespace leap_cli {

using Arguments = std::vector<std::string>;

struct Command {
  std::string_view name;
  std::string_view usage;  // the synopsis line(s), without the program name
  std::string_view help;   // what it does and its options, indented for --help
  int (*run)(const Arguments& args);
};

extern const Command info_command;
extern const Command compile_command;
extern const Command tasks_command;
extern const Command eval_command;
extern const Command serve_command;
extern const Command fleet_member_command;  // the fleet member with hiredis; without it, a stub that says so

// Prints "leap-sandbox: <what>" and a pointer to --help, exits 2 (bad usage).
[[noreturn]] void usage_error(const std::string& what);

// The value after option args[i]; advances i. A missing value is a usage error.
const std::string& option_value(const Arguments& args, std::size_t& i);

// An integer in [lo, hi], or a usage error that names the option and the range.
long parse_number(const std::string& option, const std::string& text, long lo, long hi);

// $LEAP_SANDBOX_CACHE_DIR, else $XDG_CACHE_HOME/leap-sandbox, else ~/.cache/leap-sandbox; empty if
// none of them is set.
std::string default_cache_dir();
// Where the precompiled headers are kept on disk, shared by compile, eval, serve and the fleet member:
// "pch" in the default cache directory (its own MAC key and budget); nullopt when there is none.
std::optional<std::string> default_pch_dir();

// The evaluator that eval and serve use: the default cache (its disk budget cache_max_mb, else the
// library's default), the given arch, seed and timing switch; `unconfined` compiles without the OS
// confinement (see --unconfined).
leap::sandbox::EvaluatorConfig evaluator_config(const std::string& arch, std::optional<std::uint64_t> seed, bool time,
                                                bool unconfined = false,
                                                std::optional<std::size_t> cache_max_mb = std::nullopt);

// Says on stderr, once, that compiles run without the OS confinement and why that is dangerous.
void warn_unconfined();

}  // namespace leap_cli
