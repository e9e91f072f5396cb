// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/fleet_key.hpp"

#include <fcntl.h>

#include <cstdlib>

#include "common/key_file.hpp"
#include "common/sha256.hpp"

namespace leap::sandbox {
namespace {

constexpr std::size_t k_max_key_file_bytes = 4096;

std::string too_short(std::size_t size, std::string_view where) {
  return "the fleet key " + std::string(where) + " is " + std::to_string(size) + " bytes; it must be at least " +
         std::to_string(fleet_key_min_bytes) +
         " (make one with: umask 077; head -c 32 /dev/urandom | base64 > fleet.key)";
}

void trim_newlines(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
}

}  // namespace

FleetKey FleetKey::from_bytes(std::string bytes) {
  if (bytes.size() < fleet_key_min_bytes) throw FleetKeyError(too_short(bytes.size(), "given"));
  return FleetKey(std::move(bytes));
}

FleetKey FleetKey::from_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string how_to_make = "make one: umask 077; head -c 32 /dev/urandom | base64 > " + name;
  std::string bytes(k_max_key_file_bytes + 1, '\0');
  try {
    bytes.resize(detail::read_key_file(AT_FDCWD, name,
                                       {.label = "the fleet key file",
                                        .max_bytes = k_max_key_file_bytes,
                                        .follow_symlinks = true,
                                        .how_to_make = how_to_make},
                                       bytes.data(), bytes.size()));
  } catch (const detail::KeyFileError& e) {
    throw FleetKeyError(e.what());
  }
  trim_newlines(bytes);
  if (bytes.size() < fleet_key_min_bytes) throw FleetKeyError(too_short(bytes.size(), "in " + name));
  return FleetKey(std::move(bytes));
}

std::optional<FleetKey> FleetKey::from_environment() {
  const char* file = std::getenv(std::string(fleet_key_file_env).c_str());
  if (file != nullptr) {
    if (*file == '\0') {
      throw FleetKeyError("$" + std::string(fleet_key_file_env) + " is set but empty; name the key file or unset it");
    }
    return from_file(file);
  }
  const char* key = std::getenv(std::string(fleet_key_env).c_str());
  if (key != nullptr) {
    std::string bytes = key;
    trim_newlines(bytes);
    if (bytes.size() < fleet_key_min_bytes)
      throw FleetKeyError(too_short(bytes.size(), "in $" + std::string(fleet_key_env)));
    return FleetKey(std::move(bytes));
  }
  return std::nullopt;
}

std::string FleetKey::fingerprint() const {
  return to_hex(hmac_sha256(bytes_, "leap-fleet-key-fingerprint")).substr(0, 16);
}

std::optional<FleetKey> resolve_fleet_key(const std::optional<FleetKey>& given, bool insecure_no_key,
                                          std::string_view who) {
  if (given) return given;
  if (std::optional<FleetKey> key = FleetKey::from_environment()) return key;
  if (insecure_no_key) return std::nullopt;
  throw FleetKeyError(std::string(who) +
                      ": no fleet key. Requests and replies are signed with a key shared by the fleet's clients and "
                      "members; put at least " +
                      std::to_string(fleet_key_min_bytes) +
                      " random bytes in a file only you can read (umask 077; head -c 32 /dev/urandom | base64 > "
                      "fleet.key) and name it in $" +
                      std::string(fleet_key_file_env) +
                      " (leap-sandbox fleet-member: --key-file), or put the key in $" + std::string(fleet_key_env) +
                      ". To run without authentication (anyone who can write to the fleet's Redis can then submit "
                      "work and forge verdicts), opt out explicitly with insecure_no_key (--insecure-no-key)");
}

}  // namespace leap::sandbox
