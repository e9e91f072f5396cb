// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_redis.hpp"

#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace leap::sandbox::fleet {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis takes a command as two parallel arrays: the arguments' addresses and their lengths.
struct ArgvArrays {
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  explicit ArgvArrays(const std::vector<std::string>& argv) {
    args.reserve(argv.size());
    lengths.reserve(argv.size());
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
  }
  int count() const { return static_cast<int>(args.size()); }
};

}  // namespace

void ReplyDeleter::operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }

bool is_nil(const redisReply* r) noexcept { return r == nullptr || r->type == REDIS_REPLY_NIL; }
bool is_error(const redisReply* r) noexcept { return r != nullptr && r->type == REDIS_REPLY_ERROR; }
bool is_array(const redisReply* r) noexcept { return r != nullptr && r->type == REDIS_REPLY_ARRAY; }
std::size_t size(const redisReply* r) noexcept { return is_array(r) ? r->elements : 0; }
const redisReply* at(const redisReply* r, std::size_t i) noexcept {
  return is_array(r) && i < r->elements ? r->element[i] : nullptr;
}
std::string_view text(const redisReply* r) noexcept {
  if (r == nullptr) return {};
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR) {
    return {r->str, r->len};
  }
  return {};
}
long long integer(const redisReply* r) noexcept {
  if (r == nullptr) return 0;
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type == REDIS_REPLY_STRING) return std::strtoll(std::string(r->str, r->len).c_str(), nullptr, 10);
  return 0;
}

const std::string* StreamEntry::field(std::string_view name) const noexcept {
  const std::size_t i = index(name);
  return i < fields.size() ? &fields[i].second : nullptr;
}

std::size_t StreamEntry::index(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].first == name) return i;
  }
  return fields.size();
}

bool StreamEntry::whole(std::string_view name) const noexcept {
  const std::size_t i = index(name);
  return i < fields.size() && i < lengths.size() && fields[i].second.size() == lengths[i];
}

std::vector<StreamEntry> parse_entries(const redisReply* entries) {
  std::vector<StreamEntry> out;
  for (std::size_t i = 0; i < size(entries); ++i) {
    const redisReply* entry = at(entries, i);
    if (is_nil(entry)) continue;  // XCLAIM of an entry deleted meanwhile
    StreamEntry e;
    e.id = std::string(text(at(entry, 0)));
    const redisReply* body = at(entry, 1);
    for (std::size_t k = 0; k + 1 < size(body); k += 2) {
      const std::string_view value = text(at(body, k + 1));
      e.fields.emplace_back(std::string(text(at(body, k))), std::string(value));
      e.lengths.push_back(value.size());
      e.digests.push_back(sha256(value));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<StreamEntry> parse_entries(BoundedReply&& entries) {
  std::vector<StreamEntry> out;
  if (entries.type != BoundedReply::Type::array) return out;
  for (BoundedReply& entry : entries.elements) {
    if (entry.type != BoundedReply::Type::array || entry.elements.empty()) continue;  // deleted meanwhile
    StreamEntry e;
    e.id = entry.elements[0].text;
    e.complete = entry.whole() && entry.elements[0].whole();
    if (entry.elements.size() > 1) {
      BoundedReply& body = entry.elements[1];
      e.complete = e.complete && body.whole() && body.length % 2 == 0;
      for (std::size_t k = 0; k + 1 < body.elements.size(); k += 2) {
        BoundedReply& key = body.elements[k];
        BoundedReply& value = body.elements[k + 1];
        if (!key.whole()) {  // a field name cut short names nothing: the entry is not complete
          e.complete = false;
          continue;
        }
        e.fields.emplace_back(std::move(key.text), std::move(value.text));
        e.lengths.push_back(value.length);
        e.digests.push_back(value.digest);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

RedisCredentials credentials_from_environment(bool take) {
  RedisCredentials c;
  c.password = detail::environment_secret(std::string(fleet_password_env).c_str(), take);
  if (const char* u = std::getenv(std::string(fleet_user_env).c_str()); u != nullptr) c.user = u;
  if (take) ::unsetenv(std::string(fleet_user_env).c_str());
  return c;
}

}  // namespace

RedisCredentials RedisCredentials::from_environment() { return credentials_from_environment(false); }

RedisCredentials RedisCredentials::take_from_environment() { return credentials_from_environment(true); }

RedisConnection::RedisConnection(RedisAddress address, RedisCredentials credentials,
                                 std::chrono::milliseconds io_timeout)
    : address_(std::move(address)), credentials_(std::move(credentials)), io_timeout_(io_timeout) {}

RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() noexcept {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

void RedisConnection::connect() {
  if (context_ != nullptr) return;
  redisContext* c = redisConnectWithTimeout(address_.host.c_str(), address_.port, to_timeval(io_timeout_));
  if (c == nullptr || c->err != 0) {
    const std::string why = c != nullptr ? c->errstr : "out of memory";
    if (c != nullptr) redisFree(c);
    throw RedisDisconnected("cannot reach Redis at " + to_string(address_) + ": " + why);
  }
  redisSetTimeout(c, to_timeval(io_timeout_));
  redisEnableKeepAlive(c);
  context_ = c;
  current_timeout_ = io_timeout_;
  try {
    if (credentials_.password != nullptr && credentials_.password->size() > 0) authenticate();
    if (address_.db != 0) command({"SELECT", std::to_string(address_.db)});
  } catch (const RedisCommandError& e) {
    close();
    throw std::runtime_error("Redis at " + to_string(address_) + " refused the connection: " + e.what() + " (set $" +
                             std::string(fleet_password_env) + " to the server's password)");
  }
}

void RedisConnection::authenticate() {
  // The command in RESP, built in secret memory and written to the socket here: through hiredis it
  // would be formatted into hiredis's own buffers, freed unwiped, and copied into every later fork.
  const std::string_view password = credentials_.password->view();
  const auto bulk = [](std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n"; };
  const std::string head = std::string(credentials_.user.empty() ? "*2\r\n" : "*3\r\n") + bulk("AUTH") + "AUTH\r\n" +
                           (credentials_.user.empty() ? "" : bulk(credentials_.user) + credentials_.user + "\r\n") +
                           bulk(password);
  detail::SecretBytes message(head.size() + password.size() + 2);
  std::memcpy(message.data(), head.data(), head.size());
  std::memcpy(message.data() + head.size(), password.data(), password.size());
  std::memcpy(message.data() + head.size() + password.size(), "\r\n", 2);
  message.resize(message.capacity());
  std::string_view out = message.view();
  while (!out.empty()) {  // the socket is blocking, with the connection's timeout as its send timeout
    const ssize_t n = ::send(context_->fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      close();
      throw RedisDisconnected("lost the connection to Redis at " + to_string(address_) + " (AUTH): " + why);
    }
    out.remove_prefix(static_cast<std::size_t>(n));
  }
  void* raw = nullptr;
  if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
    const std::string why = context_->errstr;
    close();
    throw RedisDisconnected("lost the connection to Redis at " + to_string(address_) + " (AUTH): " + why);
  }
  const Reply reply(static_cast<redisReply*>(raw));
  if (reply->type == REDIS_REPLY_ERROR) throw RedisCommandError("AUTH: " + std::string(text(reply.get())));
}

void RedisConnection::use_timeout(std::chrono::milliseconds block) {
  const std::chrono::milliseconds wanted = block.count() > 0 ? io_timeout_ + block : io_timeout_;
  if (wanted != current_timeout_) {
    redisSetTimeout(context_, to_timeval(wanted));
    current_timeout_ = wanted;
  }
}

Reply RedisConnection::command(const std::vector<std::string>& argv, std::chrono::milliseconds block) {
  connect();
  use_timeout(block);
  ArgvArrays a(argv);
  auto* raw = static_cast<redisReply*>(redisCommandArgv(context_, a.count(), a.args.data(), a.lengths.data()));
  if (raw == nullptr) {
    const std::string why = context_->errstr;
    close();
    throw RedisDisconnected("lost the connection to Redis at " + to_string(address_) + " (" + argv.front() +
                            "): " + why);
  }
  Reply reply(raw);
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string_view message = text(reply.get());
    // A Redis that is loading its data after a restart answers LOADING: wait and retry like a disconnect.
    if (message.starts_with("LOADING") || message.starts_with("MASTERDOWN")) {
      close();
      throw RedisDisconnected("Redis at " + to_string(address_) + " is not ready: " + std::string(message));
    }
    throw RedisCommandError(argv.front() + ": " + std::string(message));
  }
  return reply;
}

std::vector<Reply> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  connect();
  if (current_timeout_ != io_timeout_) {
    redisSetTimeout(context_, to_timeval(io_timeout_));
    current_timeout_ = io_timeout_;
  }
  for (const auto& argv : commands) {
    ArgvArrays a(argv);
    if (redisAppendCommandArgv(context_, a.count(), a.args.data(), a.lengths.data()) != REDIS_OK) {
      const std::string why = context_->errstr;
      close();
      throw RedisDisconnected("lost the connection to Redis at " + to_string(address_) + ": " + why);
    }
  }
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      const std::string why = context_->errstr;
      close();
      throw RedisDisconnected("lost the connection to Redis at " + to_string(address_) + " (" + commands[i].front() +
                              "): " + why);
    }
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
  // A Redis still loading its data after a restart answers every command LOADING: a disconnect to wait
  // out, as command() treats it, not an error reply that would make a caller give up on an answer.
  for (const Reply& reply : replies) {
    const std::string_view message = is_error(reply.get()) ? text(reply.get()) : std::string_view();
    if (message.starts_with("LOADING") || message.starts_with("MASTERDOWN")) {
      const std::string what(message);
      close();
      throw RedisDisconnected("Redis at " + to_string(address_) + " is not ready: " + what);
    }
  }
  return replies;
}

std::vector<BoundedReply> RedisConnection::bounded_replies(const std::vector<std::vector<std::string>>& commands,
                                                           const BoundedLimits& limits,
                                                           std::chrono::milliseconds block) {
  connect();
  use_timeout(block);
  auto lost = [&](const std::string& why) {
    close();
    return RedisDisconnected("lost the connection to Redis at " + to_string(address_) + " (" +
                             commands.front().front() + "): " + why);
  };
  // hiredis reads replies into its own buffer; these commands' replies must be all on the socket.
  if (context_->reader != nullptr && context_->reader->pos != context_->reader->len) {
    throw lost("unread reply bytes before a bounded read");
  }
  for (const auto& argv : commands) {
    ArgvArrays a(argv);
    if (redisAppendCommandArgv(context_, a.count(), a.args.data(), a.lengths.data()) != REDIS_OK) {
      throw lost(context_->errstr);
    }
  }
  for (int done = 0; done == 0;) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) throw lost(context_->errstr);
  }
  const int fd = context_->fd;
  BoundedReader reader(
      [fd](char* buffer, std::size_t size) -> std::size_t {
        for (;;) {
          const ssize_t n = ::recv(fd, buffer, size, 0);
          if (n > 0) return static_cast<std::size_t>(n);
          if (n == 0) throw RedisDisconnected("the server closed the connection");
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) throw RedisDisconnected("timed out waiting for the reply");
          throw RedisDisconnected(std::strerror(errno));
        }
      },
      limits);
  std::vector<BoundedReply> replies;
  replies.reserve(commands.size());
  try {
    for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(reader.read());
  } catch (const RedisDisconnected& e) {
    throw lost(e.what());
  } catch (const ProtocolError& e) {  // the connection's state is unknown: start afresh
    throw lost(e.what());
  }
  for (const BoundedReply& reply : replies) {
    if (reply.type == BoundedReply::Type::error &&
        (reply.text.starts_with("LOADING") || reply.text.starts_with("MASTERDOWN"))) {
      close();
      throw RedisDisconnected("Redis at " + to_string(address_) + " is not ready: " + reply.text);
    }
  }
  return replies;
}

BoundedReply RedisConnection::bounded_command(const std::vector<std::string>& argv, const BoundedLimits& limits,
                                              std::chrono::milliseconds block) {
  std::vector<BoundedReply> replies = bounded_replies({argv}, limits, block);
  if (replies.front().type == BoundedReply::Type::error) {
    throw RedisCommandError(argv.front() + ": " + replies.front().text);
  }
  return std::move(replies.front());
}

std::vector<BoundedReply> RedisConnection::bounded_pipeline(const std::vector<std::vector<std::string>>& commands,
                                                            const BoundedLimits& limits) {
  return bounded_replies(commands, limits, std::chrono::milliseconds(0));
}

std::chrono::milliseconds reconnect_delay(int attempt) noexcept {
  const int shift = std::clamp(attempt, 0, 6);
  return std::min(std::chrono::milliseconds(50 << shift), std::chrono::milliseconds(2000));
}

}  // namespace leap::sandbox::fleet
