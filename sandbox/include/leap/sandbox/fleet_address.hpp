// SPDX-License-Identifier: Apache-2.0
// Where the fleet's Redis is, and the names the fleet uses in it. Members and clients of one fleet
// agree on the request stream and the consumer group; everything else derives from those.
//
//   redis://HOST:PORT[/DB]       HOST a name, an IPv4 address or [IPv6]; PORT defaults to 6379
//
// The password never appears in a URL or on a command line (both end up in `ps`, shell histories and
// logs): it is read from the environment variable LEAP_SANDBOX_REDIS_PASSWORD (with an optional
// LEAP_SANDBOX_REDIS_USER for an ACL user). A URL with a user or password in it is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace leap::sandbox {

inline constexpr std::string_view fleet_password_env = "LEAP_SANDBOX_REDIS_PASSWORD";
inline constexpr std::string_view fleet_user_env = "LEAP_SANDBOX_REDIS_USER";
inline constexpr std::string_view fleet_default_url = "redis://127.0.0.1:6379";
inline constexpr std::string_view fleet_default_stream = "leap:requests";
inline constexpr std::string_view fleet_default_group = "leap-sandbox";

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  friend bool operator==(const RedisAddress&, const RedisAddress&) = default;
};

// Parses redis://HOST:PORT[/DB]. Throws std::invalid_argument naming what is wrong and what to write
// instead (a password in the URL, another scheme, a bad port or database number).
RedisAddress parse_redis_url(std::string_view url);

// "redis://HOST:PORT/DB", for messages.
std::string to_string(const RedisAddress& address);

// This process in the fleet: "<hostname>-<pid>", with `fallback` where the host has no name. Members
// are named by it, and clients build their reply stream's name on it.
std::string fleet_process_name(std::string_view fallback);

// The streams that derive from a request stream's name.
std::string fleet_dead_letter_stream(std::string_view request_stream);  // "<stream>:dead"
std::string fleet_reply_stream(std::string_view request_stream,
                               std::string_view client_name);  // "<stream>:reply:<client>"

}  // namespace leap::sandbox
