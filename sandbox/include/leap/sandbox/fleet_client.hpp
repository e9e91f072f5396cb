// SPDX-License-Identifier: Apache-2.0
// The trainer's side of a sandbox fleet (whose members run `leap-sandbox fleet-member`): submits requests to the
// fleet's request stream and collects the answers from its own reply stream, "<stream>:reply:<name>".
//
//   leap::sandbox::FleetClient fleet({.redis = leap::sandbox::parse_redis_url("redis://10.0.0.5:6379")});
//   auto answer = fleet.eval(leap::sandbox::FleetTask::builtin("softmax"), source);   // std::future
//   leap::sandbox::FleetReply reply = answer.get();   // reply.ok, reply.result (JSON), reply.code, reply.error
//
// Every future resolves: to an answer, to an error (FleetTimeout at its deadline; the client closed),
// and a request the members could not read is never sent. submit(), compile() and eval() check each
// request by the members' reader's rules and throw RequestEncodingError (request_encoding_error.hpp)
// naming the field: a string or key that is not valid UTF-8 (the source is sent as it is or not at
// all, never altered), a NaN or infinite number, nesting past 64, a line past max_request_bytes.
// A member's answer to a line it could not read anyway ("id": null: parse_error, or dead_lettered)
// settles the request named by the reply entry's id field, which the member signs with the line.
// Ids: the client numbers its requests (1, 2, ...) and matches answers by that id. Delivery is at
// least once (a request whose member died or whose answer was cut off by a Redis restart may be
// answered twice); a second answer for an id is dropped and counted, so each future gets exactly one.
// Timeouts: each request has a deadline (FleetClientOptions::timeout unless given); a future still
// unanswered then holds a FleetTimeout. Reconnects: the reader and the submitter reconnect after a
// Redis restart (50 ms doubling to 2 s) and the reader resumes after the last answer it saw. During
// an outage submit() waits for Redis, at most until the request's deadline.
// Authentication: every request is signed under the fleet key (fleet_key.hpp: from the options or the
// environment; no key, no client, unless insecure_no_key). An answer counts only with a valid tag over
// its line, its id, this client's reply stream and session: anything else on the reply stream
// (unsigned, forged, or a real answer copied from another client) is dropped, counted
// (FleetClientStats::forged_dropped) and reported to FleetClientOptions::log, and the real answer,
// arriving later, still settles the future. The reply stream is read with bounded memory (at most
// 64 MiB per read; an entry over 32 MiB is streamed past and dropped), so a huge entry written there
// costs the trainer no memory.
// Fork: a client belongs to the process that made it. Used in a forked child (its reader thread does
// not exist there, its connections are the parent's), it throws std::logic_error saying to create a
// new client in the child; answers are matched by (session, id) and the session is random per client
// and process, so no answer ever reaches another client's future.
// Thread-safe: submit from any number of threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "leap/sandbox/fleet_address.hpp"
#include "leap/sandbox/fleet_key.hpp"
#include "leap/sandbox/request_encoding_error.hpp"

namespace leap::sandbox {

struct FleetClientOptions {
  RedisAddress redis;
  std::string stream{fleet_default_stream};
  std::string name;  // names the reply stream; unique per client; empty = "<hostname>-<pid>-<counter>"
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // submit to answer, unless submit says otherwise
  std::size_t request_maxlen = 1000000;  // MAXLEN ~ of the request stream: the most requests waiting
  // The members' --max-request-bytes: a longer request line is refused at submit (RequestEncodingError).
  std::size_t max_request_bytes = std::size_t{4} << 20;
  std::chrono::milliseconds block{200};  // XREAD BLOCK of the reader; also how often deadlines are checked
  std::optional<FleetKey> key;           // the fleet key; unset: from the environment (fleet_key.hpp)
  bool insecure_no_key = false;          // with no key anywhere, run unauthenticated instead of refusing
  // Where dropped forged answers (the 1st, 2nd, 4th, 8th, ...) and failures of the reader to reach
  // Redis (the first of each run) are reported; empty: standard error.
  std::function<void(const std::string&)> log;

  void validate() const;  // throws std::invalid_argument naming the option and its value
};

// One answer. `result` is the response's "result" object as JSON text (ok); `code` (!ok) the failure's
// code, e.g. "parse_error" (a line the member could not read), "request_too_large", "dead_lettered",
// "internal_error", "bad_request" (docs/serve-protocol.md), empty when the answer has none; `error` its
// message (!ok).
struct FleetReply {
  std::uint64_t id = 0;
  bool ok = false;
  std::string result;
  std::string code;
  std::string error;
  std::string member;  // the fleet member that answered (its consumer name; the entry's "worker" field)
  std::string line;    // the whole response line, as the member's handler wrote it
};

// The request's deadline passed without an answer.
class FleetTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What to evaluate against: a built-in task by name, or a task spec (JSON object text).
struct FleetTask {
  std::string name;
  std::string spec_json;
  static FleetTask builtin(std::string name) { return {std::move(name), {}}; }
  static FleetTask spec(std::string json) { return {{}, std::move(json)}; }
};

struct FleetClientStats {
  std::uint64_t submitted = 0;
  std::uint64_t answered = 0;
  std::uint64_t duplicates_dropped = 0;  // second answers for an id, and answers to no request of ours
  std::uint64_t timeouts = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t forged_dropped = 0;  // answers without a valid tag (unsigned, forged, copied): never delivered
};

class FleetClient {
 public:
  // Connects (throws std::runtime_error when Redis cannot be reached or refuses the password in
  // $LEAP_SANDBOX_REDIS_PASSWORD; FleetKeyError without a fleet key) and starts the reader.
  explicit FleetClient(FleetClientOptions options);
  // Fails the futures still waiting (std::runtime_error) and deletes the reply stream.
  ~FleetClient();
  FleetClient(const FleetClient&) = delete;
  FleetClient& operator=(const FleetClient&) = delete;

  // A request object as JSON text, without "id" (the client numbers requests), e.g.
  // {"op": "compile", "source": "..."}. Throws RequestEncodingError (a std::invalid_argument) for a
  // request the members could not read, naming the field (nothing is sent, nothing waits),
  // std::invalid_argument for anything else that is not such an object, and std::logic_error in a
  // forked child (see above). A FleetTask::spec that is not JSON text is a RequestEncodingError of
  // field "task".
  std::future<FleetReply> submit(std::string_view request_json, std::optional<std::chrono::milliseconds> timeout = {});
  std::future<FleetReply> compile(std::string_view source, std::string_view arch = {},
                                  std::optional<std::chrono::milliseconds> timeout = {});
  std::future<FleetReply> eval(const FleetTask& task, std::string_view source,
                               std::optional<std::chrono::milliseconds> timeout = {});
  std::future<FleetReply> info(std::optional<std::chrono::milliseconds> timeout = {});

  FleetClientStats stats() const noexcept;
  std::size_t pending() const;  // submitted, not yet answered or timed out
  const std::string& reply_stream() const noexcept;
  const FleetClientOptions& options() const noexcept;
  bool authenticated() const noexcept;  // false only under insecure_no_key without a key

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leap::sandbox
