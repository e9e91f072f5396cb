// SPDX-License-Identifier: Apache-2.0
// leap-sandbox: the sandbox from the command line. One file per command (cmd_<name>.cpp); this one
// only dispatches and prints the help.
#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include <leap/sandbox/compiler.hpp>

#include "cli.hpp"

namespace {

constexpr std::array<const leap_cli::Command*, 6> k_commands = {
    &leap_cli::info_command, &leap_cli::compile_command, &leap_cli::tasks_command,
    &leap_cli::eval_command, &leap_cli::serve_command,   &leap_cli::fleet_member_command};

// Old spellings of a command, still accepted for one release with a warning on stderr. `worker` was the
// fleet member's command in 0.1, when "worker" also named the GPU evaluation process and others.
struct DeprecatedCommand {
  std::string_view old_name;
  const leap_cli::Command* command;
  std::string_view until;
};
constexpr std::array<DeprecatedCommand, 1> k_deprecated_commands = {
    {{"worker", &leap_cli::fleet_member_command, "0.3"}}};

void print_help(const leap_cli::Command* only = nullptr) {
  std::cout << "leap-sandbox - compile, run, check and time CUDA kernel candidates safely\n\nUsage:\n";
  for (const leap_cli::Command* c : k_commands) {
    if (only == nullptr || only == c) std::cout << "  leap-sandbox " << c->usage << "\n";
  }
  if (only == nullptr) std::cout << "  leap-sandbox --version | --help\n";
  for (const leap_cli::Command* c : k_commands) {
    if (only == nullptr || only == c) std::cout << "\n" << c->name << "\n" << c->help;
  }
  std::cout << "\n  --version            print the version and exit\n"
               "  --help, -h           print this help and exit (after a command: that command's help)\n";
}

}  // namespace

int main(int argc, char** argv) {
  leap_cli::Arguments args(argv + 1, argv + argc);
  if (args.empty()) leap_cli::usage_error("missing command");
  std::string name = args.front();
  args.erase(args.begin());
  for (const DeprecatedCommand& d : k_deprecated_commands) {
    if (name != d.old_name) continue;
    std::cerr << "leap-sandbox: '" << d.old_name << "' is deprecated and goes in " << d.until << "; use '"
              << d.command->name << "'\n";
    name = d.command->name;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    print_help();
    return 0;
  }
  if (name == "--version") {
    std::cout << "leap-sandbox " << leap::sandbox::toolchain_versions() << "\n";
    return 0;
  }
  for (const leap_cli::Command* command : k_commands) {
    if (command->name != name) continue;
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        print_help(command);
        return 0;
      }
    }
    try {
      return command->run(args);
    } catch (const std::exception& e) {
      std::cerr << "leap-sandbox: " << e.what() << "\n";
      return 2;
    }
  }
  leap_cli::usage_error("unknown command '" + name + "'");
}
