// SPDX-License-Identifier: Apache-2.0
// The fleet's shared key. Clients sign every request and members every reply with it (HMAC-SHA256,
// see fleet_client.hpp and `leap-sandbox fleet-member`), so whoever can write to the fleet's Redis but does not
// hold the key can neither submit work nor forge a verdict.
//
// Where the key comes from, first match wins; never from a command line (ps, shell histories):
//   1. FleetClientOptions::key / FleetMemberOptions::key (leap-sandbox fleet-member --key-file FILE)
//   2. $LEAP_FLEET_KEY_FILE, naming a file that holds the key
//   3. $LEAP_FLEET_KEY, holding the key itself
// A key is at least 16 bytes (trailing newlines of a file are not part of it); a key file must be a
// regular file of at most 4 KiB, owned by the process's effective user, that neither group nor others
// may use (chmod 600); it is opened without blocking (a FIFO does not stall), and a symbolic link is
// followed to the file it names. docs/fleet.md lists the rules in order. Make one with
//   umask 077; head -c 32 /dev/urandom | base64 > fleet.key
// The key's bytes live in memory that no forked child inherits (the compile processes a member forks
// parse hostile source): a FleetKey cannot cross a fork, read it again in the child.
// With no key at all, clients and members refuse to start unless told `insecure_no_key`
// (leap-sandbox fleet-member --insecure-no-key): then nothing is signed or checked, and the member says so
// in its log.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace leap::sandbox {

namespace detail {
class SecretBytes;  // memory a forked child does not inherit (internal)
}

inline constexpr std::string_view fleet_key_file_env = "LEAP_FLEET_KEY_FILE";
inline constexpr std::string_view fleet_key_env = "LEAP_FLEET_KEY";
inline constexpr std::size_t fleet_key_min_bytes = 16;

// No usable key: too short, a key file refused by the rules above (its message names the file, what is
// wrong and the fix), no key where one is required, a key used in a forked child, ...
class FleetKeyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FleetKey {
 public:
  // Throws FleetKeyError for a key shorter than fleet_key_min_bytes.
  static FleetKey from_bytes(std::string bytes);
  // The file's content less trailing "\r\n". Throws FleetKeyError when the file breaks a rule above
  // (not a regular file, not the process's user's, open to group or others, larger than 4 KiB), cannot
  // be read, or holds too short a key.
  static FleetKey from_file(const std::filesystem::path& path);
  // $LEAP_FLEET_KEY_FILE, else $LEAP_FLEET_KEY; nullopt when neither is set. A variable that is set
  // but names no usable key throws FleetKeyError (a typo must not turn authentication off).
  static std::optional<FleetKey> from_environment();
  // As from_environment, and then $LEAP_FLEET_KEY is removed from this process's environment, its bytes
  // overwritten first, so that no process started from here later inherits it: for a long-lived process
  // that starts others (leap-sandbox fleet-member). Call it before threads that read the environment.
  static std::optional<FleetKey> take_from_environment();

  // What to log about the key: 8 bytes of a hash of it, enough to see that two processes share a
  // key, useless for finding it.
  std::string fingerprint() const;
  // The key itself. Throws FleetKeyError in a forked child of the process that read it.
  std::string_view bytes() const;

 private:
  explicit FleetKey(std::shared_ptr<const detail::SecretBytes> bytes) : bytes_(std::move(bytes)) {}
  static std::optional<FleetKey> read_environment(bool take);
  std::shared_ptr<const detail::SecretBytes> bytes_;
};

// The key a client or member runs with: `given`, else the environment's; nullopt only when
// `insecure_no_key` is set and no key was found. Otherwise throws FleetKeyError saying how to provide
// one. `who` names the caller in the message.
std::optional<FleetKey> resolve_fleet_key(const std::optional<FleetKey>& given, bool insecure_no_key,
                                          std::string_view who);

}  // namespace leap::sandbox
