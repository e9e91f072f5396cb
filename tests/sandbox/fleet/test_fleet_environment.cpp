// SPDX-License-Identifier: Apache-2.0
// What a fleet answer means to the rollout loop (to_evaluation), without a Redis: a verdict stays the
// candidate's, and an answer the fleet could not give (dead-lettered, timed out, no GPU, a harness
// fault) is an environment failure that run_step retries and then masks, never ranks.
#include <catch2/catch.hpp>
#include <future>
#include <leap/rollout.hpp>
#include <leap/sandbox/fleet_environment.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/request_codec.hpp"

namespace sb = leap::sandbox;
namespace pd = leap::sandbox::detail;
using Catch::Matchers::Contains;
using leap::Verdict;
using nlohmann::json;

namespace {

sb::FleetReply answer(std::uint64_t id, const json& result) {
  sb::FleetReply reply;
  reply.id = id;
  reply.ok = true;
  reply.result = result.dump();
  reply.member = "m0";
  reply.line = pd::success_response(std::to_string(id), result);
  return reply;
}

sb::FleetReply failure(std::uint64_t id, pd::ErrorCode code, const std::string& error) {
  sb::FleetReply reply;
  reply.id = id;
  reply.ok = false;
  reply.code = pd::to_string(code);
  reply.error = error;
  reply.member = "m0";
  reply.line = pd::failure_response(std::to_string(id), code, error);
  return reply;
}

json verdict_result(const char* verdict, double speedup = 1.5) {
  return {{"status", "verdict"}, {"verdict", verdict}, {"speedup", speedup}, {"feedback", "the sandbox's feedback"}};
}

std::future<sb::FleetReply> holding(std::exception_ptr error) {
  std::promise<sb::FleetReply> promise;
  promise.set_exception(std::move(error));
  return promise.get_future();
}

}  // namespace

TEST_CASE("a dead-lettered fleet request is an environment failure, not the candidate's runtime_error") {
  const leap::Evaluation e =
      sb::to_evaluation(failure(7, pd::ErrorCode::dead_lettered, "delivered 3 times without an answer; not run again"));
  CHECK(e.environment_failure);
  CHECK_THAT(e.feedback, Contains("fleet request 7 (member m0): delivered 3 times"));
}

TEST_CASE("a fleet request that timed out or got no answer is an environment failure") {
  const leap::Evaluation timed_out = sb::to_evaluation(
      holding(std::make_exception_ptr(sb::FleetTimeout("request 3 got no answer before its deadline"))));
  CHECK(timed_out.environment_failure);
  CHECK_THAT(timed_out.feedback, Contains("timed out: request 3 got no answer"));
  const leap::Evaluation closed =
      sb::to_evaluation(holding(std::make_exception_ptr(std::runtime_error("the client closed"))));
  CHECK(closed.environment_failure);
  CHECK_THAT(closed.feedback, Contains("no answer: the client closed"));
}

TEST_CASE("a fleet answer without a verdict is an environment failure: unavailable, harness faults, malformed") {
  const std::vector<sb::FleetReply> unjudged = {
      answer(1, {{"status", "no_gpu"}, {"verdict", nullptr}, {"detail", "running it needs a GPU (no device)"}}),
      answer(2, {{"status", "error"}, {"verdict", nullptr}, {"error", "GPU runner died: signal 9"}}),
      answer(3, {{"status", "verdict"}, {"verdict", "brilliant"}}),
      answer(4, json::array({1, 2})),
      failure(5, pd::ErrorCode::internal_error, "the member failed on this request: std::bad_alloc"),
      failure(6, pd::ErrorCode::bad_request, "unknown task 'softmx'"),
      failure(7, pd::ErrorCode::parse_error, "malformed request"),
  };
  for (const sb::FleetReply& reply : unjudged) {
    INFO(reply.line);
    const leap::Evaluation e = sb::to_evaluation(reply);
    CHECK(e.environment_failure);
    CHECK_THAT(e.feedback, Contains("fleet request " + std::to_string(reply.id)));
  }
  CHECK_THAT(sb::to_evaluation(unjudged[0]).feedback, Contains("reached no verdict (no_gpu: running it needs a GPU"));
  CHECK_THAT(sb::to_evaluation(unjudged[1]).feedback, Contains("reached no verdict (error: GPU runner died"));
}

TEST_CASE("what the candidate's text decides stays its verdict: a compile error, a crash, a source too long") {
  for (const char* name : {"compile_error", "runtime_error", "timeout", "wrong_answer", "correct"}) {
    const leap::Evaluation e = sb::to_evaluation(answer(1, verdict_result(name)));
    CHECK_FALSE(e.environment_failure);
    CHECK(leap::to_string(e.verdict) == name);
    CHECK(e.speedup == 1.5);
    CHECK(e.feedback == "the sandbox's feedback");
  }
  // The request is the candidate's source in a small envelope: too long is the candidate's doing.
  const leap::Evaluation too_long = sb::to_evaluation(failure(
      2, pd::ErrorCode::request_too_large, "the request is 5000000 bytes; this fleet member takes at most 4194304"));
  CHECK_FALSE(too_long.environment_failure);
  CHECK(too_long.verdict == Verdict::compile_error);
  CHECK_THAT(too_long.feedback, Contains("source is too long"));
}

namespace {

struct Task {
  std::uint64_t id = 0;
};

// Sample k's answer comes from the fleet as scripted: sample 0 is dead-lettered on every attempt,
// sample 1 times out once and is then judged correct at turn 1, the others fail to compile or pass.
struct ScriptedFleet {
  leap::Evaluation evaluate(const Task&, const leap::Completion<>&, const leap::SampleKey& key) const {
    switch (key.sample) {
      case 0: return sb::to_evaluation(failure(10, pd::ErrorCode::dead_lettered, "delivered 3 times"));
      case 1:
        if (key.attempt == 0) return sb::to_evaluation(holding(std::make_exception_ptr(sb::FleetTimeout("late"))));
        return sb::to_evaluation(answer(11, verdict_result("correct")));
      case 2: return sb::to_evaluation(answer(12, verdict_result("compile_error")));
      default: return sb::to_evaluation(answer(13, verdict_result(key.turn >= 2 ? "correct" : "wrong_answer")));
    }
  }
};

struct AnyPolicy {
  leap::Completion<> complete(const Task&, const leap::Trajectory<>&, const leap::SampleKey&) const { return {{}, 5}; }
};

}  // namespace

TEST_CASE("run_step on fleet answers: dead-lettered is masked, not ranked, a timeout is retried") {
  const std::vector<Task> tasks = {{1}};
  const auto step =
      leap::run_step(tasks, AnyPolicy{}, ScriptedFleet{}, leap::FailBandGate{1, 3}, leap::RankAdvantage<>{},
                     leap::InlineExecutor{}, leap::RolloutOptions{.group_size = 4, .max_turns = 2});
  CHECK(step.trajectories[0].environment_failed());
  CHECK(step.advantages[0] == 0.0);
  CHECK(step.turn1_stats[0] == leap::GroupStats{3, 1, 1, 0, 0, 1});
  CHECK(step.outcomes[1].solved_turn == 1);
  CHECK(step.outcomes[3].solved_turn == 2);
  // Ranked among the three judged members: turn 1 beats turn 2 beats never.
  CHECK(step.advantages[1] == 1.0);
  CHECK(step.advantages[3] == 0.0);
  CHECK(step.advantages[2] == -1.0);
  CHECK(step.metrics.environment_errors == 3);  // the dead letter twice, the timeout once
  CHECK(step.metrics.environment_retries == 2);
  CHECK(step.metrics.masked_trajectories == 1);
}
