// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/fleet_key.hpp"

#include <fcntl.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/key_file.hpp"
#include "common/secret_bytes.hpp"
#include "common/sha256.hpp"

namespace leap::sandbox {
namespace {

constexpr std::size_t k_max_key_file_bytes = 4096;
constexpr std::string_view k_make_a_key = "umask 077; head -c 32 /dev/urandom | base64 > fleet.key";

std::string too_short(std::size_t size, std::string_view where) {
  return "the fleet key " + std::string(where) + " is " + std::to_string(size) + " bytes; it must be at least " +
         std::to_string(fleet_key_min_bytes) + " (make one with: " + std::string(k_make_a_key) + ")";
}

// Drops trailing newlines, then checks the length; the bytes never leave secret memory.
std::shared_ptr<const detail::SecretBytes> checked(std::shared_ptr<detail::SecretBytes> key, std::string_view where) {
  std::size_t size = key->size();
  while (size > 0 && (key->data()[size - 1] == '\n' || key->data()[size - 1] == '\r')) --size;
  key->resize(size);
  if (size < fleet_key_min_bytes) throw FleetKeyError(too_short(size, where));
  return key;
}

}  // namespace

FleetKey FleetKey::from_bytes(std::string bytes) {
  std::shared_ptr<detail::SecretBytes> key = detail::secret_copy(bytes);
  ::explicit_bzero(bytes.data(), bytes.size());  // this copy is ours: leave no key behind in the heap
  return FleetKey(checked(std::move(key), "given"));
}

FleetKey FleetKey::from_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string how_to_make = "make one: umask 077; head -c 32 /dev/urandom | base64 > " + name;
  auto key = std::make_shared<detail::SecretBytes>(k_max_key_file_bytes + 1);
  try {
    const std::size_t size = detail::read_key_file(AT_FDCWD, name,
                                                   {.label = "the fleet key file",
                                                    .max_bytes = k_max_key_file_bytes,
                                                    .follow_symlinks = true,
                                                    .how_to_make = how_to_make},
                                                   key->data(), key->capacity());
    key->resize(size);
  } catch (const detail::KeyFileError& e) {
    throw FleetKeyError(e.what());
  }
  return FleetKey(checked(std::move(key), "in " + name));
}

std::optional<FleetKey> FleetKey::read_environment(bool take) {
  const char* file = std::getenv(std::string(fleet_key_file_env).c_str());
  if (file != nullptr) {
    if (*file == '\0') {
      throw FleetKeyError("$" + std::string(fleet_key_file_env) + " is set but empty; name the key file or unset it");
    }
    return from_file(file);
  }
  std::shared_ptr<detail::SecretBytes> key = detail::environment_secret(std::string(fleet_key_env).c_str(), take);
  if (key == nullptr) return std::nullopt;
  return FleetKey(checked(std::move(key), "in $" + std::string(fleet_key_env)));
}

std::optional<FleetKey> FleetKey::from_environment() { return read_environment(false); }

std::optional<FleetKey> FleetKey::take_from_environment() { return read_environment(true); }

std::string_view FleetKey::bytes() const {
  try {
    return bytes_->view();
  } catch (const std::logic_error& e) {
    throw FleetKeyError(e.what());
  }
}

std::string FleetKey::fingerprint() const {
  return to_hex(hmac_sha256(bytes(), "leap-fleet-key-fingerprint")).substr(0, 16);
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
