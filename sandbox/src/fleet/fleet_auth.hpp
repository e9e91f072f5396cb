// SPDX-License-Identifier: Apache-2.0
// The tags that authenticate fleet messages. A request entry carries
//   request = <JSON line>, reply = <reply stream>, session = <the client's>, id = <request id>, tag
// and a reply entry
//   response = <JSON line>, worker = <consumer>, session, id, tag
// where tag = hex HMAC-SHA256 under the fleet key of: a version label, the kind (request or reply),
// the fleet's request stream, the reply stream, the session, the id and the SHA-256 of the line, each
// as a netstring ("<length>:<bytes>,"), so no two different tuples read the same. A tag therefore
// cannot be moved to another request, another client, another fleet or from a request to a reply.
// The line enters as its digest so a member can check a request it only streams past (a line over
// the size limit is never held whole). The session is random per client object and process: a reply
// is matched to its sender by (session, id), never by id alone. A member's record of a delivery is
// tagged the same way (delivery_tag), bound to the request entry and its tag.
#pragma once

#include <string>
#include <string_view>

#include "leap/sandbox/fleet_key.hpp"
#include "common/sha256.hpp"

namespace leap::sandbox::fleet {

inline constexpr std::string_view tag_version = "leap-fleet-v1";

enum class MessageKind { request, reply };

// What a tag covers.
struct SignedFields {
  MessageKind kind = MessageKind::request;
  std::string_view stream;        // the fleet's request stream
  std::string_view reply_stream;  // "<stream>:reply:<client>"
  std::string_view session;       // the client's session
  std::string_view id;            // the request id as the id field holds it (decimal)
  Digest line_digest{};           // SHA-256 of the request or response line
};

// The bytes the HMAC is taken over (exposed for tests and for the Python client to mirror).
std::string signed_message(const SignedFields& fields);
// Hex HMAC-SHA256 of signed_message(fields) under `key`.
std::string sign(const FleetKey& key, const SignedFields& fields);
// True when `tag` is the tag of `fields` under `key`; compared in constant time. Anything but 64 hex
// digits is false.
bool verify(const FleetKey& key, const SignedFields& fields, std::string_view tag);

// A member's record of one delivery of a request entry to it (see fleet_member.hpp): hex HMAC-SHA256
// under `key` of the version label, "delivery", the fleet's request stream, the entry's id, the
// request's own tag (which covers its reply stream, session, id and line) and the record's name, as
// netstrings. Valid for that delivery of that entry alone: it cannot be moved to another entry or
// request, and without the key none can be made.
std::string delivery_tag(const FleetKey& key, std::string_view stream, std::string_view entry_id,
                         std::string_view request_tag, std::string_view record);
bool verify_delivery(const FleetKey& key, std::string_view stream, std::string_view entry_id,
                     std::string_view request_tag, std::string_view record, std::string_view tag);

// A fresh session: "<pid>-<32 random hex digits>".
std::string new_session();
// `digits` random hex digits.
std::string random_hex(std::size_t digits);

}  // namespace leap::sandbox::fleet
