// SPDX-License-Identifier: Apache-2.0
// The fleet against a real Redis on a loopback port: members killed, stopped and poisoned, Redis
// restarted, the rollout loop driving the fleet, forged requests and answers, entries of 300 MB, a
// client used across a fork, what a co-tenant without the key can do to the streams, the test hook
// kept out of the shipped program, the secrets kept out of the compile and GPU processes, the ACL
// users docs/fleet.md gives, requests no member could read and answers that are no answers. Skipped
// (exit 77) only where redis-server is not installed. Every wait is bounded in time.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <atomic>
#include <functional>
#include <cctype>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <leap/gate_policies.hpp>
#include <leap/rollout.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/fleet_client.hpp>
#include <leap/sandbox/fleet_environment.hpp>
#include <leap/sandbox/fleet_key.hpp>
#include "common/secret_bytes.hpp"
#include "common/sha256.hpp"

#include "evaluation/gpu_runner.hpp"
#include "fleet/fleet_auth.hpp"
#include "fleet_harness.hpp"
#include "sanitizers.hpp"

namespace sb = leap::sandbox;
namespace fr = leap::sandbox::fleet;
using namespace fleet_test;
using nlohmann::json;

namespace {

std::string g_redis_server;

// A small kernel of its own per k: the compile cache can only serve it after one real compile.
std::string kernel(int k) {
  return "extern \"C\" __global__ void scale_" + std::to_string(k) +
         "(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = x[i] * " +
         std::to_string(k) + ".5f + 1.0f;\n}\n";
}

struct MemberSettings {
  int jobs = 2;
  int grace_ms = 1000;
  int compile_timeout_ms = 500;  // CPU time; a small kernel needs ~50 ms
  int max_deliveries = 3;
  // A request holding it kills the member: the tests' own build of the member has that hook, and only
  // it is started for a crash marker (the shipped leap-sandbox has no hook).
  std::string crash_marker;
  std::string stream;                                    // empty: the default
  std::vector<std::pair<std::string, std::string>> env;  // more environment (the Redis user and password)
  bool hook_in_shipped_program = false;                  // the crash marker given to leap-sandbox itself
  int claim_idle_ms() const { return grace_ms + 10 * compile_timeout_ms; }  // of a compile: grace + wall backstop
};

std::unique_ptr<Child> start_member(const RedisServer& redis, const TempDir& tmp, const std::string& name,
                                    const MemberSettings& s) {
  std::vector<std::pair<std::string, std::string>> env = {{"LEAP_SANDBOX_CACHE_DIR", (tmp.path() / "cache").string()}};
  if (!s.crash_marker.empty()) env.emplace_back("LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER", s.crash_marker);
  env.insert(env.end(), s.env.begin(), s.env.end());
  const bool with_hook = !s.crash_marker.empty() && !s.hook_in_shipped_program;
  return std::make_unique<Child>(
      std::vector<std::string>{with_hook ? LEAP_SANDBOX_FLEET_TEST_MEMBER : LEAP_SANDBOX_CLI, "fleet-member", "--redis",
                               redis.url(), "--name", name, "-j", std::to_string(s.jobs), "--claim-grace-ms",
                               std::to_string(s.grace_ms), "--compile-timeout-ms", std::to_string(s.compile_timeout_ms),
                               "--max-deliveries", std::to_string(s.max_deliveries), "--stream",
                               s.stream.empty() ? std::string(sb::fleet_default_stream) : s.stream},
      tmp.path() / (name + ".log"), env);
}

// A request entry as a client holding `key` writes it (fleet_auth.hpp). Indices: 4 the line, 6 the
// reply stream, 8 the session, 10 the id, 12 the tag.
std::vector<std::string> signed_request(const sb::FleetKey& key, const std::string& stream, const std::string& reply,
                                        const std::string& session, const std::string& id, const std::string& line) {
  return {"XADD",
          stream,
          "*",
          "request",
          line,
          "reply",
          reply,
          "session",
          session,
          "id",
          id,
          "tag",
          fr::sign(key, {fr::MessageKind::request, stream, reply, session, id, sb::sha256(line)})};
}

// Whether a reply entry carries a valid tag for (stream, its reply stream, session, id).
bool signed_reply(const sb::FleetKey& key, const fr::StreamEntry& e, const std::string& stream,
                  const std::string& reply) {
  const std::string* response = e.field("response");
  const std::string* session = e.field("session");
  const std::string* id = e.field("id");
  const std::string* tag = e.field("tag");
  return response && session && id && tag &&
         fr::verify(key, {fr::MessageKind::reply, stream, reply, *session, *id, sb::sha256(*response)}, *tag);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Pending {
  std::string entry;
  std::string consumer;
  long long idle_ms = 0;
  long long deliveries = 0;
};

// XPENDING of the group, optionally of one consumer.
std::vector<Pending> pending_of(fr::RedisConnection& redis, const std::string& consumer = {}) {
  std::vector<std::string> argv = {
      "XPENDING", std::string(sb::fleet_default_stream), std::string(sb::fleet_default_group), "-", "+", "1000"};
  if (!consumer.empty()) argv.push_back(consumer);
  std::vector<Pending> out;
  fr::Reply reply;
  try {
    reply = redis.command(argv);
  } catch (const fr::RedisCommandError&) {  // NOGROUP: no member has created the group yet
    return out;
  }
  for (std::size_t i = 0; i < fr::size(reply.get()); ++i) {
    const auto* row = fr::at(reply.get(), i);
    out.push_back({std::string(fr::text(fr::at(row, 0))), std::string(fr::text(fr::at(row, 1))),
                   fr::integer(fr::at(row, 2)), fr::integer(fr::at(row, 3))});
  }
  return out;
}

template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// Joins a thread however the test case ends.
struct Joined {
  std::thread thread;
  ~Joined() {
    if (thread.joinable()) thread.join();
  }
};

// `digits` random hex digits: passwords and markers no other test uses.
std::string random_text(std::size_t digits) {
  std::random_device random;
  std::string text;
  while (text.size() < digits) text.push_back("0123456789abcdef"[random() % 16]);
  return text;
}

// ---- looking inside processes: /proc/<pid>/environ and /proc/<pid>/mem (readable by root) ----

// The live processes below `root` in the process tree, `root` itself not included (a zombie, dead
// but not yet reaped, holds no memory and is left out).
std::vector<pid_t> descendants(pid_t root) {
  std::set<pid_t> dead;
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos || close + 2 > line.size()) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    if (!(rest >> state >> parent)) continue;
    children[parent].push_back(static_cast<pid_t>(std::stol(name)));
    if (state == 'Z' || state == 'X') dead.insert(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> out, todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      if (dead.count(c) == 0) out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

std::string proc_file(pid_t pid, const char* what) { return read_file("/proc/" + std::to_string(pid) + "/" + what); }

struct MemoryScan {
  bool readable = false;
  std::size_t bytes = 0;                        // scanned
  std::vector<std::string> found;               // "<which secret> at <region>"
  std::vector<std::string> sanitizer_env_copy;  // the same, in a sanitizer runtime's copy of the environment
};

// Under a sanitizer, its runtime reads the environment the process started with (/proc/self/environ)
// into a private mapping at start-up, to find its options, and keeps it: a secret passed in the
// environment is there as "NAME=secret" whatever the program scrubs, and a forked child inherits it.
// That copy is the sanitizer's, not the sandbox's; any other copy counts.
bool in_sanitizer_environment_copy(const std::string& window, std::size_t at) {
  if (!leap_test::k_sanitizer || at == 0 || window[at - 1] != '=') return false;
  std::size_t name = at - 1;
  while (name > 0 && (std::isupper(static_cast<unsigned char>(window[name - 1])) || window[name - 1] == '_')) --name;
  return name < at - 1 && (name == 0 || window[name - 1] == '\0');
}

// Looks for each of `secrets` in the memory of `pid` a process could have put there: every readable
// region that is writable or not backed by a file (a read-only file mapping holds the file's bytes).
MemoryScan scan_memory(pid_t pid, const std::vector<std::pair<std::string, std::string>>& secrets) {
  MemoryScan scan;
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return scan;
  scan.readable = true;
  std::size_t longest = 0;
  for (const auto& [name, secret] : secrets) longest = std::max(longest, secret.size());
  std::istringstream maps(proc_file(pid, "maps"));
  std::string line;
  std::vector<char> chunk(std::size_t{1} << 20);
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    if (perms.size() < 2 || perms[0] != 'r') continue;
    if (path.starts_with("[vvar") || path == "[vsyscall]") continue;
    if (perms[1] != 'w' && path.starts_with("/")) continue;
    const std::size_t dash = range.find('-');
    std::uint64_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    // A sanitizer's shadow memory: terabytes reserved as one anonymous mapping, read back as zeros
    // page by page (hours), and never the program's data. No heap, stack or secret region is this large.
    if (path.empty() && end - begin > (std::uint64_t{16} << 30)) continue;
    std::string carried;  // the last bytes of the previous chunk: a secret may straddle two
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), end - at));
      const ssize_t n = ::pread(fd, chunk.data(), want, static_cast<off_t>(at));
      if (n <= 0) break;
      std::string window = carried + std::string(chunk.data(), static_cast<std::size_t>(n));
      for (const auto& [name, secret] : secrets) {
        for (std::size_t at = window.find(secret); at != std::string::npos; at = window.find(secret, at + 1)) {
          if (in_sanitizer_environment_copy(window, at)) scan.sanitizer_env_copy.push_back(name + " in " + line);
          else scan.found.push_back(name + " in " + line);
        }
      }
      carried = window.substr(window.size() - std::min(window.size(), longest));
      scan.bytes += static_cast<std::size_t>(n);
      at += static_cast<std::uint64_t>(n);
    }
  }
  ::close(fd);
  return scan;
}

// ---- the ACL users of docs/fleet.md ----

// The `user` lines of the ACL file docs/fleet.md gives (in its section on who may read the streams),
// as ACL SETUSER commands with the passwords put in. The default user's line is left out: it is this
// test's own connection for looking inside Redis.
std::vector<std::vector<std::string>> acl_recipe(const std::string& member_password,
                                                 const std::string& trainer_password) {
  const std::string doc = read_file(std::filesystem::path(LEAP_SOURCE_DIR) / "docs" / "fleet.md");
  std::vector<std::vector<std::string>> commands;
  std::istringstream lines(doc);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("user leap-")) continue;
    std::istringstream words(line.substr(5));
    std::vector<std::string> argv = {"ACL", "SETUSER"};
    for (std::string w; words >> w;) {
      if (w == ">MEMBER_PASSWORD") w = ">" + member_password;
      if (w == ">TRAINER_PASSWORD") w = ">" + trainer_password;
      argv.push_back(w);
    }
    commands.push_back(argv);
  }
  return commands;
}

void apply_acl_recipe(fr::RedisConnection& admin, const std::string& member_password,
                      const std::string& trainer_password) {
  const auto commands = acl_recipe(member_password, trainer_password);
  REQUIRE(commands.size() == 2);  // leap-member and leap-trainer
  for (const auto& argv : commands) {
    INFO(argv[2]);
    admin.command(argv);
  }
}

}  // namespace

TEST_CASE("1000 compiles, 2 clients, 3 members: one SIGKILLed, one SIGTERMed, none lost", "[kill]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const MemberSettings settings;  // -j 2, a compile's claim idle time 6 s
  std::map<std::string, std::unique_ptr<Child>> members;
  for (const char* name : {"w0", "w1", "w2"}) members[name] = start_member(redis, tmp, name, settings);

  constexpr int per_client = 500;
  constexpr int distinct_kernels = 48;
  sb::FleetClient a({.redis = redis.address(), .name = "client-a", .timeout = 120s});
  sb::FleetClient b({.redis = redis.address(), .name = "client-b", .timeout = 120s});
  std::vector<std::future<sb::FleetReply>> answers_a(per_client), answers_b(per_client);
  Joined submit_a{std::thread([&] {
    for (int i = 0; i < per_client; ++i)
      answers_a[static_cast<std::size_t>(i)] = a.compile(kernel(i % distinct_kernels));
  })};
  Joined submit_b{std::thread([&] {
    for (int i = 0; i < per_client; ++i)
      answers_b[static_cast<std::size_t>(i)] = b.compile(kernel((i * 7) % distinct_kernels));
  })};

  // SIGKILL w0 while it holds requests, then SIGTERM w1 while it holds requests.
  REQUIRE(eventually([&] { return !pending_of(inspect, "w0").empty(); }, 60s));
  members["w0"]->signal(SIGKILL);
  const auto killed_at = Clock::now();
  REQUIRE(members["w0"]->wait(10s));
  const std::vector<Pending> orphans = pending_of(inspect, "w0");
  REQUIRE(!orphans.empty());
  // Which of the requests w0 died holding belong to whom: looked up at once, for a live member takes
  // each over once it is idle past its claim idle time, and deletes it from the stream once answered
  // (on a loaded machine the steps below can take that long).
  struct Orphan {
    std::future<sb::FleetReply>* answer;  // the element's address; read once the submitters are done
    long long idle_at_kill;
  };
  std::vector<Orphan> orphaned;
  for (const Pending& p : orphans) {
    const auto entries =
        fr::parse_entries(inspect.command({"XRANGE", std::string(sb::fleet_default_stream), p.entry, p.entry}).get());
    REQUIRE(entries.size() == 1);
    const json request = json::parse(*entries.front().field("request"));
    const auto id = request.at("id").get<std::size_t>();
    auto& answers = *entries.front().field("reply") == a.reply_stream() ? answers_a : answers_b;
    orphaned.push_back({&answers.at(id - 1), p.idle_ms});
  }
  REQUIRE(eventually([&] { return !pending_of(inspect, "w1").empty(); }, 60s));
  members["w1"]->signal(SIGTERM);
  submit_a.thread.join();
  submit_b.thread.join();

  // w1 finishes what it holds, acknowledges it and leaves the group.
  const std::optional<int> w1_status = members["w1"]->wait(30s);
  REQUIRE(w1_status);
  CHECK(WIFEXITED(*w1_status));
  CHECK(WEXITSTATUS(*w1_status) == 0);
  CHECK(pending_of(inspect, "w1").empty());
  const std::string w1_log = read_file(tmp.path() / "w1.log");
  CHECK(w1_log.find("stopped:") != std::string::npos);

  // They are answered by a live member once idle for their claim idle time, and not before.
  for (Orphan& o : orphaned) {
    REQUIRE(o.answer->wait_for(settings.claim_idle_ms() * 1ms + 15s) == std::future_status::ready);
    const auto taken = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count();
    CHECK(taken + o.idle_at_kill + 50 >= settings.claim_idle_ms());
  }
  const auto reclaim_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count();
  INFO("the last of w0's " << orphaned.size() << " requests was answered " << reclaim_ms << " ms after the kill");
  CHECK(reclaim_ms <= settings.claim_idle_ms() + 6000);  // idle time + scan interval + a compile on loaded cores

  // Every request of each client is answered exactly once, successfully, by a member alive at the time.
  int real_compiles = 0, cache_hits = 0;
  std::set<std::string> answered_by;
  for (auto* answers : {&answers_a, &answers_b}) {
    std::set<std::uint64_t> ids;
    for (auto& f : *answers) {
      REQUIRE(f.wait_for(60s) == std::future_status::ready);
      const sb::FleetReply reply = f.get();
      INFO(reply.line);
      CHECK(reply.ok);
      const json result = json::parse(reply.result);
      CHECK(result.at("status") == "ok");
      (result.at("cache_hit").get<bool>() ? cache_hits : real_compiles) += 1;
      ids.insert(reply.id);
      answered_by.insert(reply.member);
    }
    CHECK(ids.size() == per_client);
    CHECK(*ids.begin() == 1);
    CHECK(*ids.rbegin() == per_client);
  }
  CHECK(real_compiles >= distinct_kernels);  // each kernel compiled for real at least once
  CHECK(cache_hits > 0);
  CHECK(answered_by.count("w2") == 1);
  for (const sb::FleetClient* c : {&a, &b}) {
    const sb::FleetClientStats s = c->stats();
    CHECK(s.submitted == per_client);
    CHECK(s.answered == per_client);
    CHECK(s.timeouts == 0);
    CHECK(c->pending() == 0);
  }
  // Nothing left behind: no request pending, none waiting in the stream.
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));
  CHECK(fr::integer(inspect.command({"XLEN", std::string(sb::fleet_default_stream)}).get()) == 0);
  members["w2"]->signal(SIGTERM);
  CHECK(members["w2"]->wait(30s));
}

TEST_CASE("a request that kills its members is dead-lettered after N deliveries", "[poison]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  MemberSettings settings;
  settings.jobs = 1;
  settings.grace_ms = 300;
  settings.compile_timeout_ms = 200;  // claim idle 2.3 s
  settings.max_deliveries = 2;
  settings.crash_marker = "LEAP_TEST_POISON_7f3a";
  std::map<std::string, std::unique_ptr<Child>> members;
  for (const char* name : {"p0", "p1", "p2"}) members[name] = start_member(redis, tmp, name, settings);

  sb::FleetClient client({.redis = redis.address(), .name = "poisoner", .timeout = 60s});
  auto poison = client.compile(kernel(1) + "// " + settings.crash_marker + "\n");
  REQUIRE(poison.wait_for(45s) == std::future_status::ready);
  const sb::FleetReply reply = poison.get();
  INFO(reply.line);
  CHECK_FALSE(reply.ok);
  CHECK(reply.id == 1);
  CHECK(reply.error.find("delivered 2 times") != std::string::npos);
  CHECK(reply.error.find("leap:requests:dead") != std::string::npos);

  // Two members died of it (one per delivery); the third dead-lettered it and lives.
  int killed = 0;
  std::string survivor;
  for (auto& [name, w] : members) {
    if (w->running()) {
      survivor = name;
      continue;
    }
    const std::optional<int> status = w->wait(0ms);
    REQUIRE(status);
    CHECK(WIFSIGNALED(*status));
    CHECK(WTERMSIG(*status) == SIGKILL);
    ++killed;
  }
  CHECK(killed == 2);
  REQUIRE(!survivor.empty());
  CHECK(reply.member == survivor);

  const auto dead = fr::parse_entries(inspect.command({"XRANGE", "leap:requests:dead", "-", "+"}).get());
  REQUIRE(dead.size() == 1);
  CHECK(*dead.front().field("deliveries") == "2");
  CHECK(dead.front().field("request")->find(settings.crash_marker) != std::string::npos);
  CHECK(*dead.front().field("reply") == client.reply_stream());
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));  // acknowledged right after the answer

  // A signed entry that names a reply stream outside "<stream>:reply:" is dead-lettered, never answered
  // there; an unsigned one is dropped before anything else is looked at.
  inspect.command({"XADD", "leap:requests", "*", "request", R"({"id": 8, "op": "info"})", "reply", "someone:else"});
  inspect.command(
      signed_request(test_fleet_key(), "leap:requests", "someone:else", "1-s", "9", R"({"id": 9, "op": "info"})"));
  REQUIRE(eventually(
      [&] {
        return fr::size(inspect.command({"XRANGE", "leap:requests:dead", "-", "+"}).get()) == 2;
      },
      20s));
  const auto refused = fr::parse_entries(inspect.command({"XRANGE", "leap:requests:dead", "-", "+"}).get());
  CHECK(refused.back().field("reason")->find("malformed stream entry") != std::string::npos);
  CHECK(*refused.back().field("id") == "9");
  CHECK(fr::integer(inspect.command({"EXISTS", "someone:else"}).get()) == 0);
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));

  // The fleet goes on: the survivor answers the next request.
  auto next = client.compile(kernel(2));
  REQUIRE(next.wait_for(30s) == std::future_status::ready);
  const sb::FleetReply fine = next.get();
  CHECK(fine.ok);
  CHECK(fine.member == survivor);
}

TEST_CASE("Redis restarts mid-run: members and client reconnect, all answered once", "[restart]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  const MemberSettings settings;
  auto w0 = start_member(redis, tmp, "r0", settings);
  auto w1 = start_member(redis, tmp, "r1", settings);

  constexpr int requests = 240;
  sb::FleetClient client({.redis = redis.address(), .name = "restarter", .timeout = 90s});
  std::vector<std::future<sb::FleetReply>> answers(requests);
  // Every request a new kernel: cache hits would answer the first half in a burst before Redis stops.
  for (int i = 0; i < requests / 2; ++i) answers[static_cast<std::size_t>(i)] = client.compile(kernel(100 + i));
  REQUIRE(eventually([&] { return client.stats().answered >= 20; }, 60s));
  redis.stop();
  const std::uint64_t answered_before = client.stats().answered;
  // The second half is submitted while Redis is away: submit() waits for it to come back.
  Joined submitter{std::thread([&] {
    for (int i = requests / 2; i < requests; ++i)
      answers[static_cast<std::size_t>(i)] = client.compile(kernel(100 + i));
  })};
  std::this_thread::sleep_for(300ms);
  redis.start();
  submitter.thread.join();
  INFO(answered_before << " requests were answered before the restart");
  CHECK(answered_before < requests / 2);  // requests pending or waiting when Redis went away

  std::set<std::uint64_t> ids;
  for (auto& f : answers) {
    REQUIRE(f.wait_for(90s) == std::future_status::ready);
    const sb::FleetReply reply = f.get();
    INFO(reply.line);
    CHECK(reply.ok);
    ids.insert(reply.id);
  }
  CHECK(ids.size() == requests);
  CHECK(client.stats().answered == requests);
  CHECK(client.stats().reconnects >= 1);
  fr::RedisConnection inspect(redis.address(), {});
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));
  w0->signal(SIGTERM);
  w1->signal(SIGTERM);
  REQUIRE(w0->wait(30s));
  REQUIRE(w1->wait(30s));
  for (const char* name : {"r0.log", "r1.log"}) {
    const std::string log = read_file(tmp.path() / name);
    INFO(log);
    CHECK(log.find("reconnected") != std::string::npos);
  }
}

namespace {

struct FleetTaskRef {
  std::uint64_t id = 0;
  std::string name;
};

// Even samples write a kernel that does not compile; odd ones the task's reference kernel.
struct AlternatingPolicy {
  using payload_type = std::string;
  leap::Completion<std::string> complete(const FleetTaskRef& task, const leap::Trajectory<std::string>&,
                                         const leap::SampleKey& key) const {
    leap::Completion<std::string> c;
    if (key.sample % 2 == 0) {
      c.payload =
          "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name_" + std::to_string(key.turn) + "; }\n";
    } else {
      c.payload = sb::find_builtin_task(task.name)->spec.reference_source;
    }
    c.tokens = 10;
    return c;
  }
};

}  // namespace

TEST_CASE("the client refuses what it cannot match, and a Redis it cannot reach", "[misuse]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  sb::FleetClient client({.redis = redis.address(), .name = "careful", .timeout = 5s});
  CHECK_THROWS_WITH(client.submit("[1, 2]"), Catch::Contains("must be a JSON object"));
  CHECK_THROWS_WITH(client.submit(R"({"id": 4, "op": "info"})"), Catch::Contains("leave \"id\" out"));
  CHECK_THROWS_WITH(client.eval(sb::FleetTask{}, "x"), Catch::Contains("FleetTask::builtin"));
  CHECK(client.stats().submitted == 0);
  // With no member, the deadline passes and the future says so.
  auto lonely = client.info(200ms);
  REQUIRE(lonely.wait_for(10s) == std::future_status::ready);
  CHECK_THROWS_AS(lonely.get(), sb::FleetTimeout);
  CHECK(client.stats().timeouts == 1);
  // A member whose key file others may read, or given a key on its command line, does not start.
  const auto shared_key = tmp.path() / "shared.key";
  std::ofstream(shared_key) << "0123456789abcdef0123\n";
  std::filesystem::permissions(shared_key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                               std::filesystem::perms::group_read |
                                               std::filesystem::perms::others_read);
  Child refused({LEAP_SANDBOX_CLI, "fleet-member", "--redis", redis.url()}, tmp.path() / "refused.log",
                {{std::string(sb::fleet_key_file_env), shared_key.string()}});
  const std::optional<int> refused_status = refused.wait(30s);
  REQUIRE(refused_status);
  CHECK(WIFEXITED(*refused_status));
  CHECK(WEXITSTATUS(*refused_status) == 2);
  CHECK(read_file(tmp.path() / "refused.log").find("chmod 600") != std::string::npos);
  Child on_command_line({LEAP_SANDBOX_CLI, "fleet-member", "--redis", redis.url(), "--key", "0123456789abcdef0123"},
                        tmp.path() / "on_command_line.log");
  const std::optional<int> usage_status = on_command_line.wait(30s);
  REQUIRE(usage_status);
  CHECK(WEXITSTATUS(*usage_status) != 0);
  CHECK(read_file(tmp.path() / "on_command_line.log").find("--key-file") != std::string::npos);
  // Nothing listens on a fresh port: construction fails and names the address.
  const int closed = free_loopback_port();
  CHECK_THROWS_WITH(sb::FleetClient({.redis = {"127.0.0.1", closed, 0}}),
                    Catch::Contains("127.0.0.1:" + std::to_string(closed)));
}

TEST_CASE("run_step drives a fleet through FleetEnvironment, unchanged", "[environment]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  // Every turn here compiles (NVRTC's own diagnostics are the point), and a sanitizer's interceptors
  // make a compile several times slower: there the CPU-time limit grows with them.
  MemberSettings settings;
  if (leap_test::k_sanitizer) settings.compile_timeout_ms *= 10;
  auto member = start_member(redis, tmp, "e0", settings);
  sb::FleetClient client({.redis = redis.address(), .name = "trainer", .timeout = 120s});
  const auto environment = sb::FleetEnvironment(
      client, [](const FleetTaskRef& t) { return sb::FleetTask::builtin(t.name); },
      [](const leap::Completion<std::string>& c) { return c.payload; });
  static_assert(leap::rollout_environment<decltype(environment), FleetTaskRef, std::string>);

  const std::vector<FleetTaskRef> tasks = {{1, "scale_add"}, {2, "row_sum"}};
  leap::ThreadPool pool(4);
  const auto step =
      leap::run_step(tasks, AlternatingPolicy{}, environment, leap::AlwaysExpand{}, leap::RankAdvantage<>{}, pool,
                     leap::RolloutOptions{.group_size = 4, .max_turns = 2});
  std::size_t turns = 0;
  std::int64_t no_verdict = 0;
  for (std::size_t t = 0; t < step.trajectories.size(); ++t) {
    const int sample = static_cast<int>(t % 4);
    for (const auto& turn : step.trajectories[t].turns) {
      ++turns;
      INFO(turn.feedback);
      if (sample % 2 == 0) {  // NVRTC's real diagnostics, through the fleet: the candidate's own verdict
        CHECK(turn.verdict == leap::Verdict::compile_error);
        CHECK_FALSE(turn.environment_failure);
        CHECK(turn.feedback.find("undefined_name_") != std::string::npos);
      } else if (turn.verdict != leap::Verdict::correct) {
        // No GPU on the member: no verdict, never a made-up one, and not the candidate's failure either.
        CHECK(turn.environment_failure);
        CHECK(turn.feedback.find("reached no verdict (no_gpu") != std::string::npos);
        ++no_verdict;
      }
    }
  }
  // Each compile error got its second turn (AlwaysExpand); a trajectory without a verdict ended, masked.
  CHECK(turns == 2 * 4 + 2 * 2);
  CHECK(step.metrics.masked_trajectories == no_verdict);
  CHECK(step.metrics.environment_errors == 2 * no_verdict);  // each was tried twice (one retry)
  for (const auto& sample : step.samples)
    CHECK(sample.masked == step.trajectories[sample.trajectory].environment_failed());
  CHECK(client.stats().answered == turns + static_cast<std::size_t>(step.metrics.environment_retries));
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("requests without a valid tag are dropped unrun and counted, a signed one is answered, signed", "[auth]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const sb::FleetKey key = test_fleet_key();
  MemberSettings settings;
  settings.jobs = 1;  // entries are taken in order: the genuine one, last, is answered after all the others
  settings.crash_marker = "LEAP_TEST_FORGED_RUN_5d1c";  // running any forged request kills the member
  auto member = start_member(redis, tmp, "a0", settings);

  const std::string stream(sb::fleet_default_stream);
  const std::string reply = sb::fleet_reply_stream(stream, "target");
  const std::string thief = sb::fleet_reply_stream(stream, "thief");
  const std::string poisoned =
      json{{"id", 2}, {"op", "compile"}, {"source", kernel(2) + "// " + settings.crash_marker}}.dump();
  const std::string genuine = json{{"id", 1}, {"op", "compile"}, {"source", kernel(1)}}.dump();
  const std::vector<std::string> genuine_entry = signed_request(key, stream, reply, "1-s", "1", genuine);
  // Unsigned, as a co-tenant with write access but no key would send it.
  inspect.command({"XADD", stream, "*", "request", poisoned, "reply", reply});
  // A made-up tag.
  inspect.command({"XADD", stream, "*", "request", poisoned, "reply", reply, "session", "1-s", "id", "2", "tag",
                   std::string(64, '0')});
  // The genuine request's tag on another line.
  std::vector<std::string> moved = genuine_entry;
  moved[4] = poisoned;
  inspect.command(moved);
  // The genuine request, its answer redirected to another reply stream.
  std::vector<std::string> redirected = genuine_entry;
  redirected[6] = thief;
  inspect.command(redirected);
  // The genuine request with another id (an answer for request 2 from request 1's tag).
  std::vector<std::string> renumbered = genuine_entry;
  renumbered[10] = "2";
  inspect.command(renumbered);
  // Signed under another key.
  inspect.command(
      signed_request(sb::FleetKey::from_bytes("not-the-fleet-key-0123"), stream, reply, "1-s", "2", poisoned));
  inspect.command(genuine_entry);

  REQUIRE(eventually([&] { return fr::integer(inspect.command({"XLEN", reply}).get()) >= 1; }, 60s));
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));
  CHECK(fr::integer(inspect.command({"XLEN", stream}).get()) == 0);  // all acknowledged and deleted
  const auto answers = fr::parse_entries(inspect.command({"XRANGE", reply, "-", "+"}).get());
  REQUIRE(answers.size() == 1);  // only the genuine request was answered
  CHECK(signed_reply(key, answers.front(), stream, reply));
  CHECK(*answers.front().field("session") == "1-s");
  CHECK(*answers.front().field("id") == "1");
  const json response = json::parse(*answers.front().field("response"));
  CHECK(response.at("id") == 1);
  CHECK(response.at("ok") == true);
  // The answer's tag is not valid for any other reply stream, session or id.
  fr::StreamEntry other = answers.front();
  other.fields[other.index("session")].second = "1-t";
  CHECK_FALSE(signed_reply(key, other, stream, reply));
  CHECK_FALSE(signed_reply(key, answers.front(), stream, thief));
  CHECK(fr::integer(inspect.command({"EXISTS", thief}).get()) == 0);
  CHECK(fr::size(inspect.command({"XRANGE", "leap:requests:dead", "-", "+"}).get()) == 0);

  CHECK(member->running());  // no forged request ran: the marker would have killed it
  member->signal(SIGTERM);
  REQUIRE(member->wait(30s));
  const std::string log = read_file(tmp.path() / "a0.log");
  INFO(log);
  CHECK(log.find("1 answered") != std::string::npos);
  CHECK(log.find("6 dropped unsigned or forged") != std::string::npos);
  CHECK(log.find("unsigned (no tag field)") != std::string::npos);
  CHECK(log.find("the tag does not match") != std::string::npos);
  CHECK(log.find("under the fleet key " + key.fingerprint()) != std::string::npos);
}

TEST_CASE("forged answers that arrive first are dropped and counted, the real answer settles the future", "[auth]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const sb::FleetKey key = test_fleet_key();
  const std::string stream(sb::fleet_default_stream);

  // A genuine, signed answer to some other request, for replaying: a member answers an info request
  // sent to a reply stream that nothing reads.
  auto capture_member = start_member(redis, tmp, "c0", MemberSettings{});
  const std::string capture = sb::fleet_reply_stream(stream, "capture");
  inspect.command(signed_request(key, stream, capture, "7-c", "1", R"({"id": 1, "op": "info"})"));
  REQUIRE(eventually([&] { return fr::integer(inspect.command({"XLEN", capture}).get()) >= 1; }, 60s));
  const fr::StreamEntry replayed = fr::parse_entries(inspect.command({"XRANGE", capture, "-", "+"}).get()).front();
  REQUIRE(signed_reply(key, replayed, stream, capture));

  // The victim submits on a stream no member serves yet, so the forgeries are first.
  std::mutex log_mutex;
  std::vector<std::string> logged;
  sb::FleetClient client({.redis = redis.address(),
                          .stream = "victim:requests",
                          .name = "victim",
                          .timeout = 120s,
                          .log = [&](const std::string& line) {
                            std::lock_guard lock(log_mutex);
                            logged.push_back(line);
                          }});
  REQUIRE(client.authenticated());
  auto answer = client.compile(kernel(3));
  // What a co-tenant reads off the request stream: reply stream, session and id are in the clear.
  const auto requests = fr::parse_entries(inspect.command({"XRANGE", "victim:requests", "-", "+"}).get());
  REQUIRE(requests.size() == 1);
  const std::string session = *requests.front().field("session");
  const std::string id = *requests.front().field("id");
  CHECK(*requests.front().field("reply") == client.reply_stream());
  CHECK(id == "1");
  const std::string verdict =
      json{{"id", 1}, {"ok", true}, {"result", {{"status", "ok"}, {"verdict", "correct"}, {"speedup", 99.0}}}}.dump();
  const std::string& victim = client.reply_stream();
  inspect.command({"XADD", victim, "*", "response", verdict, "worker", "forger"});
  inspect.command({"XADD", victim, "*", "response", verdict, "worker", "forger", "session", session, "id", id, "tag",
                   std::string(64, 'a')});
  // A real answer and its real tag, replayed with the victim's session and id.
  inspect.command({"XADD", victim, "*", "response", *replayed.field("response"), "worker", "forger", "session", session,
                   "id", id, "tag", *replayed.field("tag")});
  // A member's tag is for replies only: a request's tag, on the same fields, does not pass as one.
  const std::string request_tag =
      fr::sign(key, {fr::MessageKind::request, "victim:requests", victim, session, id, sb::sha256(verdict)});
  inspect.command(
      {"XADD", victim, "*", "response", verdict, "worker", "forger", "session", session, "id", id, "tag", request_tag});
  REQUIRE(eventually([&] { return client.stats().forged_dropped == 4; }, 20s));
  CHECK(answer.wait_for(0s) == std::future_status::timeout);
  CHECK(client.pending() == 1);

  // Now a member serves the victim's stream: its answer, arriving after the forgeries, is the one.
  MemberSettings serving;
  serving.stream = "victim:requests";
  auto member = start_member(redis, tmp, "v0", serving);
  REQUIRE(answer.wait_for(60s) == std::future_status::ready);
  const sb::FleetReply reply = answer.get();
  INFO(reply.line);
  CHECK(reply.ok);
  CHECK(reply.member == "v0");
  const json result = json::parse(reply.result);
  CHECK(result.at("status") == "ok");
  CHECK_FALSE(result.contains("verdict"));
  CHECK(result.at("kernels").dump().find("scale_3") != std::string::npos);
  const sb::FleetClientStats stats = client.stats();
  CHECK(stats.answered == 1);
  CHECK(stats.forged_dropped == 4);
  CHECK(stats.duplicates_dropped == 0);
  std::lock_guard lock(log_mutex);
  REQUIRE(logged.size() == 3);  // the 1st, 2nd and 4th
  CHECK(logged.front().find("unsigned (no tag field)") != std::string::npos);
  CHECK(logged.back().find("4 dropped so far") != std::string::npos);
}

TEST_CASE("two entries of 300 MB leave the member's memory bounded, the signed one is answered request_too_large",
          "[oversized]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path(), "off");
  fr::RedisConnection inspect(redis.address(), {}, 60s);
  const sb::FleetKey key = test_fleet_key();
  const std::string stream(sb::fleet_default_stream);
  const std::string reply = sb::fleet_reply_stream(stream, "big");
  auto member = start_member(redis, tmp, "o0", MemberSettings{});  // -j 2: both entries in hand at once
  inspect.command(signed_request(key, stream, reply, "3-o", "1", R"({"id": 1, "op": "info"})"));
  REQUIRE(eventually([&] { return fr::integer(inspect.command({"XLEN", reply}).get()) == 1; }, 60s));
  const std::size_t before = peak_rss_bytes(member->pid());
  REQUIRE(before > 0);

  constexpr std::size_t entry_bytes = std::size_t{300} << 20;
  auto big_line = [&](int id) {
    return R"({"id": )" + std::to_string(id) + R"(, "op": "compile", "source": ")" + std::string(entry_bytes, 'x') +
           "\"}";
  };
  const std::string signed_line = big_line(2);
  inspect.command(signed_request(key, stream, reply, "3-o", "2", signed_line));
  inspect.command({"XADD", stream, "*", "request", big_line(3), "reply", reply, "session", "3-o", "id", "3"});

  REQUIRE(eventually([&] { return fr::integer(inspect.command({"XLEN", stream}).get()) == 0; }, 180s));
  CHECK(eventually([&] { return pending_of(inspect).empty(); }, 10s));
  const std::size_t after = peak_rss_bytes(member->pid());
  // The bound (docs/fleet.md): oversized entries add less than 16 MiB to the member's peak, whatever
  // their size (measured: nothing; it held each entry whole before, 3 GB for these two). Under a
  // sanitizer its own memory grows with what the member touches and frees (measured under ASan: 20
  // MiB), so the bound is scaled; scaled, it is still far below one entry held whole.
  INFO("member peak RSS " << (before >> 20) << " MiB before the two entries, " << (after >> 20) << " MiB after");
  CHECK(after < before + leap_test::k_rss_factor * (std::size_t{16} << 20));

  const auto answers = fr::parse_entries(inspect.command({"XRANGE", reply, "-", "+"}).get());
  REQUIRE(answers.size() == 2);  // info, and the signed big one; the unsigned one is dropped unanswered
  const fr::StreamEntry& big = answers.back();
  CHECK(signed_reply(key, big, stream, reply));
  CHECK(*big.field("id") == "2");
  const json response = json::parse(*big.field("response"));
  INFO(response.dump());
  CHECK(response.at("id") == 2);
  CHECK(response.at("ok") == false);
  CHECK(response.at("code") == "request_too_large");
  CHECK(response.at("error").get<std::string>().find(std::to_string(signed_line.size()) + " bytes") !=
        std::string::npos);
  member->signal(SIGTERM);
  REQUIRE(member->wait(30s));
  const std::string log = read_file(tmp.path() / "o0.log");
  INFO(log);
  CHECK(log.find("1 dropped unsigned or forged, 1 too large") != std::string::npos);
}

TEST_CASE("a 300 MB entry in a client's reply stream leaves the client's memory bounded", "[oversized]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path(), "off");
  fr::RedisConnection inspect(redis.address(), {}, 60s);
  sb::FleetClient client({.redis = redis.address(),
                          .stream = "idle:requests",
                          .name = "flooded",
                          .timeout = 120s,
                          .log = [](const std::string&) {}});
  // The peak from here on: "5" resets this process's VmHWM (proc(5), clear_refs).
  std::ofstream("/proc/self/clear_refs") << "5";
  const std::size_t before = peak_rss_bytes(::getpid());
  REQUIRE(before > 0);
  // Written inside Redis, so that only the client's reading counts here.
  inspect.command({"EVAL",
                   "return redis.call('XADD', KEYS[1], '*', 'response', string.rep('x', 314572800), "
                   "'worker', 'flood')",
                   "1", client.reply_stream()});
  REQUIRE(eventually([&] { return client.stats().forged_dropped == 1; }, 120s));
  const std::size_t after = peak_rss_bytes(::getpid());
  INFO("this process's peak RSS " << (before >> 20) << " MiB before the entry, " << (after >> 20) << " MiB after");
  CHECK(after < before + (std::size_t{80} << 20));  // the reader keeps at most 64 MiB of one read
  CHECK(fr::integer(inspect.command({"XLEN", client.reply_stream()}).get()) == 0);  // dropped from the stream too
  // The client goes on: a real answer still settles its future.
  auto answer = client.info();
  MemberSettings serving;
  serving.stream = "idle:requests";
  auto member = start_member(redis, tmp, "i0", serving);
  REQUIRE(answer.wait_for(60s) == std::future_status::ready);
  CHECK(answer.get().ok);
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("a client used in a forked child says to make a new one, no answer crosses the fork", "[fork]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  auto member = start_member(redis, tmp, "f0", MemberSettings{});
  auto owned = std::make_unique<sb::FleetClient>(sb::FleetClientOptions{.redis = redis.address(), .timeout = 120s});
  sb::FleetClient& parent = *owned;
  REQUIRE(parent.compile(kernel(500)).get().ok);

  // Requests in flight at the fork: their answers belong to the parent alone.
  std::vector<std::future<sb::FleetReply>> in_flight;
  for (int k = 501; k < 509; ++k) in_flight.push_back(parent.compile(kernel(k)));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // 10: the parent's client was usable; 11: the error did not say what to do; 12: the child's own
    // client failed; 13: it got an answer that is not its own.
    int code = 10;
    try {
      (void)parent.compile(kernel(900));
    } catch (const std::logic_error& e) {
      code = std::string(e.what()).find("Create a new FleetClient in the child") != std::string::npos ? 0 : 11;
    }
    // ThreadSanitizer cannot start a thread in the child of a multi-threaded process (it ends the
    // child), so there the child's own client is not tried; everything else is.
    if (code == 0 && !leap_test::k_thread_sanitizer) {
      try {
        sb::FleetClient own({.redis = redis.address(), .timeout = 60s});
        for (int k = 900; k < 904; ++k) {
          const sb::FleetReply r = own.compile(kernel(k)).get();
          if (!r.ok || r.result.find("scale_" + std::to_string(k)) == std::string::npos) code = 13;
        }
      } catch (const std::exception&) {
        code = 12;
      }
    }
    // Destroying the child's copy must neither hang (the reader thread is not in the child) nor touch
    // the parent's reply stream.
    owned.reset();
    ::_exit(code);  // no other destructors, no Catch
  }
  if (leap_test::k_thread_sanitizer) WARN("not tried under ThreadSanitizer: a new client in the forked child");
  for (int k = 509; k < 517; ++k) in_flight.push_back(parent.compile(kernel(k)));
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (std::size_t i = 0; i < in_flight.size(); ++i) {
    REQUIRE(in_flight[i].wait_for(60s) == std::future_status::ready);
    const sb::FleetReply r = in_flight[i].get();
    INFO(r.line);
    CHECK(r.ok);
    CHECK(r.result.find("scale_" + std::to_string(501 + i)) != std::string::npos);  // its own kernel's answer
  }
  const sb::FleetClientStats stats = parent.stats();
  CHECK(stats.answered == 17);
  CHECK(stats.duplicates_dropped == 0);
  CHECK(stats.forged_dropped == 0);
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("a keyless co-tenant's XCLAIM RETRYCOUNT does not dead-letter a request", "[cotenant]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection mallory(redis.address(), {});  // can read and write every key, holds no fleet key
  const sb::FleetKey key = test_fleet_key();         // this test plays members that ran a request before
  const std::string stream(sb::fleet_default_stream), group(sb::fleet_default_group);
  sb::FleetClient client({.redis = redis.address(), .name = "targeted", .timeout = 120s});
  // Three requests, submitted while no member runs.
  auto junk_records = client.compile(kernel(61));
  auto copied_record = client.compile(kernel(62));
  auto ran_three_times = client.compile(kernel(63));
  const auto entries = fr::parse_entries(mallory.command({"XRANGE", stream, "-", "+"}).get());
  REQUIRE(entries.size() == 3);

  // The co-tenant reads the requests off the stream, takes them into a consumer of its own and says
  // each was delivered 99 times and idle for days.
  mallory.command({"XGROUP", "CREATE", stream, group, "0"});
  mallory.command({"XREADGROUP", "GROUP", group, "mallory", "COUNT", "10", "STREAMS", stream, ">"});
  for (const fr::StreamEntry& e : entries) {
    mallory.command({"XCLAIM", stream, group, "mallory", "0", e.id, "IDLE", "999999999", "RETRYCOUNT", "99"});
  }
  REQUIRE(pending_of(mallory).size() == 3);
  CHECK(pending_of(mallory).front().deliveries == 99);
  // It writes delivery records of its own making for the first.
  const auto record = [&](const fr::StreamEntry& e) { return stream + ":deliveries:" + e.id; };
  mallory.command({"HSET", record(entries[0]), "m0/1", std::string(64, 'a'), "m1/1", std::string(64, 'b'), "m2/1",
                   std::string(64, 'c')});
  // Genuine records, made with the key: three deliveries of the third request (three members died
  // running it), and one of them copied onto the second request, where it is valid for nothing.
  const auto genuine = [&](const fr::StreamEntry& e, const std::string& name) {
    return fr::delivery_tag(key, stream, e.id, *e.field("tag"), name);
  };
  for (const char* name : {"w7/1", "w8/1", "w9/1"}) {
    mallory.command({"HSET", record(entries[2]), name, genuine(entries[2], name)});
  }
  mallory.command({"HSET", record(entries[1]), "w7/1", genuine(entries[2], "w7/1"), "w8/1", genuine(entries[2], "w8/1"),
                   "w9/1", genuine(entries[2], "w9/1")});

  auto member = start_member(redis, tmp, "t0", MemberSettings{});  // --max-deliveries 3
  // Redis's counter says 99 for all three; the members' records say 0, 0 and 3.
  for (auto* answer : {&junk_records, &copied_record}) {
    REQUIRE(answer->wait_for(60s) == std::future_status::ready);
    const sb::FleetReply reply = answer->get();
    INFO(reply.line);
    CHECK(reply.ok);
    CHECK(reply.member == "t0");
    CHECK(json::parse(reply.result).at("status") == "ok");
  }
  REQUIRE(ran_three_times.wait_for(60s) == std::future_status::ready);
  const sb::FleetReply dead = ran_three_times.get();
  INFO(dead.line);
  CHECK_FALSE(dead.ok);
  const json line = json::parse(dead.line);
  CHECK(line.at("code") == "dead_lettered");  // not run: an environment failure, never a verdict
  CHECK_FALSE(line.contains("result"));
  CHECK(dead.error.find("delivered 3 times") != std::string::npos);

  const auto letters = fr::parse_entries(mallory.command({"XRANGE", "leap:requests:dead", "-", "+"}).get());
  REQUIRE(letters.size() == 1);
  CHECK(*letters.front().field("request_entry") == entries[2].id);
  CHECK(*letters.front().field("deliveries") == "3");
  // The records go with the answers.
  CHECK(eventually(
      [&] {
        for (const fr::StreamEntry& e : entries) {
          if (fr::integer(mallory.command({"EXISTS", record(e)}).get()) != 0) return false;
        }
        return true;
      },
      10s));
  CHECK(eventually([&] { return pending_of(mallory).empty(); }, 10s));
  member->signal(SIGTERM);
  REQUIRE(member->wait(30s));
  const std::string log = read_file(tmp.path() / "t0.log");
  INFO(log);
  CHECK(log.find("took over") != std::string::npos);
  CHECK(log.find("2 answered, 3 taken over, 1 dead-lettered") != std::string::npos);
}

TEST_CASE("a forged answer naming another client session is counted as a forgery, not a duplicate", "[auth]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const sb::FleetKey key = test_fleet_key();
  sb::FleetClient client({.redis = redis.address(),
                          .stream = "quiet:requests",
                          .name = "shared-name",
                          .timeout = 60s,
                          .log = [](const std::string&) {}});
  const std::string& reply = client.reply_stream();
  const std::string verdict = json{{"id", 1}, {"ok", true}, {"result", {{"verdict", "correct"}}}}.dump();
  // A forgery that names a session other than the client's, so that it would be left alone as another
  // client's answer.
  inspect.command({"XADD", reply, "*", "response", verdict, "worker", "forger", "session", "1-not-yours", "id", "1",
                   "tag", std::string(64, 'a')});
  // A genuine answer for another client of the same name (its own session): left for that client.
  const std::string sibling = "2-sibling";
  inspect.command(
      {"XADD", reply, "*", "response", verdict, "worker", "m0", "session", sibling, "id", "1", "tag",
       fr::sign(key, {fr::MessageKind::reply, "quiet:requests", reply, sibling, "1", sb::sha256(verdict)})});
  REQUIRE(eventually(
      [&] {
        const sb::FleetClientStats s = client.stats();
        return s.forged_dropped + s.duplicates_dropped >= 2;
      },
      20s));
  const sb::FleetClientStats stats = client.stats();
  CHECK(stats.forged_dropped == 1);
  CHECK(stats.duplicates_dropped == 1);
  CHECK(stats.answered == 0);
  // The forgery is deleted; the sibling's answer stays for it.
  CHECK(eventually([&] { return fr::integer(inspect.command({"XLEN", reply}).get()) == 1; }, 10s));
  const auto left = fr::parse_entries(inspect.command({"XRANGE", reply, "-", "+"}).get());
  REQUIRE(left.size() == 1);
  CHECK(*left.front().field("session") == sibling);
}

TEST_CASE("the shipped fleet-member has no test hook: a request cannot kill it with the crash marker", "[hook]") {
  // The hook is compiled into the tests' own build of the member only.
  CHECK(read_file(LEAP_SANDBOX_CLI).find("LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER") == std::string::npos);
  CHECK(read_file(LEAP_SANDBOX_FLEET_TEST_MEMBER).find("LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER") != std::string::npos);
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  MemberSettings settings;
  settings.crash_marker = "LEAP_TEST_POISON_" + random_text(8);
  settings.hook_in_shipped_program = true;  // the marker in leap-sandbox's environment: it must do nothing
  auto member = start_member(redis, tmp, "h0", settings);
  sb::FleetClient client({.redis = redis.address(), .name = "hooked", .timeout = 60s});
  auto answer = client.compile(kernel(71) + "// " + settings.crash_marker + "\n");
  REQUIRE(answer.wait_for(60s) == std::future_status::ready);
  const sb::FleetReply reply = answer.get();
  INFO(reply.line);
  CHECK(reply.ok);
  CHECK(reply.member == "h0");
  CHECK(member->running());
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("neither the fleet key nor the Redis password reaches a compile process or the GPU runner", "[secrets]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const std::string password = "member-password-" + random_text(24);
  apply_acl_recipe(inspect, password, "trainer-password-" + random_text(24));
  const std::string key(test_fleet_key().bytes());  // in this process's $LEAP_FLEET_KEY, which members inherit
  const std::vector<std::pair<std::string, std::string>> secrets = {{"the fleet key", key},
                                                                    {"the Redis password", password}};
  MemberSettings settings;
  settings.env = {{std::string(sb::fleet_user_env), "leap-member"}, {std::string(sb::fleet_password_env), password}};
  auto member = start_member(redis, tmp, "s0", settings);  // -j 2: a launcher and two pooled compilers
  sb::FleetClient client({.redis = redis.address(), .name = "secretive", .timeout = 60s});
  // A compile answered: a failed one is an answer too, so the result's status says it compiled.
  const auto compiles = [&](int k) {
    auto answer = client.compile(kernel(k));
    if (answer.wait_for(60s) != std::future_status::ready) return false;
    const sb::FleetReply reply = answer.get();
    return reply.ok && json::parse(reply.result).at("status") == "ok";
  };
  // Two at once, so that both pooled compilers (-j 2; started on demand) are there.
  auto other = std::async(std::launch::async, compiles, 80);
  REQUIRE(compiles(81));
  REQUIRE(other.get());

  // The scan finds what is there: the member holds both, in its secret memory.
  const MemoryScan own = scan_memory(member->pid(), secrets);
  REQUIRE(own.readable);
  INFO("scanned " << (own.bytes >> 20) << " MiB of the member");
  CHECK(own.found.size() >= 2);
  // But its environment, where it got them, holds neither any more.
  const std::string member_environment = proc_file(member->pid(), "environ");
  CHECK(member_environment.find(key) == std::string::npos);
  CHECK(member_environment.find(password) == std::string::npos);

  const auto check_clean = [&](const std::string& when) {
    const std::vector<pid_t> processes = descendants(member->pid());
    INFO(when << ": " << processes.size() << " processes below the member");
    CHECK(processes.size() >= 2);  // the launcher and at least one pooled compiler
    for (const pid_t p : processes) {
      const std::string environment = proc_file(p, "environ");
      const MemoryScan scan = scan_memory(p, secrets);
      INFO(when << ": process " << p << " (" << proc_file(p, "comm") << "), " << (scan.bytes >> 20) << " MiB scanned");
      CHECK(environment.find(key) == std::string::npos);
      CHECK(environment.find(password) == std::string::npos);
      CHECK(scan.readable);
      for (const std::string& where : scan.found) FAIL_CHECK(where);
    }
  };
  check_clean("at start");

  // A launcher killed from outside is started again by the member, which by then holds both secrets:
  // forked from there, the new launcher and its pooled compilers still get neither.
  const std::vector<pid_t> first = descendants(member->pid());
  for (const pid_t p : first) ::kill(p, SIGKILL);
  bool compiled = false;
  for (int k = 82; k < 102 && !compiled; ++k) compiled = compiles(k);
  REQUIRE(compiled);
  std::vector<pid_t> second = descendants(member->pid());
  for (const pid_t p : first) std::erase(second, p);
  CHECK(second.size() >= 2);
  check_clean("after the launcher was killed and started again");

  // The GPU runner is exec'ed with an explicit environment: one started by a process that holds both
  // in its environment (as this one now does) holds neither.
  ::setenv(std::string(sb::fleet_password_env).c_str(), password.c_str(), 1);
  sb::GpuRunnerConfig fake;
  fake.fake = true;
  sb::GpuRunner runner(fake);
  const std::vector<std::uint8_t> ping = json::to_cbor(json{{"op", "ping"}});
  const sb::CallResult pong =
      runner.call(std::string_view(reinterpret_cast<const char*>(ping.data()), ping.size()), 5000ms);
  ::unsetenv(std::string(sb::fleet_password_env).c_str());
  REQUIRE(pong.status == sb::CallStatus::ok);
  REQUIRE(runner.pid() > 0);
  CHECK(proc_file(runner.pid(), "environ").find(key) == std::string::npos);
  CHECK(proc_file(runner.pid(), "environ").find(password) == std::string::npos);
  const MemoryScan runner_scan = scan_memory(runner.pid(), secrets);
  CHECK(runner_scan.readable);
  for (const std::string& where : runner_scan.found) FAIL_CHECK("the GPU runner: " << where);
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("the ACL users of docs/fleet.md run the fleet, and another user can read none of its streams", "[acl]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection admin(redis.address(), {});
  const std::string member_password = random_text(32), trainer_password = random_text(32);
  apply_acl_recipe(admin, member_password, trainer_password);
  MemberSettings settings;
  settings.env = {{std::string(sb::fleet_user_env), "leap-member"},
                  {std::string(sb::fleet_password_env), member_password}};
  auto member = start_member(redis, tmp, "acl0", settings);
  // The trainer's client, as its own user (the credentials are read when the client is made).
  ::setenv(std::string(sb::fleet_user_env).c_str(), "leap-trainer", 1);
  ::setenv(std::string(sb::fleet_password_env).c_str(), trainer_password.c_str(), 1);
  std::optional<sb::FleetClient> client;
  client.emplace(sb::FleetClientOptions{.redis = redis.address(), .name = "acl-trainer", .timeout = 60s});
  ::unsetenv(std::string(sb::fleet_user_env).c_str());
  ::unsetenv(std::string(sb::fleet_password_env).c_str());
  auto compiled = client->compile(kernel(91));
  auto info = client->info();
  REQUIRE(compiled.wait_for(60s) == std::future_status::ready);
  CHECK(compiled.get().ok);
  REQUIRE(info.wait_for(60s) == std::future_status::ready);
  CHECK(info.get().ok);

  // A co-tenant with keys of its own reads and writes none of the fleet's.
  admin.command({"ACL", "SETUSER", "cotenant", "on", ">cotenant-password", "resetkeys", "~tenant:*", "+@all"});
  fr::RedisConnection cotenant(redis.address(), {"cotenant", sb::detail::secret_copy("cotenant-password")});
  cotenant.command({"SET", "tenant:own", "1"});
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"XRANGE", "leap:requests", "-", "+"},
                                             {"XREAD", "STREAMS", client->reply_stream(), "0"},
                                             {"XRANGE", "leap:requests:dead", "-", "+"},
                                             {"XADD", "leap:requests", "*", "request", "{}"},
                                             {"XGROUP", "DESTROY", "leap:requests", "leap-sandbox"},
                                             {"DEL", "leap:requests"}}) {
    INFO(argv.front() << " " << argv[1]);
    CHECK_THROWS_WITH(cotenant.command(argv), Catch::Contains("NOPERM"));
  }
  // And the trainer's user cannot take requests as a member does: each user has the commands of its part.
  fr::RedisConnection trainer(redis.address(), {"leap-trainer", sb::detail::secret_copy(trainer_password)});
  CHECK_THROWS_WITH(trainer.command({"XREADGROUP", "GROUP", "leap-sandbox", "x", "STREAMS", "leap:requests", ">"}),
                    Catch::Contains("NOPERM"));
  client.reset();
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

// ---- every future resolves: lines a member cannot read, answers that are no answers ----

namespace {

// A reply entry as a member holding `key` writes it: the response line, signed with its id field.
std::vector<std::string> signed_answer(const sb::FleetKey& key, const std::string& stream, const std::string& reply,
                                       const std::string& session, const std::string& id, const std::string& line) {
  return {"XADD",
          reply,
          "*",
          "response",
          line,
          "worker",
          "m-test",
          "session",
          session,
          "id",
          id,
          "tag",
          fr::sign(key, {fr::MessageKind::reply, stream, reply, session, id, sb::sha256(line)})};
}

// The request entries a client wrote to `stream`, in order.
std::vector<fr::StreamEntry> requests_on(fr::RedisConnection& redis, const std::string& stream) {
  return fr::parse_entries(redis.command({"XRANGE", stream, "-", "+"}).get());
}

// Every sample writes the same small kernel.
struct KernelPolicy {
  using payload_type = std::string;
  leap::Completion<std::string> complete(const FleetTaskRef&, const leap::Trajectory<std::string>&,
                                         const leap::SampleKey&) const {
    return {kernel(1), 10};
  }
};

// The refusal `submit` throws; fails the test when it throws none.
sb::RequestEncodingError refused(const std::function<void()>& submit) {
  try {
    submit();
  } catch (const sb::RequestEncodingError& e) {
    return e;
  }
  FAIL("the request was accepted");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("a member's signed parse_error settles its request in the C++ client", "[unreadable]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const sb::FleetKey key = test_fleet_key();
  const std::string stream = "unreadable:requests";
  // The client submits while no member serves the stream. Two of its requests are then replaced by
  // lines no reader can read, signed as a client signs them: a NaN as Python's json.dumps writes it,
  // and nesting past 64 as this client wrote it before it checked. The member answers both "id": null.
  sb::FleetClient client({.redis = redis.address(), .stream = stream, .name = "unreadable", .timeout = 120s});
  auto nan = client.info();
  auto deep = client.info();
  auto fine = client.info();
  const std::vector<fr::StreamEntry> sent = requests_on(inspect, stream);
  REQUIRE(sent.size() == 3);
  const std::string session = *sent[0].field("session");
  const std::vector<std::string> unreadable = {
      R"({"id": 1, "op": "info", "x": NaN})",
      R"({"id": 2, "op": "info", "x": )" + std::string(70, '[') + std::string(70, ']') + "}"};
  for (std::size_t i = 0; i < unreadable.size(); ++i) {
    REQUIRE(*sent[i].field("id") == std::to_string(i + 1));
    inspect.command({"XDEL", stream, sent[i].id});
    inspect.command(signed_request(key, stream, client.reply_stream(), session, *sent[i].field("id"), unreadable[i]));
  }
  // An "id": null answer counts only when signed: one naming request 1 under a made-up tag settles nothing.
  const std::string forged_line = R"({"id": null, "ok": false, "code": "parse_error", "error": "forged"})";
  inspect.command({"XADD", client.reply_stream(), "*", "response", forged_line, "worker", "forger", "session", session,
                   "id", "1", "tag", std::string(64, 'b')});
  REQUIRE(eventually([&] { return client.stats().forged_dropped == 1; }, 20s));
  CHECK(nan.wait_for(0s) == std::future_status::timeout);

  MemberSettings settings;
  settings.stream = stream;
  auto member = start_member(redis, tmp, "u0", settings);
  std::uint64_t id = 1;
  for (std::future<sb::FleetReply>* answer : {&nan, &deep}) {
    REQUIRE(answer->wait_for(60s) == std::future_status::ready);
    const sb::FleetReply reply = answer->get();
    INFO(reply.line);
    CHECK(reply.id == id++);
    CHECK_FALSE(reply.ok);
    CHECK(reply.code == "parse_error");
    CHECK_THAT(reply.error, Catch::Contains("malformed request"));
    CHECK(json::parse(reply.line).at("id").is_null());
    CHECK(reply.member == "u0");
    // To the rollout loop: the fleet could not judge it, never the candidate's verdict.
    CHECK(sb::to_evaluation(reply).environment_failure);
  }
  REQUIRE(fine.wait_for(60s) == std::future_status::ready);
  CHECK(fine.get().ok);
  const sb::FleetClientStats stats = client.stats();
  CHECK(stats.answered == 3);
  CHECK(stats.duplicates_dropped == 0);
  CHECK(stats.forged_dropped == 1);
  CHECK(stats.timeouts == 0);
  CHECK(client.pending() == 0);
  member->signal(SIGTERM);
  CHECK(member->wait(30s));
}

TEST_CASE("a request the sandbox could not read is refused at submit by the C++ client, naming the field",
          "[unreadable]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const std::string stream(sb::fleet_default_stream);
  sb::FleetClient client({.redis = redis.address(), .name = "refusing", .timeout = 60s});
  struct Case {
    std::string what;
    std::function<void()> submit;
    std::string field;
    std::string says;
  };
  std::string deep_spec = R"({"name": "t", "shape": )";
  for (int i = 0; i < 70; ++i) deep_spec += "[";
  for (int i = 0; i < 70; ++i) deep_spec += "]";
  deep_spec += "}";
  std::string deep_field = "task.shape";
  for (int i = 0; i < 62; ++i) deep_field += "[0]";
  const std::string too_long(std::size_t{5} << 20, 'x');
  const std::vector<Case> cases = {
      {"invalid UTF-8 in a compile's source", [&] { client.compile("// \xFF\n" + kernel(1)); }, "source",
       "is not valid UTF-8: byte 0xFF at offset 3 (line 1)"},
      {"invalid UTF-8 in an eval's source",
       [&] { client.eval(sb::FleetTask::builtin("softmax"), kernel(1) + "// caf\xC3"); }, "source",
       "is not valid UTF-8"},
      {"a NaN in a task field",
       [&] { client.eval(sb::FleetTask::spec(R"({"name": "t", "tolerance": NaN})"), kernel(1)); }, "task.tolerance",
       "JSON has no NaN or Infinity"},
      {"a NaN in a request's task field",
       [&] { client.submit(R"({"op": "eval", "source": "", "task": {"inputs": [{"range": [0, NaN]}]}})"); },
       "task.inputs[0].range[1]", "JSON has no NaN or Infinity"},
      {"nesting past 64", [&] { client.eval(sb::FleetTask::spec(deep_spec), kernel(1)); }, deep_field,
       "65 levels deep (the request itself is level 1), past the sandbox's limit of 64"},
      {"a line past the limit", [&] { client.eval(sb::FleetTask::builtin("softmax"), too_long); }, "source",
       "past the sandbox's limit of 4194304 bytes"},
      {"invalid UTF-8 in a task's name", [&] { client.eval(sb::FleetTask::builtin("softmax\xFE"), kernel(1)); }, "task",
       "is not valid UTF-8"},
      {"invalid UTF-8 in the arch", [&] { client.compile(kernel(1), "sm_9\xC0"); }, "arch", "is not valid UTF-8"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const sb::RequestEncodingError e = refused(c.submit);
    CHECK(e.field() == c.field);
    CHECK_THAT(e.problem(), Catch::Contains(c.says));
    CHECK_THAT(e.what(), Catch::Contains("cannot send the request: field '" + c.field + "'"));
    // Nothing sent, nothing waiting.
    CHECK(client.pending() == 0);
    CHECK(client.stats().submitted == 0);
    CHECK(fr::integer(inspect.command({"EXISTS", stream}).get()) == 0);
  }
  // What the sandbox reads is sent as it is: valid UTF-8 beyond ASCII, and a line at the limit.
  auto accepted = client.compile("// caf\xC3\xA9 \xF0\x9D\x84\x9E\n" + kernel(1));
  CHECK(client.pending() == 1);
  const std::vector<fr::StreamEntry> sent = requests_on(inspect, stream);
  REQUIRE(sent.size() == 1);
  CHECK(json::parse(*sent[0].field("request")).at("source") == "// caf\xC3\xA9 \xF0\x9D\x84\x9E\n" + kernel(1));
}

TEST_CASE("FleetEnvironment gives an unsendable source a compile_error", "[unreadable]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  // No member: whatever is sent times out, so a verdict here was decided by the client, unsent.
  sb::FleetClient client({.redis = redis.address(), .name = "environment", .timeout = 2s});
  const auto environment = sb::FleetEnvironment(
      client, [](const FleetTaskRef& t) { return sb::FleetTask::builtin(t.name); },
      [](const leap::Completion<std::string>& c) { return c.payload; });
  const FleetTaskRef softmax{1, "softmax"};
  leap::Completion<std::string> completion;
  completion.payload = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }  // \xE9t\xE9\n";
  const leap::Evaluation not_utf8 = environment.evaluate(softmax, completion, leap::SampleKey{});
  CHECK_FALSE(not_utf8.environment_failure);
  CHECK(not_utf8.verdict == leap::Verdict::compile_error);
  CHECK_THAT(not_utf8.feedback, Catch::StartsWith("Compile error: the kernel's source was not compiled: it is not "
                                                  "valid UTF-8: byte 0xE9 at offset 57 (line 1)"));
  completion.payload = std::string(std::size_t{5} << 20, ' ');
  const leap::Evaluation too_long = environment.evaluate(softmax, completion, leap::SampleKey{});
  CHECK_FALSE(too_long.environment_failure);
  CHECK(too_long.verdict == leap::Verdict::compile_error);
  CHECK_THAT(too_long.feedback, Catch::Contains("past the sandbox's limit of 4194304 bytes"));
  CHECK(client.stats().submitted == 0);
  CHECK(client.pending() == 0);

  // A task the sandbox cannot read is the trainer's: thrown, so run_step retries it and then masks it.
  const FleetTaskRef unreadable{2, "softmax\xFF"};
  completion.payload = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  CHECK_THROWS_AS(environment.evaluate(unreadable, completion, leap::SampleKey{}), sb::RequestEncodingError);
  leap::ThreadPool pool(2);
  const auto step =
      leap::run_step(std::vector<FleetTaskRef>{unreadable}, KernelPolicy{}, environment, leap::AlwaysExpand{},
                     leap::RankAdvantage<>{}, pool, leap::RolloutOptions{.group_size = 2, .max_turns = 1});
  CHECK(step.metrics.masked_trajectories == 2);
  CHECK(step.metrics.environment_retries == 2);
  for (const auto& trajectory : step.trajectories) {
    REQUIRE(trajectory.turns.size() == 1);
    CHECK(trajectory.turns[0].environment_failure);
    CHECK_THAT(trajectory.turns[0].feedback, Catch::Contains("field 'task' is not valid UTF-8"));
  }
  CHECK(client.stats().submitted == 0);
}

TEST_CASE("every future ends: a signed answer that is no response, an answer twice, one for no request, close()",
          "[resolve]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection inspect(redis.address(), {});
  const sb::FleetKey key = test_fleet_key();
  const std::string stream = "resolve:requests";  // no member: the test answers as one
  std::optional<sb::FleetClient> client;
  client.emplace(
      sb::FleetClientOptions{.redis = redis.address(), .stream = stream, .name = "resolve", .timeout = 120s});
  auto garbled = client->info();
  auto twice = client->info();
  auto left = client->info();
  const std::vector<fr::StreamEntry> sent = requests_on(inspect, stream);
  REQUIRE(sent.size() == 3);
  const std::string session = *sent[0].field("session");
  const std::string& reply = client->reply_stream();
  // A member's signed line that is no protocol response: no other answer will come, so it fails now.
  inspect.command(signed_answer(key, stream, reply, session, "1", "{\"id\": 1, \"ok\": tru"));
  REQUIRE(garbled.wait_for(20s) == std::future_status::ready);
  const sb::FleetReply broken = garbled.get();
  CHECK(broken.id == 1);
  CHECK_FALSE(broken.ok);
  CHECK_THAT(broken.error, Catch::Contains("is not a protocol response"));
  // The same answer twice (a taken-over request whose first member was only slow): settled once.
  const std::string ok_line = R"({"id": 2, "ok": true, "result": {"status": "ok"}})";
  inspect.command(signed_answer(key, stream, reply, session, "2", ok_line));
  inspect.command(signed_answer(key, stream, reply, session, "2", ok_line));
  // A signed answer for an id this client never sent, and one with "id": null naming none.
  inspect.command(signed_answer(key, stream, reply, session, "99", R"({"id": 99, "ok": true, "result": {}})"));
  inspect.command(signed_answer(key, stream, reply, session, "x",
                                R"({"id": null, "ok": false, "code": "parse_error", "error": "?"})"));
  REQUIRE(twice.wait_for(20s) == std::future_status::ready);
  CHECK(twice.get().ok);
  REQUIRE(eventually([&] { return client->stats().duplicates_dropped == 3; }, 20s));
  CHECK(client->stats().answered == 2);
  CHECK(client->stats().forged_dropped == 0);
  CHECK(client->pending() == 1);
  // Closing with a request pending fails it, and returns.
  client.reset();
  REQUIRE(left.wait_for(0s) == std::future_status::ready);
  CHECK_THROWS_WITH(left.get(), Catch::Contains("closed before request 3 was answered"));
}

TEST_CASE("a client whose reconnect Redis refuses keeps reading: its requests time out and close returns",
          "[resolve]") {
  TempDir tmp;
  RedisServer redis(g_redis_server, tmp.path());
  fr::RedisConnection admin(redis.address(), {});
  const std::string password = random_text(32);
  admin.command({"ACL", "SETUSER", "reader", "on", ">" + password, "~*", "&*", "+@all"});
  ::setenv(std::string(sb::fleet_user_env).c_str(), "reader", 1);
  ::setenv(std::string(sb::fleet_password_env).c_str(), password.c_str(), 1);
  std::mutex log_mutex;
  std::vector<std::string> logged;
  std::optional<sb::FleetClient> client;
  client.emplace(sb::FleetClientOptions{.redis = redis.address(),
                                        .name = "refused-reader",
                                        .timeout = 60s,
                                        .block = 100ms,
                                        .log = [&](const std::string& line) {
                                          std::lock_guard lock(log_mutex);
                                          logged.push_back(line);
                                        }});
  ::unsetenv(std::string(sb::fleet_user_env).c_str());
  ::unsetenv(std::string(sb::fleet_password_env).c_str());
  auto answer = client->info(3s);  // no member
  // The user's password changes and its connections are cut: every reconnect is refused.
  admin.command({"ACL", "SETUSER", "reader", "resetpass", ">" + random_text(32)});
  admin.command({"CLIENT", "KILL", "USER", "reader"});
  REQUIRE(answer.wait_for(30s) == std::future_status::ready);
  CHECK_THROWS_AS(answer.get(), sb::FleetTimeout);
  {
    std::lock_guard lock(log_mutex);
    REQUIRE_FALSE(logged.empty());
    CHECK_THAT(logged.front(), Catch::Contains("refused the connection"));
    CHECK_THAT(logged.front(), Catch::Contains("retrying"));
  }
  client.reset();  // returns: the reader thread is still there to join
}

int main(int argc, char** argv) {
  g_redis_server = find_program("redis-server");
  if (g_redis_server.empty()) {
    std::cout << "SKIP: redis-server is not installed; the fleet tests need a real Redis "
                 "(apt-get install redis-server)\n";
    return 77;
  }
  (void)test_fleet_key();  // before any thread: it may set $LEAP_FLEET_KEY for this process and its members
  return Catch::Session().run(argc, argv);
}
