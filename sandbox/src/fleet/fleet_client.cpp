// SPDX-License-Identifier: Apache-2.0
// sandbox/src/fleet: the fleet on Redis Streams (leap::sandbox_fleet, built with hiredis). The
// client, the member loop behind `leap-sandbox fleet-member`, the message tags, the bounded Redis reader
// and the fleet key. Not here: what a request does (the member hands each line to RequestHandler,
// protocol/), nor the trainer's environment glue beyond FleetEnvironment.
#include "leap/sandbox/fleet_client.hpp"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "common/shortened.hpp"
#include "fleet/fleet_auth.hpp"
#include "fleet/fleet_fields.hpp"
#include "fleet/fleet_redis.hpp"
#include "protocol/request_codec.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
namespace fields = fleet::fields;

std::string default_client_name() {
  static std::atomic<unsigned> counter{0};
  std::random_device random;
  return fleet_process_name("client") + "-" + std::to_string(counter++) + "-" + std::to_string(random() % 100000);
}

std::optional<std::uint64_t> to_id(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

void FleetClientOptions::validate() const {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("leap::sandbox::FleetClientOptions: " + what);
  };
  if (stream.empty())
    fail("stream is empty; name the fleet's request stream (default " + std::string(fleet_default_stream) + ")");
  if (timeout.count() < 1) fail("timeout (" + std::to_string(timeout.count()) + " ms) must be positive");
  if (request_maxlen < 1) fail("request_maxlen must be at least 1");
  if (block.count() < 1) fail("block must be at least 1 ms");
  if (max_request_bytes < 1024 || max_request_bytes > (std::size_t{1} << 30)) {
    fail("max_request_bytes (" + std::to_string(max_request_bytes) +
         ") must be in [1024, 1 GiB], as the members' --max-request-bytes");
  }
}

// What one read of the reply stream may hold: 512 answers of at most 32 MiB, 64 MiB in all.
constexpr std::size_t k_read_count = 512;
constexpr fleet::BoundedLimits k_read_limits{.max_value_bytes = std::size_t{32} << 20,
                                             .oversized_prefix_bytes = 256,
                                             .max_kept_bytes = std::size_t{64} << 20,
                                             .max_elements = k_read_count * 16 + 8,
                                             .max_line_bytes = 1 << 16};

struct FleetClient::Impl {
  struct Waiting {
    std::promise<FleetReply> promise;
    Clock::time_point deadline;
  };

  FleetClientOptions options;
  std::string reply_stream;
  fleet::RedisCredentials credentials = fleet::RedisCredentials::from_environment();
  std::optional<FleetKey> key;  // nullopt: insecure_no_key
  pid_t pid = ::getpid();       // the process this client belongs to
  std::string session = fleet::new_session();
  std::atomic<bool> fork_noticed{false};

  std::mutex submit_mutex;  // guards submitter
  std::unique_ptr<fleet::RedisConnection> submitter;

  mutable std::mutex waiting_mutex;
  std::map<std::uint64_t, Waiting> waiting;
  std::uint64_t next_id = 1;

  std::atomic<bool> closing{false};
  std::thread reader;
  std::string last_seen = "0-0";  // reader thread only (after construction)

  std::atomic<std::uint64_t> submitted{0}, answered{0}, duplicates{0}, timeouts{0}, reconnects{0}, forged{0};

  // A forked child has a copy of this object but not its reader thread, and its connections are the
  // parent's sockets: nothing in it may be used there.
  void check_process() {
    const pid_t now = ::getpid();
    if (now == pid) return;
    const std::string why = "leap::sandbox::FleetClient (reply stream " + reply_stream + ") was created in process " +
                            std::to_string(pid) + " and is used in process " + std::to_string(now) +
                            ", a fork of it; a client cannot cross a fork (its reader and connections stay with the "
                            "parent). Create a new FleetClient in the child, after the fork";
    // The child's copies of the parent's futures would never resolve: fail them, if the lock is free.
    if (!fork_noticed.exchange(true) && waiting_mutex.try_lock()) {
      for (auto& [id, w] : waiting) w.promise.set_exception(std::make_exception_ptr(std::logic_error(why)));
      waiting.clear();
      waiting_mutex.unlock();
    }
    throw std::logic_error(why);
  }

  void say(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      std::cerr << line << "\n";
    }
  }

  void report_forged(const std::string& entry, const std::string& why) {
    const std::uint64_t n = ++forged;
    if ((n & (n - 1)) != 0) return;  // the 1st, 2nd, 4th, ...: a flood cannot flood the log
    say("leap::sandbox::FleetClient: dropped answer " + entry + " on " + reply_stream + ": " + why + " (" +
        std::to_string(n) +
        " dropped so far; something without the fleet key writes to "
        "this stream)");
  }

  // Why the entry is not an answer signed for `for_session` on this client's reply stream, or nullopt
  // when it is.
  std::optional<std::string> forged_reason(const fleet::StreamEntry& entry, const std::string& line,
                                           const std::string& for_session) const {
    const std::string* id = entry.field(fields::id);
    if (!key) return std::nullopt;
    const std::string* tag = entry.field(fields::tag);
    if (tag == nullptr) return "unsigned (no tag field)";
    if (id == nullptr) return "no 'id' field";
    const fleet::SignedFields signed_fields{
        fleet::MessageKind::reply, options.stream, reply_stream, for_session, *id, sha256(line)};
    if (!fleet::verify(*key, signed_fields, *tag))
      return "the tag does not match (forged, or copied from another request)";
    return std::nullopt;
  }

  void settle(std::uint64_t id, detail::ReadResponse response, const std::string& line, const std::string& member) {
    std::promise<FleetReply> promise;
    {
      std::lock_guard lock(waiting_mutex);
      const auto it = waiting.find(id);
      if (it == waiting.end()) {
        ++duplicates;
        return;
      }
      promise = std::move(it->second.promise);
      waiting.erase(it);
    }
    FleetReply reply;
    reply.id = id;
    reply.ok = response.ok;
    if (response.result) reply.result = std::move(*response.result);
    reply.code = std::move(response.code);
    reply.error = std::move(response.error);
    reply.member = member;
    reply.line = line;
    ++answered;
    promise.set_value(std::move(reply));
  }

  void expire_overdue() {
    std::vector<std::pair<std::uint64_t, std::promise<FleetReply>>> overdue;
    const auto now = Clock::now();
    {
      std::lock_guard lock(waiting_mutex);
      for (auto it = waiting.begin(); it != waiting.end();) {
        if (it->second.deadline <= now) {
          overdue.emplace_back(it->first, std::move(it->second.promise));
          it = waiting.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& [id, promise] : overdue) {
      ++timeouts;
      promise.set_exception(std::make_exception_ptr(
          FleetTimeout("leap::sandbox::FleetClient: request " + std::to_string(id) + " on " + options.stream + " at " +
                       to_string(options.redis) +
                       " got no answer before its deadline (are members running on that stream, "
                       "and is the timeout long enough for the fleet's backlog?)")));
    }
  }

  void read_loop() {
    fleet::RedisConnection redis(options.redis, credentials);
    int attempt = 0;
    bool failure_reported = false;  // this run of failures other than a lost connection was reported
    const std::string block = std::to_string(options.block.count());
    while (!closing.load()) {
      try {
        // Read with bounded memory: anyone who can write to the reply stream can put a huge entry there.
        fleet::BoundedReply read = redis.bounded_command(
            {"XREAD", "COUNT", std::to_string(k_read_count), "BLOCK", block, "STREAMS", reply_stream, last_seen},
            k_read_limits, options.block);
        if (attempt > 0) {
          ++reconnects;
          attempt = 0;
        }
        failure_reported = false;
        const auto entries = read.elements.empty() || read.elements.front().elements.size() < 2
                                 ? std::vector<fleet::StreamEntry>{}
                                 : fleet::parse_entries(std::move(read.elements.front().elements[1]));
        std::vector<std::string> done = {"XDEL", reply_stream};
        for (std::size_t i = 0; i < entries.size(); ++i) {
          const fleet::StreamEntry& entry = entries[i];
          // A value over the size limit makes the entry no answer. A value or field cut short by the
          // read's budget (not by its own size) is read again on the next turn; an entry that is first
          // and still cut exceeds the budget alone, which no answer does.
          bool cut = !entry.complete, oversized = false;
          std::size_t bytes = 0;
          for (std::size_t k = 0; k < entry.fields.size(); ++k) {
            bytes += entry.lengths[k];
            if (entry.lengths[k] > k_read_limits.max_value_bytes) {
              oversized = true;
            } else if (entry.fields[k].second.size() != entry.lengths[k]) {
              cut = true;
            }
          }
          if (cut && i > 0) break;
          last_seen = entry.id;
          if (cut || oversized) {
            done.push_back(entry.id);
            report_forged(entry.id, "too large to be an answer (" + std::to_string(bytes) + " bytes)");
            continue;
          }
          const std::string* line = entry.field(fields::response);
          const std::string* member = entry.field(fields::member);
          // Another client of the same name (a fork that reused it) shares this stream: the answers signed
          // for its session are left for it. One that names another session without a tag valid for that
          // session is no one's answer: a forgery, dropped and counted as one.
          if (const std::string* s = entry.field(fields::session); s != nullptr && *s != session) {
            const std::optional<std::string> why =
                line == nullptr ? std::optional<std::string>("no 'response' field") : forged_reason(entry, *line, *s);
            if (!why) {
              ++duplicates;
              continue;
            }
            done.push_back(entry.id);
            report_forged(entry.id, "for another session (" + detail::shortened(*s, 48, 45) + "), and " + *why);
            continue;
          }
          done.push_back(entry.id);
          if (line == nullptr) {
            report_forged(entry.id, "no 'response' field");
            continue;
          }
          if (const std::optional<std::string> why = forged_reason(entry, *line, session)) {
            report_forged(entry.id, *why);
            continue;
          }
          // The tag covers the entry's id field: the request the member answered, as the request entry named it.
          const std::string* id_field = entry.field(fields::id);
          const std::optional<std::uint64_t> signed_id = id_field ? to_id(*id_field) : std::nullopt;
          std::optional<detail::ReadResponse> response = detail::read_response(json::parse(*line, nullptr, false));
          if (response && response->id && key && signed_id != response->id) {
            report_forged(entry.id, "the response's id differs from the signed id");
            continue;
          }
          // A response with "id": null answers a line the member could not read (parse_error, or
          // dead_lettered): nothing in the line names the request, the entry's id field does. A signed
          // line that is no protocol response at all fails that request too: no other answer follows.
          const std::optional<std::uint64_t> id = response && response->id ? response->id : signed_id;
          if (!id) {
            ++duplicates;  // not an answer to any request of ours (ids we send are unsigned integers)
            continue;
          }
          if (!response) {
            response.emplace();
            response->error = "the answer of fleet member '" + (member ? detail::shortened(*member, 64, 61) : "") +
                              "' is not a protocol response (a JSON object with an unsigned integer or null id): " +
                              detail::shortened(*line, 200, 197);
          }
          settle(*id, std::move(*response), *line, member ? *member : std::string());
        }
        if (done.size() > 2) redis.command(done);
      } catch (const fleet::RedisDisconnected&) {
        const auto until = Clock::now() + fleet::reconnect_delay(attempt++);
        while (!closing.load() && Clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
      } catch (const fleet::RedisCommandError&) {
        std::this_thread::sleep_for(fleet::reconnect_delay(attempt++));
      } catch (const std::exception& e) {
        // Anything else (Redis refusing the password on a reconnect, memory exhausted): the reader keeps
        // going, so that every deadline still passes and the destructor still joins it.
        if (!std::exchange(failure_reported, true)) {
          say("leap::sandbox::FleetClient: reading " + reply_stream + " failed: " + e.what() +
              "; retrying (requests still unanswered fail at their deadline)");
        }
        const auto until = Clock::now() + fleet::reconnect_delay(attempt++);
        while (!closing.load() && Clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
      }
      expire_overdue();
    }
  }

  std::future<FleetReply> submit(json request, std::optional<milliseconds> timeout) {
    const auto deadline = Clock::now() + timeout.value_or(options.timeout);
    std::uint64_t id = 0;
    {
      std::lock_guard lock(waiting_mutex);
      id = next_id++;
    }
    detail::set_request_id(request, id);
    // Checked before anything waits for it: a request the members could not read would be answered
    // "id": null; it is refused here instead (RequestEncodingError naming the field), and nothing is sent.
    const std::string line =
        detail::request_line(request, RequestLimits{.max_request_bytes = options.max_request_bytes});
    std::future<FleetReply> future;
    {
      std::lock_guard lock(waiting_mutex);
      Waiting& w = waiting[id];
      w.deadline = deadline;
      future = w.promise.get_future();
    }
    const std::string id_text = std::to_string(id);
    std::vector<std::string> add = {"XADD",
                                    options.stream,
                                    "MAXLEN",
                                    "~",
                                    std::to_string(options.request_maxlen),
                                    "*",
                                    fields::request,
                                    line,
                                    fields::reply_stream,
                                    reply_stream,
                                    fields::session,
                                    session,
                                    fields::id,
                                    id_text};
    if (key) {
      add.insert(add.end(), {fields::tag, fleet::sign(*key, {fleet::MessageKind::request, options.stream, reply_stream,
                                                             session, id_text, sha256(line)})});
    }
    std::lock_guard lock(submit_mutex);
    for (int attempt = 0;; ++attempt) {
      try {
        submitter->command(add);
        if (attempt > 0) ++reconnects;
        ++submitted;
        return future;
      } catch (const fleet::RedisDisconnected&) {
        if (Clock::now() + fleet::reconnect_delay(attempt) >= deadline) break;
        std::this_thread::sleep_for(fleet::reconnect_delay(attempt));
      } catch (...) {
        // Redis refused the entry (out of memory, a key of another type, an ACL): nothing will answer it,
        // and the caller gets the exception instead of the future.
        std::lock_guard waiting_lock(waiting_mutex);
        waiting.erase(id);
        throw;
      }
    }
    expire_overdue();  // the deadline passed while Redis was away: the future holds a FleetTimeout
    return future;
  }
};

FleetClient::FleetClient(FleetClientOptions options) : impl_(std::make_unique<Impl>()) {
  options.validate();
  impl_->key = resolve_fleet_key(options.key, options.insecure_no_key, "leap::sandbox::FleetClient");
  if (options.name.empty()) options.name = default_client_name();
  impl_->reply_stream = fleet_reply_stream(options.stream, options.name);
  impl_->options = std::move(options);
  impl_->submitter = std::make_unique<fleet::RedisConnection>(impl_->options.redis, impl_->credentials);
  try {
    // Answers already in a reused reply stream belong to an earlier client of that name: start after them.
    const fleet::Reply last = impl_->submitter->command({"XREVRANGE", impl_->reply_stream, "+", "-", "COUNT", "1"});
    const auto entries = fleet::parse_entries(last.get());
    if (!entries.empty()) impl_->last_seen = entries.front().id;
  } catch (const fleet::RedisDisconnected& e) {
    throw std::runtime_error(std::string("leap::sandbox::FleetClient: ") + e.what() +
                             " (is Redis running there, and reachable from this machine?)");
  }
  impl_->reader = std::thread([impl = impl_.get()] { impl->read_loop(); });
}

FleetClient::~FleetClient() {
  if (::getpid() != impl_->pid) {
    // A forked child's copy: the reader thread is not there to join, the sockets and the reply stream
    // are the parent's, a mutex may be held forever. Touch nothing; the memory goes with the process.
    (void)impl_.release();
    return;
  }
  impl_->closing.store(true);
  if (impl_->reader.joinable()) impl_->reader.join();
  std::lock_guard lock(impl_->waiting_mutex);
  for (auto& [id, w] : impl_->waiting) {
    w.promise.set_exception(std::make_exception_ptr(std::runtime_error(
        "leap::sandbox::FleetClient closed before request " + std::to_string(id) + " was answered")));
  }
  impl_->waiting.clear();
  try {
    impl_->submitter->command({"DEL", impl_->reply_stream});
  } catch (const std::exception&) {  // Redis away: the stream expires on its own (the members set a TTL)
  }
}

std::future<FleetReply> FleetClient::submit(std::string_view request_json, std::optional<milliseconds> timeout) {
  impl_->check_process();
  json request = detail::parse_request_text(request_json, "");
  if (!request.is_object()) {
    throw std::invalid_argument(
        "leap::sandbox::FleetClient::submit: the request must be a JSON object such as "
        "{\"op\": \"compile\", \"source\": \"...\"}");
  }
  if (detail::has_request_id(request)) {
    throw std::invalid_argument(
        "leap::sandbox::FleetClient::submit: leave \"id\" out; the client numbers its requests "
        "to match answers (FleetReply::id)");
  }
  return impl_->submit(std::move(request), timeout);
}

std::future<FleetReply> FleetClient::compile(std::string_view source, std::string_view arch,
                                             std::optional<milliseconds> timeout) {
  impl_->check_process();
  return impl_->submit(detail::compile_request(source, arch), timeout);
}

std::future<FleetReply> FleetClient::eval(const FleetTask& task, std::string_view source,
                                          std::optional<milliseconds> timeout) {
  impl_->check_process();
  json requested_task;
  if (!task.spec_json.empty()) {
    requested_task = detail::parse_request_text(task.spec_json, detail::request_keys::task);
    if (!requested_task.is_object()) {
      throw std::invalid_argument(
          "leap::sandbox::FleetClient::eval: FleetTask::spec needs a JSON object (a task spec)");
    }
  } else if (!task.name.empty()) {
    requested_task = task.name;
  } else {
    throw std::invalid_argument(
        "leap::sandbox::FleetClient::eval: the task is empty; use FleetTask::builtin(name) or "
        "FleetTask::spec(json)");
  }
  return impl_->submit(detail::eval_request(std::move(requested_task), source), timeout);
}

std::future<FleetReply> FleetClient::info(std::optional<milliseconds> timeout) {
  impl_->check_process();
  return impl_->submit(detail::info_request(), timeout);
}

FleetClientStats FleetClient::stats() const noexcept {
  return {impl_->submitted.load(), impl_->answered.load(),   impl_->duplicates.load(),
          impl_->timeouts.load(),  impl_->reconnects.load(), impl_->forged.load()};
}

bool FleetClient::authenticated() const noexcept { return impl_->key.has_value(); }

std::size_t FleetClient::pending() const {
  impl_->check_process();
  std::lock_guard lock(impl_->waiting_mutex);
  return impl_->waiting.size();
}

const std::string& FleetClient::reply_stream() const noexcept { return impl_->reply_stream; }
const FleetClientOptions& FleetClient::options() const noexcept { return impl_->options; }

}  // namespace leap::sandbox
