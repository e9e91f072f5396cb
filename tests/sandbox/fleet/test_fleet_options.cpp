// SPDX-License-Identifier: Apache-2.0
// The fleet's settings without a Redis: URLs, claim idle times derived from a request's limits,
// option checks.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/fleet_address.hpp>
#include "fleet/fleet_member.hpp"

namespace sb = leap::sandbox;
using namespace std::chrono_literals;

TEST_CASE("parse_redis_url reads host, port and database") {
  CHECK(sb::parse_redis_url("redis://127.0.0.1:6380/2") == sb::RedisAddress{"127.0.0.1", 6380, 2});
  CHECK(sb::parse_redis_url("redis://queue.internal") == sb::RedisAddress{"queue.internal", 6379, 0});
  CHECK(sb::parse_redis_url("redis://[::1]:7000/1") == sb::RedisAddress{"::1", 7000, 1});
  CHECK(sb::to_string(sb::RedisAddress{"::1", 7000, 1}) == "redis://[::1]:7000/1");
  CHECK(sb::to_string(sb::parse_redis_url("redis://10.0.0.5:6379/3")) == "redis://10.0.0.5:6379/3");
}

TEST_CASE("parse_redis_url refuses what it cannot honour, saying what to write instead") {
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://:secret@10.0.0.5:6379"),
                    Catch::Contains("LEAP_SANDBOX_REDIS_PASSWORD"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://user:pw@host"), Catch::Contains("credentials in a URL"));
  CHECK_THROWS_WITH(sb::parse_redis_url("rediss://host:6380"), Catch::Contains("TLS"));
  CHECK_THROWS_WITH(sb::parse_redis_url("http://host"), Catch::Contains("scheme must be redis://"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://host:0"), Catch::Contains("port '0'"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://host:70000"), Catch::Contains("[1, 65535]"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://host:63x9"), Catch::Contains("port '63x9'"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://host:/1"), Catch::Contains("empty port"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://host/db"), Catch::Contains("database 'db'"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://:6379"), Catch::Contains("no host"));
  CHECK_THROWS_WITH(sb::parse_redis_url("redis://[::1"), Catch::Contains("closing ']'"));
}

TEST_CASE("the streams of a fleet derive from its request stream") {
  CHECK(sb::fleet_dead_letter_stream("leap:requests") == "leap:requests:dead");
  CHECK(sb::fleet_reply_stream("leap:requests", "trainer-1") == "leap:requests:reply:trainer-1");
}

TEST_CASE("a process is named in the fleet by its host and pid") {
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const std::string expected =
      (host[0] != '\0' ? std::string(host) : std::string("member")) + "-" + std::to_string(::getpid());
  CHECK(leap::sandbox::fleet_process_name("member") == expected);
}

TEST_CASE("a request's claim idle time is the grace plus what its limits allow it to run") {
  sb::FleetMemberOptions o;
  o.claim_grace = 2000ms;
  o.compile_wall_limit = 7000ms;
  o.eval_start_timeout = 30000ms;
  o.jobs = 2;
  CHECK(sb::claim_idle_for(R"({"id": 1, "op": "compile", "source": "x"})", o) == 9000ms);
  CHECK(sb::claim_idle_for(R"({"id": 1, "op": "info"})", o) == 2000ms);
  // eval: compile + (member start-up + the task's own limit) for each request a member holds
  const int softmax_limit = sb::find_builtin_task("softmax")->spec.time_limit_ms;
  CHECK(sb::claim_idle_for(R"({"id": 1, "op": "eval", "task": "softmax", "source": "x"})", o) ==
        2000ms + 7000ms + 2 * (30000ms + std::chrono::milliseconds(softmax_limit)));
  CHECK(sb::claim_idle_for(R"({"id": 1, "op": "eval", "task": {"time_limit_ms": 500}, "source": "x"})", o) ==
        2000ms + 7000ms + 2 * (30000ms + 500ms));
  // a limit past the spec's range is clamped as the spec parser would refuse it anyway
  CHECK(sb::claim_idle_for(R"({"id": 1, "op": "eval", "task": {"time_limit_ms": 99999999}, "source": "x"})", o) ==
        2000ms + 7000ms + 2 * (30000ms + 600000ms));
  // what does not parse is given the compile's time
  CHECK(sb::claim_idle_for("not json", o) == 9000ms);
}

TEST_CASE("member options are checked, naming the option") {
  sb::FleetMemberOptions o;
  CHECK_NOTHROW(o.validate());
  o.jobs = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("jobs (0)"));
  o = {};
  o.max_deliveries = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("max_deliveries (0)"));
  o = {};
  o.stream.clear();
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("stream is empty"));
  o = {};
  CHECK(o.redis_timeout >= 30000ms);  // Redis answers no one while it moves an entry of hundreds of MB
  o.redis_timeout = 10ms;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("redis_timeout must be at least 100 ms"));
  CHECK_THROWS_WITH(sb::FleetMember(sb::FleetMemberOptions{}, sb::FleetMember::Handler{}),
                    Catch::Contains("handler is empty"));
}
