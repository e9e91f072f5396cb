// SPDX-License-Identifier: Apache-2.0
// One member of a sandbox fleet: a consumer in a Redis Streams consumer group, answering requests with
// the same handler as `leap-sandbox serve` (see request_handler.hpp for the JSON).
//
// A request is one stream entry:  request = <the JSON request line>,  reply = <the client's reply stream>,
// which must be "<stream>:reply:<client>" (members write nowhere else; other entries are dead-lettered).
// Each of the member's `jobs` threads takes one request at a time (XREADGROUP ... COUNT 1 BLOCK), runs
// it, XADDs {response, worker} (the field names the member) to the reply stream, then XACKs and XDELs the request. So a
// request is acknowledged only once its answer is in Redis, and the stream holds only work not yet done.
//
// Failures, and what happens:
//   member dies        its requests stay pending; live members scan the pending list and take over
//                      (XCLAIM) a request once it has been idle longer than its claim idle time: the
//                      grace plus the limits the request runs under (claim_idle_for).
//   request kills      a request delivered max_deliveries times without an answer is not run again:
//   members            it is answered dead_lettered (an environment failure, never a verdict: the
//                      request did not run) and moved to the dead-letter stream "<stream>:dead".
// Deliveries are counted in the members' own record, never by Redis's delivery counter (anyone who can
// write to the stream sets that with XCLAIM ... RETRYCOUNT): before it runs a request, a member adds
// one field to the hash "<stream>:deliveries:<entry id>", "<member>/<nonce>" = a tag under the fleet key
// bound to the entry's id, the signed request and the field's name (fleet_auth.hpp: delivery_tag), and
// reads the others in the same round trip. Fields without a valid tag count for nothing, so without the
// key the count cannot be raised, nor copied from another request; deleting the record only lowers it
// (more retries: denial of service, never a wrong answer). The record goes with the answer.
//   Redis restarts     every thread reconnects (50 ms doubling to 2 s), recreates the group if it is
//                      gone, and retries the answer it holds. Answers may then arrive twice; clients
//                      drop duplicates by request id.
//   SIGTERM            stop(): threads finish the request in hand, answer and ack it, and leave.
// Caps: reply streams and the dead-letter stream are XADDed with MAXLEN ~ (reply_maxlen,
// dead_letter_maxlen); a reply stream no one writes for reply_ttl expires (clients that vanished).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fleet/fleet_redis.hpp"
#include "leap/sandbox/fleet_address.hpp"
#include "leap/sandbox/fleet_key.hpp"

namespace leap::sandbox {

struct FleetMemberOptions {
  RedisAddress redis;
  std::string stream{fleet_default_stream};
  std::string group{fleet_default_group};
  std::string name;        // the consumer's name, unique per member process; empty = "<hostname>-<pid>"
  unsigned jobs = 2;       // requests handled at a time
  int max_deliveries = 3;  // a request delivered this often without an answer is dead-lettered
  std::chrono::milliseconds claim_grace{5000};           // added to a request's limits (see claim_idle_for)
  std::chrono::milliseconds compile_wall_limit{100000};  // the most wall-clock time one compile may take
                                                         // (the compiler's backstop: 10 x its CPU-time limit)
  std::chrono::milliseconds eval_start_timeout{60000};   // a fresh GPU runner's start-up limit
  std::chrono::milliseconds claim_interval{500};         // how often the pending list is scanned
  std::chrono::milliseconds block{500};  // XREADGROUP BLOCK; bounds how long a stop waits for an idle thread
  // How long a Redis reply may stay silent before the connection counts as lost. Redis is single-threaded:
  // while it takes in or sends out an entry of hundreds of MB on a loaded machine it answers no one for
  // seconds, and a shorter limit would turn that into reconnects, redeliveries and a dead-lettered request.
  std::chrono::milliseconds redis_timeout{30000};
  std::size_t reply_maxlen = 10000;                      // MAXLEN ~ of every reply stream
  std::size_t dead_letter_maxlen = 10000;                // MAXLEN ~ of the dead-letter stream
  std::chrono::seconds reply_ttl{86400};                 // a reply stream unwritten this long expires
  std::size_t max_request_bytes = std::size_t{4} << 20;  // a longer request line is answered request_too_large
  std::optional<FleetKey> key;                           // the fleet key; unset: from the environment (fleet_key.hpp)
  std::optional<fleet::RedisCredentials> credentials;    // unset: from the environment (fleet_redis.hpp)
  bool insecure_no_key = false;  // with no key anywhere, run unauthenticated instead of refusing to start

  void validate() const;  // throws std::invalid_argument naming the option and its value
};

struct FleetMemberStats {
  std::uint64_t answered = 0;       // responses written
  std::uint64_t reclaimed = 0;      // requests taken over from another consumer
  std::uint64_t dead_lettered = 0;  // requests moved to the dead-letter stream (unrun)
  std::uint64_t reconnects = 0;     // connections re-established after a failure
  std::uint64_t rejected = 0;       // entries dropped unrun: no tag, a wrong tag, or missing fields
  std::uint64_t too_large = 0;      // requests answered request_too_large (never held whole)
};

// How long a request may sit in a consumer's pending list before another member takes it over:
// claim_grace + the wall-clock time its limits allow it to run (compile: compile_wall_limit; eval:
// that + the GPU runner's start-up limit + the task's time_limit_ms, times jobs since kernels
// run one at a time; info: none). A line that does not parse gets the compile's.
std::chrono::milliseconds claim_idle_for(std::string_view request_line, const FleetMemberOptions& options);

class FleetMember {
 public:
  using Handler = std::function<std::string(std::string_view request_line)>;

  // `handler` answers one request line with one response line (RequestHandler::handle); it is called
  // from `jobs` threads at once. Throws FleetKeyError when no fleet key is found and insecure_no_key
  // is not set.
  FleetMember(FleetMemberOptions options, Handler handler);
  ~FleetMember();
  FleetMember(const FleetMember&) = delete;
  FleetMember& operator=(const FleetMember&) = delete;

  // Serves until `stop` becomes true, then finishes and acknowledges the requests in hand and
  // returns. Progress and failures are logged to `log` (one line each), when given.
  void run(const std::atomic<bool>& stop, const std::function<void(const std::string&)>& log = {});

  FleetMemberStats stats() const noexcept;
  const FleetMemberOptions& options() const noexcept;
  bool authenticated() const noexcept;  // false only when running under insecure_no_key without a key

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leap::sandbox
