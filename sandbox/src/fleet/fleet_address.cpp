// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/fleet_address.hpp"

#include <unistd.h>

#include <charconv>
#include <stdexcept>

namespace leap::sandbox {
namespace {

[[noreturn]] void bad_url(std::string_view url, const std::string& what) {
  throw std::invalid_argument("Redis URL '" + std::string(url) + "': " + what +
                              " (expected redis://HOST:PORT[/DB], e.g. redis://10.0.0.5:6379/0)");
}

int number_in(std::string_view url, std::string_view text, const char* what, int lo, int hi) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) {
    bad_url(url, std::string(what) + " '" + std::string(text) + "' is not a number in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return value;
}

}  // namespace

RedisAddress parse_redis_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (url.starts_with("rediss://")) {
    bad_url(url,
            "TLS (rediss://) is not built into this client; reach a TLS Redis through a local tunnel "
            "(stunnel, spiped) on a loopback port, or keep Redis on a private network");
  }
  if (!url.starts_with(scheme)) bad_url(url, "the scheme must be redis://");
  std::string_view rest = url.substr(scheme.size());
  std::string_view path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (rest.find('@') != std::string_view::npos) {
    bad_url(url, "credentials in a URL end up in ps and logs; put the password in $" + std::string(fleet_password_env) +
                     " (and an ACL user in $" + std::string(fleet_user_env) + ") instead");
  }
  RedisAddress address;
  std::string_view port;
  if (rest.starts_with('[')) {  // [IPv6]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos) bad_url(url, "an IPv6 host needs its closing ']'");
    address.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad_url(url, "expected ':' after the IPv6 host");
      port = rest.substr(1);
      if (port.empty()) bad_url(url, "an empty port");
    }
  } else {
    const auto colon = rest.find(':');
    address.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = rest.substr(colon + 1);
      if (port.empty()) bad_url(url, "an empty port");
    }
  }
  if (address.host.empty()) bad_url(url, "no host");
  if (!port.empty()) address.port = number_in(url, port, "port", 1, 65535);
  if (!path.empty()) address.db = number_in(url, path, "database", 0, 1 << 20);
  return address;
}

std::string fleet_process_name(std::string_view fallback) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    return std::string(fallback) + "-" + std::to_string(::getpid());
  return std::string(host) + "-" + std::to_string(::getpid());
}

std::string to_string(const RedisAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return "redis://" + (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port) + "/" +
         std::to_string(address.db);
}

std::string fleet_dead_letter_stream(std::string_view request_stream) { return std::string(request_stream) + ":dead"; }

std::string fleet_reply_stream(std::string_view request_stream, std::string_view client_name) {
  return std::string(request_stream) + ":reply:" + std::string(client_name);
}

}  // namespace leap::sandbox
