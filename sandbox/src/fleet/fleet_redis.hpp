// SPDX-License-Identifier: Apache-2.0
// One synchronous Redis connection (hiredis) for the fleet's member and client: argv commands, owned
// replies, and one exception for "the connection is gone" that callers answer by reconnecting.
// Not thread-safe: one connection per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/secret_bytes.hpp"
#include "fleet/fleet_bounded_reply.hpp"
#include "leap/sandbox/fleet_address.hpp"
#include "common/sha256.hpp"

struct redisContext;
struct redisReply;

namespace leap::sandbox::fleet {

// The connection failed or broke (Redis restarted, network down). Reconnect and retry.
class RedisDisconnected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Redis answered with an error reply (wrong type, unknown group, ...).
class RedisCommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept;
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// Read-only helpers over a reply.
bool is_nil(const redisReply* r) noexcept;
bool is_error(const redisReply* r) noexcept;
bool is_array(const redisReply* r) noexcept;
std::size_t size(const redisReply* r) noexcept;
const redisReply* at(const redisReply* r, std::size_t i) noexcept;  // element i of an array
std::string_view text(const redisReply* r) noexcept;                // string/status/error; "" otherwise
long long integer(const redisReply* r) noexcept;                    // integer reply (or a numeric string)

// One stream entry: its id and its field/value pairs. Read with bounded memory (RedisConnection::
// bounded_command), a value may hold only its start: `lengths` has each value's full length and
// `digests` its SHA-256, and `complete` is false when fields were dropped altogether.
struct StreamEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::size_t> lengths;  // parallel to fields
  std::vector<Digest> digests;       // parallel to fields
  bool complete = true;
  const std::string* field(std::string_view name) const noexcept;
  // The index of a field, or fields.size() when it is absent.
  std::size_t index(std::string_view name) const noexcept;
  // The field is there and its value was kept whole.
  bool whole(std::string_view name) const noexcept;
};
// Entries of an XRANGE / XCLAIM reply, or of one stream in an XREAD(GROUP) reply. Entries already
// deleted from the stream (nil bodies) come back with no fields.
std::vector<StreamEntry> parse_entries(const redisReply* entries);
std::vector<StreamEntry> parse_entries(BoundedReply&& entries);  // moves the values out

// The password (and ACL user) from the environment, never from a command line. The password lives in
// secret memory (common/secret_bytes.hpp), shared by the copies, and reaches Redis without passing
// through hiredis's buffers, so no forked child of this process holds it.
struct RedisCredentials {
  std::string user;
  std::shared_ptr<const detail::SecretBytes> password;  // null: none
  static RedisCredentials from_environment();
  // As from_environment, and then both variables are removed from this process's environment (the
  // password's bytes overwritten first): see FleetKey::take_from_environment.
  static RedisCredentials take_from_environment();
};

class RedisConnection {
 public:
  RedisConnection(RedisAddress address, RedisCredentials credentials,
                  std::chrono::milliseconds io_timeout = std::chrono::milliseconds(5000));
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Connects (AUTH, SELECT) if not connected. Throws RedisDisconnected when Redis cannot be reached,
  // std::runtime_error when it refuses the credentials.
  void connect();
  bool connected() const noexcept { return context_ != nullptr; }
  void close() noexcept;

  // Runs one command; connects first if needed. An I/O failure closes the connection and throws
  // RedisDisconnected; an error reply throws RedisCommandError. `block` widens the read timeout for
  // a blocking command (XREAD ... BLOCK ms).
  Reply command(const std::vector<std::string>& argv, std::chrono::milliseconds block = std::chrono::milliseconds(0));

  // Sends all commands in one write and reads their replies: one round trip. An I/O failure or a Redis
  // still loading (LOADING) closes the connection and throws RedisDisconnected; other error replies
  // are returned (see is_error), not thrown.
  std::vector<Reply> pipeline(const std::vector<std::vector<std::string>>& commands);

  // Runs one command and reads its reply with bounded memory (see fleet_bounded_reply.hpp): for
  // commands whose reply holds stream entries anyone may have written (XREADGROUP, XCLAIM, XRANGE).
  // Failures as command().
  BoundedReply bounded_command(const std::vector<std::string>& argv, const BoundedLimits& limits,
                               std::chrono::milliseconds block = std::chrono::milliseconds(0));
  // Sends all commands in one write and reads their replies with bounded memory, `limits` shared by
  // all of them: one round trip. Error replies are returned, not thrown; I/O failures as pipeline().
  std::vector<BoundedReply> bounded_pipeline(const std::vector<std::vector<std::string>>& commands,
                                             const BoundedLimits& limits);

  const RedisAddress& address() const noexcept { return address_; }

 private:
  void use_timeout(std::chrono::milliseconds block);
  void authenticate();  // AUTH [user] password, written from secret memory straight to the socket
  // Appends the commands, writes them all and reads their replies (bounded); the reply that is an
  // error is returned as one.
  std::vector<BoundedReply> bounded_replies(const std::vector<std::vector<std::string>>& commands,
                                            const BoundedLimits& limits, std::chrono::milliseconds block);

  RedisAddress address_;
  RedisCredentials credentials_;
  std::chrono::milliseconds io_timeout_;
  std::chrono::milliseconds current_timeout_{0};
  redisContext* context_ = nullptr;
};

// Waits before reconnect attempt k (0-based): 50 ms doubling to 2 s, so a restart is noticed quickly
// and a long outage costs little.
std::chrono::milliseconds reconnect_delay(int attempt) noexcept;

}  // namespace leap::sandbox::fleet
