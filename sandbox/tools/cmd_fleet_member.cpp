// SPDX-License-Identifier: Apache-2.0
// leap-sandbox fleet-member: one member of a sandbox fleet on Redis Streams (see fleet_member.hpp). It
// answers through the same RequestHandler as serve, so a request means the same thing either way.
//
// Its secrets, the fleet key and the Redis password, are taken out of the environment (their bytes
// overwritten) into memory no forked child inherits, before anything is started: the compile launcher,
// the pooled compilers and the compile children it forks, where NVRTC parses hostile source, and the GPU
// runner it execs with an explicit environment hold neither, in their environment or their memory.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/fleet_key.hpp>
#include "fleet/fleet_member.hpp"
#include <leap/sandbox/request_handler.hpp>

#include "cli.hpp"
#include "common/secret_bytes.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

#ifdef LEAP_SANDBOX_FLEET_TEST_HOOKS
// Test hook, compiled only into the fleet tests' own build of this command (never into leap-sandbox):
// when $LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER is set and non-empty, a request whose line contains it
// kills this fleet member with SIGKILL before it is answered: the "poison request" that
// dead-lettering exists for.
constexpr const char* k_crash_marker_env = "LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER";
#endif

int run_fleet_member(const Arguments& args) {
  sb::FleetMemberOptions options;
  std::string url(sb::fleet_default_url);
  std::string arch;
  bool no_cache = false, accept_weaker = false, allow_pageable = false;
  std::chrono::milliseconds compile_timeout{10000};
  std::string key_file;
  sb::RequestLimits limits;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--redis") url = option_value(args, i);
    else if (a == "--stream") options.stream = option_value(args, i);
    else if (a == "--group") options.group = option_value(args, i);
    else if (a == "--name") options.name = option_value(args, i);
    else if (a == "-j") options.jobs = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 64));
    else if (a == "--max-deliveries")
      options.max_deliveries = static_cast<int>(parse_number(a, option_value(args, i), 1, 1000));
    else if (a == "--claim-grace-ms")
      options.claim_grace = std::chrono::milliseconds(parse_number(a, option_value(args, i), 0, 3600000));
    else if (a == "--compile-timeout-ms")
      compile_timeout = std::chrono::milliseconds(parse_number(a, option_value(args, i), 100, 600000));
    else if (a == "--reply-maxlen")
      options.reply_maxlen = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 100000000));
    else if (a == "--dead-letter-maxlen")
      options.dead_letter_maxlen = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 100000000));
    else if (a == "--arch") arch = option_value(args, i);
    else if (a == "--no-cache") no_cache = true;
    else if (a == "--accept-weaker-confinement") accept_weaker = true;
    else if (a == "--allow-pageable-host-access") allow_pageable = true;
    else if (a == "--key-file") key_file = option_value(args, i);
    else if (a == "--insecure-no-key") options.insecure_no_key = true;
    else if (a == "--max-request-bytes")
      limits.max_request_bytes = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1024, 1L << 30));
    else if (a == "--key" || a.starts_with("--key=")) {
      usage_error(
          "fleet-member: a key on the command line ends up in ps and shell histories; put it in a file only you "
          "can read and pass --key-file FILE (or set $" +
          std::string(sb::fleet_key_file_env) + ")");
    } else if (a == "--password" || a.starts_with("--password=")) {
      usage_error("fleet-member: a password on the command line ends up in ps and shell histories; set $" +
                  std::string(sb::fleet_password_env) + " instead");
    } else usage_error("fleet-member: unknown option '" + a + "'");
  }
  options.max_request_bytes = limits.max_request_bytes;
  try {
    options.redis = sb::parse_redis_url(url);
    options.validate();
  } catch (const std::invalid_argument& e) {
    usage_error(std::string("fleet-member: ") + e.what());
  }
  // The secrets, before anything starts: taken out of the environment into secret memory, so that
  // nothing this process forks or execs from here on inherits them (see the opening comment). And the
  // key checked: a member that would refuse every request, or accept forged ones, should not start.
  options.credentials = sb::fleet::RedisCredentials::take_from_environment();
  try {
    if (!key_file.empty()) {
      options.key = sb::FleetKey::from_file(key_file);
      (void)sb::detail::environment_secret(std::string(sb::fleet_key_env).c_str(), true);  // unused, not inherited
    } else {
      options.key = sb::FleetKey::take_from_environment();
    }
    options.key = sb::resolve_fleet_key(options.key, options.insecure_no_key, "leap-sandbox fleet-member");
  } catch (const sb::FleetKeyError& e) {
    const std::string_view message = e.what();
    std::cerr << (message.starts_with("leap-sandbox fleet-member") ? "" : "leap-sandbox fleet-member: ") << message
              << "\n";
    return 2;
  }

  sb::EvaluatorConfig config = evaluator_config(arch, std::nullopt, true);
  config.compile_timeout = compile_timeout;
  config.compiler.accept_weaker_confinement = accept_weaker;
  config.gpu_runner.allow_pageable_host_access = allow_pageable;
  // A compile's CPU-time limit leaves its wall clock at the compiler's backstop, 10 x that limit
  // (CompileOptions::wall_backstop): what a claim must wait for before taking a compile over.
  options.compile_wall_limit = 10 * compile_timeout;
  if (no_cache) config.compiler.cache = nullptr;
  // Compiles in long-lived confined pooled compilers with precompiled headers, one per handler, as serve does.
  config.compiler.isolation = sb::Isolation::pooled;
  config.compiler.pool.size = options.jobs;
  options.eval_start_timeout = config.gpu_runner.init_timeout;
  sb::Evaluator evaluator(std::move(config));
  const sb::RequestHandler handler(evaluator, limits);

#ifdef LEAP_SANDBOX_FLEET_TEST_HOOKS
  const char* marker = std::getenv(k_crash_marker_env);
  const std::string crash_marker = marker != nullptr ? marker : "";
  sb::FleetMember member(options, [&handler, &crash_marker](std::string_view line) {
    if (!crash_marker.empty() && line.find(crash_marker) != std::string_view::npos) std::raise(SIGKILL);
    return handler.handle(line);
  });
#else
  sb::FleetMember member(options, [&handler](std::string_view line) { return handler.handle(line); });
#endif

  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::mutex log_mutex;
  member.run(g_stop, [&log_mutex](const std::string& line) {
    std::lock_guard lock(log_mutex);
    std::cerr << line << "\n" << std::flush;
  });
  return 0;
}

}  // namespace

const Command fleet_member_command{
    "fleet-member", "fleet-member [--redis URL] [--stream S] [--group G] [--name N] [-j N] [options]",
    R"(  A sandbox fleet member: reads requests from a Redis stream as one consumer of a group and answers
  each through the same handler as serve (same JSON), on the reply stream the request names. Run one
  per GPU (CUDA_VISIBLE_DEVICES) on every sandbox machine; see docs/fleet.md.
  --redis URL          redis://HOST:PORT[/DB] (default redis://127.0.0.1:6379). The password comes
                       from $LEAP_SANDBOX_REDIS_PASSWORD (an ACL user from $LEAP_SANDBOX_REDIS_USER),
                       never from the command line
  --stream S           the request stream (default leap:requests); dead letters go to S:dead
  --group G            the consumer group (default leap-sandbox), created if missing
  --name N             this consumer's name, unique per member (default <hostname>-<pid>)
  -j N                 requests handled at a time (default 2; kernels still run one at a time)
  --max-deliveries N   a request delivered N times without an answer (it killed or stalled its
                       members) is answered with an error and moved to S:dead (default 3)
  --claim-grace-ms MS  a dead member's request is taken over once idle for MS plus the wall-clock
                       time its limits allow it (a compile: 10 x its CPU limit; an eval: that, the
                       GPU runner's start-up and the task's time limit) (default 5000)
  --compile-timeout-ms MS  a compile's CPU-time limit (default 10000)
  --reply-maxlen N     MAXLEN ~ cap of each reply stream (default 10000)
  --dead-letter-maxlen N  MAXLEN ~ cap of the dead-letter stream (default 10000)
  --arch sm_XY         compile target (default: the GPU's, or sm_90 without one)
  --no-cache           compile every request afresh (default: the compile cache, as serve)
  --accept-weaker-confinement  compile where the private root is missing (user namespaces off);
                       without it the member refuses to start on such a machine (see serve)
  --allow-pageable-host-access  evaluate even where device code can reach this machine's pageable
                       memory (see eval; without it the GPU runner refuses on such a device)
  --key-file FILE      the fleet key (at least 16 bytes, a file only its owner may read); default: the
                       file named by $LEAP_FLEET_KEY_FILE, else the key in $LEAP_FLEET_KEY. Requests
                       without a valid tag under it are dropped unrun; every answer is signed
  --insecure-no-key    with no key anywhere, serve without authentication instead of refusing to
                       start: anyone who can write to Redis can then submit work and forge verdicts
  --max-request-bytes N  a longer request is answered request_too_large without being held in memory
                       (default 4194304)
  SIGTERM or SIGINT: finish the requests in hand, answer and acknowledge them, leave the group, exit 0.
  The fleet key and the password are removed from this process's environment once read, and neither
  reaches the compile and GPU processes it starts.
)",
    run_fleet_member};

}  // namespace leap_cli
