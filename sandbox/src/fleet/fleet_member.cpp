// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_member.hpp"

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fleet/fleet_auth.hpp"
#include "fleet/fleet_fields.hpp"
#include "fleet/fleet_redis.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "protocol/request_line.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
namespace fields = fleet::fields;

// Log the 1st, 2nd, 4th, 8th, ... occurrence: a flood of bad entries cannot flood the log.
bool worth_logging(std::uint64_t count) noexcept { return (count & (count - 1)) == 0; }

// Sleeps up to `d`, waking early when `stop` is set.
void sleep_unless_stopped(milliseconds d, const std::atomic<bool>& stop) {
  const auto until = Clock::now() + d;
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < until) {
    std::this_thread::sleep_for(std::min(milliseconds(20), d));
  }
}

}  // namespace

void FleetMemberOptions::validate() const {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("leap::sandbox::FleetMemberOptions: " + what);
  };
  if (stream.empty())
    fail("stream is empty; name the request stream (default " + std::string(fleet_default_stream) + ")");
  if (group.empty()) fail("group is empty; name the consumer group (default " + std::string(fleet_default_group) + ")");
  if (jobs < 1 || jobs > 256) fail("jobs (" + std::to_string(jobs) + ") must be in [1, 256]");
  if (max_deliveries < 1) fail("max_deliveries (" + std::to_string(max_deliveries) + ") must be >= 1");
  if (claim_grace.count() < 0) fail("claim_grace must not be negative");
  if (block.count() < 1) fail("block must be at least 1 ms");
  if (claim_interval.count() < 1) fail("claim_interval must be at least 1 ms");
  if (redis_timeout.count() < 100) fail("redis_timeout must be at least 100 ms");
  if (reply_maxlen < 1 || dead_letter_maxlen < 1) fail("stream caps must be at least 1");
  if (max_request_bytes < 1024 || max_request_bytes > (std::size_t{1} << 30)) {
    fail("max_request_bytes (" + std::to_string(max_request_bytes) + ") must be in [1024, 1 GiB]");
  }
}

milliseconds claim_idle_for(std::string_view request_line, const FleetMemberOptions& options) {
  milliseconds limit = options.compile_wall_limit;
  try {
    const json request = json::parse(request_line);
    const std::string op = detail::requested_op(request);
    if (op == detail::request_ops::info) {
      limit = milliseconds(0);
    } else if (op == detail::request_ops::eval) {
      long long task_limit = TaskSpec{}.time_limit_ms;
      // Read from the request as it stands, valid or not: a member must not take over a request that
      // is still running within the limit it names (a spec the handler refuses is answered at once).
      if (const auto task = request.find(detail::request_keys::task); task != request.end()) {
        if (task->is_string()) {
          if (const BuiltinTask* builtin = find_builtin_task(task->get<std::string>())) {
            task_limit = builtin->spec.time_limit_ms;
          }
        } else if (task->is_object() && task->contains("time_limit_ms") &&
                   task->at("time_limit_ms").is_number_integer()) {
          task_limit = std::clamp<long long>(task->at("time_limit_ms").get<long long>(), 100, 600000);
        }
      }
      // Kernels run one at a time in a member: an eval may wait for the others in hand.
      limit = options.compile_wall_limit + (options.eval_start_timeout + milliseconds(task_limit)) * options.jobs;
    }
  } catch (const json::exception&) {}
  return options.claim_grace + limit;
}

struct FleetMember::Impl {
  FleetMemberOptions options;
  Handler handler;
  fleet::RedisCredentials credentials;
  std::optional<FleetKey> key;  // nullopt: insecure_no_key, nothing checked or signed
  fleet::BoundedLimits read_limits;
  // A delivery record holds a few fields of ~80 bytes; more is junk someone else wrote, read past.
  static constexpr fleet::BoundedLimits record_limits{
      .max_value_bytes = 256, .oversized_prefix_bytes = 0, .max_kept_bytes = 64 << 10, .max_elements = 520};
  std::string dead_letter_stream;
  std::string reply_prefix;  // "<stream>:reply:"
  std::function<void(const std::string&)> log;

  std::atomic<std::uint64_t> answered{0}, reclaimed{0}, dead_lettered{0}, reconnects{0}, rejected{0}, too_large{0};
  std::atomic<Clock::rep> next_scan{0};
  std::mutex in_hand_mutex;
  std::set<std::string> in_hand;  // entry ids this process is working on

  void say(const std::string& line) const {
    if (log) log("leap-sandbox fleet-member " + options.name + ": " + line);
  }

  // The hash in which members record their deliveries of the request entry `entry_id` (fleet_member.hpp).
  std::string delivery_record(const std::string& entry_id) const { return options.stream + ":deliveries:" + entry_id; }

  // Records this delivery of `entry` (a signed, well-formed request) before it runs, and returns how
  // many deliveries the record held before it: only fields whose tag is valid for this entry count.
  long long record_delivery(fleet::RedisConnection& redis, const fleet::StreamEntry& entry) {
    const std::string record = delivery_record(entry.id);
    const std::string name = options.name + "/" + fleet::random_hex(16);
    const std::string* request_tag = entry.field(fields::tag);
    const std::string value =
        key ? fleet::delivery_tag(*key, options.stream, entry.id, request_tag ? *request_tag : "", name) : "unsigned";
    const std::vector<std::vector<std::string>> commands = {
        {"HSET", record, name, value},
        {"EXPIRE", record, std::to_string(options.reply_ttl.count())},
        {"HGETALL", record}};
    std::vector<fleet::BoundedReply> replies = redis.bounded_pipeline(commands, record_limits);
    if (replies[0].type == fleet::BoundedReply::Type::error) {
      // Something else holds the key (WRONGTYPE): it is no record of ours. Replaced, it counts nothing.
      say("replaced " + record + ", which was not a delivery record (" + replies[0].text + ")");
      redis.pipeline({{"DEL", record}});
      replies = redis.bounded_pipeline(commands, record_limits);
      if (replies[0].type == fleet::BoundedReply::Type::error) {
        say("cannot record the delivery of " + entry.id + " (" + replies[0].text + "); running it uncounted");
        return 0;
      }
    }
    const fleet::BoundedReply& fields_and_tags = replies[2];
    long long before = 0;
    for (std::size_t i = 0; i + 1 < fields_and_tags.elements.size(); i += 2) {
      const fleet::BoundedReply& field = fields_and_tags.elements[i];
      const fleet::BoundedReply& tag = fields_and_tags.elements[i + 1];
      if (!field.whole() || !tag.whole() || field.text == name) continue;
      if (key) {
        if (request_tag == nullptr ||
            !fleet::verify_delivery(*key, options.stream, entry.id, *request_tag, field.text, tag.text)) {
          continue;  // not a member's record of this entry: someone else wrote it
        }
      }
      ++before;
    }
    return before;
  }

  void ensure_group(fleet::RedisConnection& redis) const {
    try {
      redis.command({"XGROUP", "CREATE", options.stream, options.group, "0", "MKSTREAM"});
    } catch (const fleet::RedisCommandError& e) {
      if (std::string_view(e.what()).find("BUSYGROUP") == std::string_view::npos) throw;
    }
  }

  // Writes the answer, then acknowledges and deletes the request. Retries through reconnects until
  // the request's claim idle time has passed (after that another member answers it anyway).
  void deliver(fleet::RedisConnection& redis, const fleet::StreamEntry& entry, const std::string& reply_stream,
               const std::string& response, const std::atomic<bool>& stop) {
    const std::string* request =
        entry.whole(fields::request) ? entry.field(fields::request) : nullptr;  // not a cut line
    const auto give_up = Clock::now() + claim_idle_for(request ? *request : std::string_view(), options);
    std::vector<std::string> add = {
        "XADD",           reply_stream, "MAXLEN",       "~",         std::to_string(options.reply_maxlen), "*",
        fields::response, response,     fields::member, options.name};
    // The session and id come back as the request gave them: the client matches the answer by both.
    const std::string* session = entry.field(fields::session);
    const std::string* id = entry.field(fields::id);
    if (session != nullptr) add.insert(add.end(), {fields::session, *session});
    if (id != nullptr) add.insert(add.end(), {fields::id, *id});
    if (key) {
      add.insert(add.end(), {fields::tag, fleet::sign(*key, {fleet::MessageKind::reply, options.stream, reply_stream,
                                                             session ? *session : std::string_view(),
                                                             id ? *id : std::string_view(), sha256(response)})});
    }
    bool written = false;
    for (int attempt = 0;; ++attempt) {
      try {
        // Two round trips: the answer (and its stream's TTL), then, only once it is written, the ack.
        if (!written) {
          const auto replies =
              redis.pipeline({add, {"EXPIRE", reply_stream, std::to_string(options.reply_ttl.count())}});
          if (fleet::is_error(replies[0].get())) {
            throw fleet::RedisCommandError("XADD to " + reply_stream + ": " +
                                           std::string(fleet::text(replies[0].get())));
          }
          written = true;
        }
        redis.pipeline({{"XACK", options.stream, options.group, entry.id},
                        {"XDEL", options.stream, entry.id},
                        {"DEL", delivery_record(entry.id)}});
        return;
      } catch (const fleet::RedisDisconnected& e) {
        if (Clock::now() > give_up) {
          say("gave up answering " + entry.id + " (" + e.what() + "); it stays pending for another member");
          return;
        }
        if (attempt == 0) say(std::string(e.what()) + " while answering " + entry.id + "; reconnecting to retry");
        // Keep trying even when stopping: the answer is done, only Redis is missing.
        (void)stop;
        std::this_thread::sleep_for(fleet::reconnect_delay(attempt));
        try {
          redis.connect();
          ++reconnects;
          say("reconnected to " + to_string(options.redis) + "; answering " + entry.id);
        } catch (const std::exception&) {}
      }
    }
  }

  // Moves a request to the dead-letter stream, answers its client with the reason when it can, and
  // acknowledges it.
  void dead_letter(fleet::RedisConnection& redis, const fleet::StreamEntry& entry, long long deliveries,
                   const std::string& last_consumer, const std::string& reason, const std::atomic<bool>& stop,
                   bool answer_client = true) {
    const std::string* request = entry.field(fields::request);
    const std::string* reply = entry.field(fields::reply_stream);
    std::vector<std::string> add = {"XADD",
                                    dead_letter_stream,
                                    "MAXLEN",
                                    "~",
                                    std::to_string(options.dead_letter_maxlen),
                                    "*",
                                    fields::request_entry,
                                    entry.id,
                                    fields::deliveries,
                                    std::to_string(deliveries),
                                    fields::last_consumer,
                                    last_consumer,
                                    fields::reason,
                                    reason,
                                    fields::member,
                                    options.name};
    for (std::size_t i = 0; i < entry.fields.size(); ++i) {
      const auto& [name, value] = entry.fields[i];
      if (i < entry.lengths.size() && value.size() != entry.lengths[i]) {  // never held whole: its size only
        add.insert(add.end(), {name + fields::size_suffix, std::to_string(entry.lengths[i])});
      } else {
        add.insert(add.end(), {name, value});
      }
    }
    redis.command(add);
    ++dead_lettered;
    say("dead-lettered " + entry.id + " to " + dead_letter_stream + ": " + reason);
    if (answer_client && reply != nullptr && valid_reply_stream(*reply) && !forged(entry)) {
      try {
        deliver(redis, entry, *reply,
                error_response(request ? *request : std::string_view(), detail::ErrorCode::dead_lettered, reason),
                stop);
        return;
      } catch (const fleet::RedisCommandError&) {  // the reply stream cannot take it: dead letter only
      }
    }
    redis.pipeline({{"XACK", options.stream, options.group, entry.id},
                    {"XDEL", options.stream, entry.id},
                    {"DEL", delivery_record(entry.id)}});
  }

  // Answers go only to "<stream>:reply:<client>": a request cannot make members write elsewhere.
  bool valid_reply_stream(const std::string& reply) const {
    return reply.size() > reply_prefix.size() && reply.starts_with(reply_prefix);
  }

  // Why the entry is not a request signed under the fleet key, or nullopt when it is (or no key is in use).
  std::optional<std::string> forged(const fleet::StreamEntry& entry) const {
    if (!key) return std::nullopt;
    if (entry.field(fields::tag) == nullptr) return "unsigned (no tag field): not from a client holding the fleet key";
    for (const char* name : {fields::request, fields::reply_stream, fields::session, fields::id}) {
      if (entry.field(name) == nullptr) return std::string("no '") + name + "' field";
    }
    for (const char* name : {fields::reply_stream, fields::session, fields::id, fields::tag}) {
      if (!entry.whole(name)) return std::string("the '") + name + "' field is too long";
    }
    const std::size_t request = entry.index(fields::request);
    const fleet::SignedFields signed_fields{fleet::MessageKind::request,        options.stream,
                                            *entry.field(fields::reply_stream), *entry.field(fields::session),
                                            *entry.field(fields::id),           entry.digests[request]};
    if (!fleet::verify(*key, signed_fields, *entry.field(fields::tag))) {
      return "the tag does not match (forged, signed under another key, or taken from another request)";
    }
    return std::nullopt;
  }

  // Drops an entry that is not a signed request: acknowledged and deleted, never run or answered.
  void reject(fleet::RedisConnection& redis, const fleet::StreamEntry& entry, const std::string& why) {
    const std::uint64_t n = ++rejected;
    if (worth_logging(n)) {
      say("dropped entry " + entry.id + " of " + options.stream + " unrun: " + why + " (" + std::to_string(n) +
          " dropped so far; is something without the fleet key writing to the stream?)");
    }
    redis.pipeline({{"XACK", options.stream, options.group, entry.id}, {"XDEL", options.stream, entry.id}});
  }

  // The protocol's failure response to a request line, with the line's id when it has one. Parsed
  // within the handler's default depth limit: an id the handler could not read is not read here either.
  std::string error_response(std::string_view request_line, detail::ErrorCode code, const std::string& error) const {
    const std::optional<std::string> id =
        detail::raw_request_id(request_line, RequestLimits{.max_request_bytes = options.max_request_bytes});
    return detail::failure_response(id ? *id : "null", code, error);
  }

  // The answer to a request line longer than max_request_bytes: only its length and tag were read.
  std::string too_large_response(const fleet::StreamEntry& entry) const {
    // The signed id field, as the request line's "id" holds it: a number, else the text as a string.
    json id = nullptr;
    if (const std::string* given = entry.field(fields::id); given != nullptr && entry.whole(fields::id)) {
      id = json::parse(*given, nullptr, false);
      if (id.is_discarded() || !id.is_number()) id = *given;
    }
    const std::size_t length = entry.lengths[entry.index(fields::request)];
    return detail::failure_response(
        id.dump(-1, ' ', false, json::error_handler_t::replace), detail::ErrorCode::request_too_large,
        "the request is " + std::to_string(length) + " bytes; this fleet member takes at most " +
            std::to_string(options.max_request_bytes) +
            " (leap-sandbox fleet-member --max-request-bytes); it was not read");
  }

  // `taken_from`: the consumer whose pending entry this member took over; empty for a first delivery.
  void process(fleet::RedisConnection& redis, const fleet::StreamEntry& entry, const std::string& taken_from,
               const std::atomic<bool>& stop) {
    if (const std::optional<std::string> why = forged(entry)) {
      reject(redis, entry, *why);
      return;
    }
    const std::string* request = entry.field(fields::request);
    const std::string* reply = entry.field(fields::reply_stream);
    if (!entry.complete || request == nullptr || reply == nullptr || !entry.whole(fields::reply_stream) ||
        !valid_reply_stream(*reply)) {
      dead_letter(redis, entry, 1, options.name,
                  "malformed stream entry: a request needs the fields 'request' (the JSON line) and 'reply' (the "
                  "client's reply stream, " +
                      reply_prefix + "<client>)",
                  stop, false);
      return;
    }
    struct InHand {  // this process works on the entry: the pending-list scan leaves it alone
      Impl& impl;
      const std::string& id;
      InHand(Impl& i, const std::string& e) : impl(i), id(e) {
        std::lock_guard lock(impl.in_hand_mutex);
        impl.in_hand.insert(id);
      }
      ~InHand() {
        std::lock_guard lock(impl.in_hand_mutex);
        impl.in_hand.erase(id);
      }
    } in_hand_guard(*this, entry.id);
    // Counted before it runs, in the members' own record: a request that killed or stalled every member
    // it was delivered to is not run again. Redis's delivery counter is not looked at (anyone may set it).
    if (const long long before = record_delivery(redis, entry); before >= options.max_deliveries) {
      dead_letter(redis, entry, before, taken_from.empty() ? options.name : taken_from,
                  "request delivered " + std::to_string(before) +
                      " times without an answer (each time its fleet member died or stalled past the request's "
                      "limits); not run again, moved to " +
                      dead_letter_stream,
                  stop);
      return;
    }
    std::string response;
    try {
      if (entry.whole(fields::request)) {
        response = handler(*request);
      } else {
        const std::uint64_t n = ++too_large;
        if (worth_logging(n)) {
          say("answered " + entry.id + " request_too_large (" +
              std::to_string(entry.lengths[entry.index(fields::request)]) + " bytes; " + std::to_string(n) +
              " so far)");
        }
        response = too_large_response(entry);
      }
    } catch (const std::exception& e) {  // the handler promises not to throw; an answer beats a lost request
      response = error_response(*request, detail::ErrorCode::internal_error,
                                std::string("the member failed on this request: ") + e.what());
    }
    try {
      deliver(redis, entry, *reply, response, stop);
      ++answered;
    } catch (const fleet::RedisCommandError& e) {  // e.g. the reply key holds something else than a stream
      dead_letter(redis, entry, 1, options.name, std::string("cannot write the answer: ") + e.what(), stop, false);
    }
  }

  struct Work {
    fleet::StreamEntry entry;
    std::string taken_from;  // the consumer it was taken over from; empty for a first delivery
  };

  // Scans the pending list (at most once per claim_interval across this process's threads) and
  // takes over one request another consumer has held past its claim idle time. Returns the entry to
  // run, if any; whether it runs or is dead-lettered is process()'s to decide, from the delivery record.
  std::optional<Work> reclaim(fleet::RedisConnection& redis) {
    const auto now = Clock::now().time_since_epoch().count();
    auto due = next_scan.load();
    if (now < due) return std::nullopt;
    const auto interval = std::chrono::duration_cast<Clock::duration>(options.claim_interval).count();
    if (!next_scan.compare_exchange_strong(due, now + interval)) return std::nullopt;

    const milliseconds floor = options.claim_grace;  // the shortest claim idle time of any request
    const fleet::Reply pending = redis.command(
        {"XPENDING", options.stream, options.group, "IDLE", std::to_string(floor.count()), "-", "+", "64"});
    for (std::size_t i = 0; i < fleet::size(pending.get()); ++i) {
      const redisReply* row = fleet::at(pending.get(), i);
      const std::string id(fleet::text(fleet::at(row, 0)));
      const std::string consumer(fleet::text(fleet::at(row, 1)));
      const long long idle = fleet::integer(fleet::at(row, 2));
      // The delivery count (row 3) is not read: anyone who can write to the stream sets it.
      if (consumer == options.name) {
        std::lock_guard lock(in_hand_mutex);
        if (in_hand.count(id) != 0) continue;  // still running here
      }
      const auto found = fleet::parse_entries(redis.bounded_command({"XRANGE", options.stream, id, id}, read_limits));
      const std::string* request =
          found.empty() || !found.front().whole(fields::request) ? nullptr : found.front().field(fields::request);
      if (found.empty()) {  // trimmed or deleted: nothing left to run
        redis.pipeline({{"XACK", options.stream, options.group, id}, {"DEL", delivery_record(id)}});
        continue;
      }
      const milliseconds claim_idle = claim_idle_for(request ? *request : std::string_view(), options);
      if (idle < claim_idle.count()) continue;
      const auto claimed = fleet::parse_entries(redis.bounded_command(
          {"XCLAIM", options.stream, options.group, options.name, std::to_string(claim_idle.count()), id},
          read_limits));
      if (claimed.empty()) continue;  // another member was quicker
      ++reclaimed;
      say("took over " + id + " from " + consumer + " (idle " + std::to_string(idle) + " ms)");
      next_scan.store(0);  // there may be more: scan again on the next turn
      return Work{claimed.front(), consumer};
    }
    return std::nullopt;
  }

  void serve_thread(const std::atomic<bool>& stop) {
    fleet::RedisConnection redis(options.redis, credentials, options.redis_timeout);
    bool ready = false;
    int attempt = 0;
    const std::string block = std::to_string(options.block.count());
    while (!stop.load()) {
      try {
        if (!ready) {
          ensure_group(redis);
          if (attempt > 0) {
            ++reconnects;
            say("reconnected to " + to_string(options.redis));
          }
          ready = true;
          attempt = 0;
        }
        std::optional<Work> work = reclaim(redis);
        if (!work) {
          fleet::BoundedReply read = redis.bounded_command({"XREADGROUP", "GROUP", options.group, options.name, "COUNT",
                                                            "1", "BLOCK", block, "STREAMS", options.stream, ">"},
                                                           read_limits, options.block);
          // [[stream, [entry]]], or nil when the block ran out
          auto entries = read.elements.empty() || read.elements.front().elements.size() < 2
                             ? std::vector<fleet::StreamEntry>{}
                             : fleet::parse_entries(std::move(read.elements.front().elements[1]));
          if (entries.empty()) continue;
          work = Work{std::move(entries.front()), {}};
        }
        process(redis, work->entry, work->taken_from, stop);
      } catch (const fleet::RedisDisconnected& e) {
        if (ready || attempt == 0) say(std::string(e.what()) + "; reconnecting");
        ready = false;
        sleep_unless_stopped(fleet::reconnect_delay(attempt++), stop);
      } catch (const fleet::RedisCommandError& e) {
        // NOGROUP: the group vanished (a Redis restarted without its data); anything else is logged.
        say(e.what());
        ready = false;
        sleep_unless_stopped(fleet::reconnect_delay(attempt++), stop);
      }
    }
  }
};

FleetMember::FleetMember(FleetMemberOptions options, Handler handler) : impl_(std::make_unique<Impl>()) {
  if (options.name.empty()) options.name = fleet_process_name("member");
  options.validate();
  if (!handler) throw std::invalid_argument("leap::sandbox::FleetMember: the handler is empty");
  impl_->key = resolve_fleet_key(options.key, options.insecure_no_key, "leap::sandbox::FleetMember");
  impl_->credentials = options.credentials ? *options.credentials : fleet::RedisCredentials::from_environment();
  // One entry: the request line (kept up to the limit), four short fields, a few that no client writes.
  impl_->read_limits = {.max_value_bytes = options.max_request_bytes,
                        .max_kept_bytes = options.max_request_bytes + (std::size_t{64} << 10),
                        .max_elements = 64};
  impl_->dead_letter_stream = fleet_dead_letter_stream(options.stream);
  impl_->reply_prefix = fleet_reply_stream(options.stream, "");
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

FleetMember::~FleetMember() = default;

void FleetMember::run(const std::atomic<bool>& stop, const std::function<void(const std::string&)>& log) {
  impl_->log = log;
  const FleetMemberOptions& o = impl_->options;
  impl_->say("serving " + o.stream + " as a member of group " + o.group + " at " + to_string(o.redis) + " (-j " +
             std::to_string(o.jobs) + ", dead letters to " + impl_->dead_letter_stream + ")");
  if (impl_->key) {
    impl_->say("requests checked and answers signed under the fleet key " + impl_->key->fingerprint() +
               " (fingerprint); unsigned or forged requests are dropped unrun");
  } else {
    impl_->say(
        "WARNING: no fleet key (insecure_no_key): requests are not checked and answers not signed; anyone "
        "who can write to " +
        o.stream +
        " can submit work, and anyone who can write to a reply stream can "
        "forge verdicts");
  }
  std::vector<std::thread> threads;
  threads.reserve(o.jobs);
  for (unsigned k = 0; k < o.jobs; ++k) threads.emplace_back([this, &stop] { impl_->serve_thread(stop); });
  for (std::thread& t : threads) t.join();
  // Leave the group only with nothing pending: deleting a consumer drops its pending entries.
  try {
    fleet::RedisConnection redis(o.redis, impl_->credentials, milliseconds(1000));
    const fleet::Reply mine = redis.command({"XPENDING", o.stream, o.group, "-", "+", "1", o.name});
    if (fleet::size(mine.get()) == 0) redis.command({"XGROUP", "DELCONSUMER", o.stream, o.group, o.name});
  } catch (const std::exception&) {  // Redis gone: the consumer entry stays, harmless
  }
  const FleetMemberStats s = stats();
  impl_->say("stopped: " + std::to_string(s.answered) + " answered, " + std::to_string(s.reclaimed) + " taken over, " +
             std::to_string(s.dead_lettered) + " dead-lettered, " + std::to_string(s.reconnects) + " reconnects, " +
             std::to_string(s.rejected) + " dropped unsigned or forged, " + std::to_string(s.too_large) + " too large");
}

FleetMemberStats FleetMember::stats() const noexcept {
  return {impl_->answered.load(),   impl_->reclaimed.load(), impl_->dead_lettered.load(),
          impl_->reconnects.load(), impl_->rejected.load(),  impl_->too_large.load()};
}

bool FleetMember::authenticated() const noexcept { return impl_->key.has_value(); }

const FleetMemberOptions& FleetMember::options() const noexcept { return impl_->options; }

}  // namespace leap::sandbox
