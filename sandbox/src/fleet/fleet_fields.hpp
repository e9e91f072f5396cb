// SPDX-License-Identifier: Apache-2.0
// The field names of the fleet's Redis stream entries: the one place the C++ side spells them
// (python/leap/fleet.py mirrors them). What the fields mean and which are signed: fleet_auth.hpp.
//
//   request entry      request, reply, session, id, tag
//   reply entry        response, worker, session, id, tag
//   dead-letter entry  request_entry, deliveries, last_consumer, reason, worker, then the request's
//                      own fields (a field never held whole as <name>_bytes, its size)
//
// Plain C strings, because they go straight into Redis command vectors of std::string. Internal.
#pragma once

namespace leap::sandbox::fleet::fields {

// A request: the request line, the client's reply stream, its session, the request id, the HMAC tag.
inline constexpr const char* request = "request";
inline constexpr const char* reply_stream = "reply";
inline constexpr const char* session = "session";
inline constexpr const char* id = "id";
inline constexpr const char* tag = "tag";

// A reply: the response line and the consumer name of the member that answered. Spelled "worker" on
// the wire since 0.1, when the member was called a worker; kept so that every client reads it.
inline constexpr const char* response = "response";
inline constexpr const char* member = "worker";

// A dead letter: the request entry's id, how often it was delivered, to whom last, and why it stopped.
inline constexpr const char* request_entry = "request_entry";
inline constexpr const char* deliveries = "deliveries";
inline constexpr const char* last_consumer = "last_consumer";
inline constexpr const char* reason = "reason";
// Appended to a field's name when a dead letter keeps only its size.
inline constexpr const char* size_suffix = "_bytes";

}  // namespace leap::sandbox::fleet::fields
