# SPDX-License-Identifier: Apache-2.0
"""leap.trl through TRL's call sequence, modelled here after huggingface/trl at commit
f2cd57710ae345ea6428ae95363267fcf38a3dc8 (trl/trainer/grpo_trainer.py): GRPOTrainer._generate (the
rollout_func branch: required keys, extra fields, env_mask as the tool mask), _calculate_rewards
(reward functions called with the inputs' columns as keywords, then `gather` across processes),
_generate_and_score_completions (extra fields merged into the inputs, TRL's group z-score over the
gathered rewards, the process's slice). Two training processes are two threads whose
accelerate.utils.gather / gather_object exchange through a barrier, in process order, as
accelerate's collectives do. Exercised: leap_grpo_trainer's advantages over a group that straddles
the processes, make_rollout_func's episodes (leap.run_sample_episode per row), gathered DCP
decisions, the environment's keys and env_mask, leap_reward. Not
exercised: a real TRL, accelerate, vLLM, a model or the loss; TRL's eval mode; async reward funcs."""
import math
import sys
import threading
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import leap  # noqa: E402
import leap.environment  # noqa: E402
import leap.trl  # noqa: E402
import leap.verl  # noqa: E402

PROCESSES, LOCAL_ROWS, G, MAX_TURNS = 2, 6, 4, 3
C = "correct"
# Rows 0-3 alpha (process 0), 4-7 beta (straddles: 4, 5 on process 0; 6, 7 on process 1), 8-11 gamma.
PLANS = {
    "alpha": [[(C, 1.0)], [(C, 2.0)], [(C, 1.2)], [("compile_error", None), (C, 1.0)]],  # 1 fail: easy
    "beta": [[(C, 1.5)], [("compile_error", None), (C, 2.0)], [("wrong_answer", None), (C, 0.7)],
             [("compile_error", None), ("compile_error", None), (C, 1.1)]],             # 3 fail: expand
    "gamma": [[("timeout", None), (C, 1.0)]] * 4,                                         # 4 fail: catastrophic
}
TASKS = ["alpha", "beta", "gamma"]


class _Collective:
    """accelerate's gather and gather_object for threads standing in for processes."""

    def __init__(self, processes):
        self.barrier = threading.Barrier(processes)
        self.slots = [None] * processes
        self.local = threading.local()

    def exchange(self, value):
        self.slots[self.local.rank] = value
        self.barrier.wait()
        values = list(self.slots)
        self.barrier.wait()
        return values


collective = _Collective(PROCESSES)
accelerate = types.ModuleType("accelerate")
accelerate_utils = types.ModuleType("accelerate.utils")
accelerate_utils.gather = lambda tensor: torch.cat(collective.exchange(tensor))
accelerate_utils.gather_object = lambda values: [v for part in collective.exchange(list(values)) for v in part]
accelerate.utils = accelerate_utils


@pytest.fixture(autouse=True)
def fake_accelerate(monkeypatch):
    monkeypatch.setitem(sys.modules, "accelerate", accelerate)
    monkeypatch.setitem(sys.modules, "accelerate.utils", accelerate_utils)


def nanstd(tensor):
    return torch.sqrt(torch.nanmean((tensor - torch.nanmean(tensor, dim=-1, keepdim=True)) ** 2, dim=-1)
                      * tensor.shape[-1] / (tensor.shape[-1] - 1))


class GRPOTrainer:
    """The parts of TRL's GRPOTrainer at the pinned commit that lead from the rollout to the
    advantages (sum_then_normalize, scale_rewards="group")."""

    def __init__(self, reward_funcs, num_generations, rollout_func, process_index, processing_class):
        self.reward_funcs = reward_funcs
        self.reward_weights = torch.ones(len(reward_funcs))
        self.num_generations = self.num_generations_eval = num_generations
        self.rollout_func = rollout_func
        self.accelerator = types.SimpleNamespace(process_index=process_index, device="cpu")
        self.processing_class = processing_class
        self.model = types.SimpleNamespace(training=True)

    def _generate(self, prompts):
        output = self.rollout_func(prompts, self)
        missing = {"prompt_ids", "completion_ids", "logprobs"} - output.keys()
        if missing:
            raise ValueError(f"rollout_func must return keys {sorted(missing)} in its output dict.")
        extra_fields = {k: v for k, v in output.items() if k not in ("prompt_ids", "completion_ids", "logprobs")}
        tool_mask = extra_fields.pop("env_mask", None)
        completions = [self.processing_class.decode(ids) for ids in output["completion_ids"]]
        return output["prompt_ids"], output["completion_ids"], tool_mask, completions, output["logprobs"], extra_fields

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = torch.zeros(len(prompts), len(self.reward_funcs))
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
        for i, reward_func in enumerate(self.reward_funcs):
            values = reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list,
                                 **reward_kwargs)
            rewards_per_func[:, i] = torch.tensor([torch.nan if v is None else v for v in values])
        return accelerate_utils.gather(rewards_per_func)

    def _generate_and_score_completions(self, inputs):
        prompts = [x["prompt"] for x in inputs]
        prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields = self._generate(prompts)
        for i, inp in enumerate(inputs):
            for key, values in extra_fields.items():
                inp[key] = values[i] if isinstance(values, list) else values
        rewards_per_func = self._calculate_rewards(inputs, prompts, completions, completion_ids)
        rewards = (rewards_per_func * self.reward_weights.unsqueeze(0)).nansum(dim=1)
        grouped = rewards.view(-1, self.num_generations)
        mean = torch.nanmean(grouped, dim=1).repeat_interleave(self.num_generations)
        std = nanstd(grouped).repeat_interleave(self.num_generations)
        advantages = torch.nan_to_num((rewards - mean) / (std + 1e-4), nan=0.0)
        process_slice = slice(self.accelerator.process_index * len(prompts),
                              (self.accelerator.process_index + 1) * len(prompts))
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "tool_mask": tool_mask,
                "advantages": advantages[process_slice]}


class CharTokenizer:
    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True):
        return self.encode("".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>")


async def scripted_generate(context, trainer):
    """The policy: the context's prompt names the task and the sample; its turn is the count of user
    messages in it (the prompt's, then one per feedback). The completion writes the plan's verdict
    and speedup into the kernel."""
    text = "".join(chr(i) for i in context)
    task, member = text.split("kernel for ", 1)[1].split("<", 1)[0].split(" #")
    turn = text.count("<user>")
    plan = PLANS[task][int(member)]
    verdict, speedup = plan[min(turn, len(plan)) - 1]
    completion = f"```cuda\n// {verdict} {speedup} turn {turn} member {member}\n```"
    return leap.trl.Generation([ord(c) for c in completion], None, completion)


async def scripted_environment(task, completion, key):
    source = leap.environment.extract_kernel(completion.text).source
    verdict, speedup, _, turn, _, member = source.split("// ", 1)[1].split()
    assert (key.turn, key.sample) == (int(turn), int(member))  # the key names this row's turn and member
    if verdict == "lost":  # a dead-lettered request, on every attempt
        return leap.Evaluation.environment_failed("dead-lettered")
    return leap.Evaluation(leap.Verdict.__members__[verdict], math.nan if speedup == "None" else float(speedup),
                           f"[sandbox] {verdict}")


def run_processes(trainer_class, **kwargs):
    """Each process's _generate_and_score_completions on its slice of the global batch."""
    import leap.trl
    rollout = leap.trl.make_rollout_func(scripted_generate, scripted_environment,
                                         lambda prompt: prompt[0]["content"].split("for ", 1)[1].split(" #")[0],
                                         max_turns=MAX_TURNS)
    rows = [{"prompt": [{"role": "user", "content": f"Write the kernel for {task} #{k}"}]}
            for task in TASKS for k in range(G)]
    outputs, errors = [None] * PROCESSES, []

    def process(rank):
        collective.local.rank = rank
        try:
            trainer = trainer_class([leap.trl.leap_reward(MAX_TURNS)], G, rollout, rank, CharTokenizer(), **kwargs)
            outputs[rank] = trainer._generate_and_score_completions(rows[rank * LOCAL_ROWS:(rank + 1) * LOCAL_ROWS])
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
            collective.barrier.abort()

    threads = [threading.Thread(target=process, args=(rank,)) for rank in range(PROCESSES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return outputs


def expected():
    """Per global row: (gate, solved turn, speedup) with DCP deciding each whole group."""
    result = []
    for task in TASKS:
        plans = PLANS[task]
        n_fail = sum(plan[0][0] != C for plan in plans)
        expansion = leap.FailBandGate.leap_default(G).decide(n_fail, G)
        for plan in plans:
            solved, speedup = 0, math.nan
            for turn in range(1, (MAX_TURNS if expansion == leap.Expansion.expand else 1) + 1):
                verdict, s = plan[min(turn, len(plan)) - 1]
                if verdict == C:
                    solved, speedup = turn, s
                    break
            result.append((expansion.name, solved, speedup))
    return result


def test_leap_advantages_over_a_group_straddling_processes():
    import leap.trl
    LeapGRPOTrainer = leap.trl.leap_grpo_trainer(GRPOTrainer)
    tolerance = leap.verl.TURNS_ONLY_TOLERANCE
    outputs = run_processes(LeapGRPOTrainer, leap_score_tolerance=tolerance)
    plan = expected()
    solved = np.array([p[1] for p in plan], dtype=np.int32)
    speedup = np.array([p[2] for p in plan])
    groups = np.arange(len(plan)) // G
    reference = leap.rank_advantages(solved, groups, speedup=speedup, order=leap.KernelOrder.turns_only())
    got = torch.cat([o["advantages"] for o in outputs]).double().numpy()
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-6)
    # The straddling group (rows 4-7) sums to 0 over both processes' slices, and is not all ties.
    assert abs(got[4:8].sum()) < 1e-6 and np.abs(got[4:8]).max() > 0
    # The base trainer's z-score differs: the subclass replaced it.
    base = torch.cat([o["advantages"] for o in run_processes(GRPOTrainer)]).double().numpy()
    assert not np.allclose(base, got, atol=1e-3)


def test_rollout_func_gathers_turn_one_for_the_gate_and_masks_feedback():
    import leap.trl
    trainers = {}

    class Recording(leap.trl.leap_grpo_trainer(GRPOTrainer)):
        def _generate(self, prompts):
            result = super()._generate(prompts)
            trainers[self.accelerator.process_index] = result
            return result

    run_processes(Recording, leap_estimator="dr_grpo")
    plan = expected()
    for rank in range(PROCESSES):
        prompt_ids, completion_ids, tool_mask, completions, logprobs, extra = trainers[rank]
        for local in range(LOCAL_ROWS):
            row = rank * LOCAL_ROWS + local
            gate, solved, speedup = plan[row]
            assert extra["gate"][local] == gate, (row, extra["gate"][local], gate)
            assert extra["solved_turn"][local] == solved
            assert (math.isnan(extra["speedup"][local]) and math.isnan(speedup)) or extra["speedup"][local] == speedup
            mask = tool_mask[local]
            assert len(mask) == len(completion_ids[local]) == len(logprobs[local])
            feedback = "".join(chr(t) for t, m in zip(completion_ids[local], mask) if m == 0)
            turns = extra["turns"][local]
            assert completions[local].count("\n// ") == turns
            assert ("[sandbox]" in feedback) == (turns > 1) and feedback.count("<user>") == turns - 1
    # The straddling group beta was expanded on both processes (the whole group's 3 failures are in
    # LEAP's band); each half alone would have been decided differently.
    halves = [leap.FailBandGate(1, 1).decide(n_fail, 2) for n_fail in (1, 2)]
    assert trainers[0][5]["gate"][4:6] == trainers[1][5]["gate"][0:2] == ["expand", "expand"]
    assert halves != [leap.Expansion.expand] * 2


def test_leap_advantages_leave_unscored_rows_out():
    import leap.trl
    rewards = np.array([1.0, np.nan, 0.0, 2.0, 5.0, 5.0, 5.0, 5.0])
    got = leap.trl.leap_advantages(rewards, 4)
    assert got[1] == 0
    np.testing.assert_allclose(got[[0, 2, 3]], leap.rank_advantages_of_scores(rewards[[0, 2, 3]], [0, 0, 0]))
    assert (got[4:] == 0).all()
    dr = leap.trl.leap_advantages(rewards, 4, "dr_grpo")
    np.testing.assert_allclose(dr[[0, 2, 3]], rewards[[0, 2, 3]] - 1.0)
    with pytest.raises(ValueError, match="do not split into groups of 3"):
        leap.trl.leap_advantages(rewards, 3)


def test_a_masked_row_is_not_trained_and_not_ranked(monkeypatch):
    import leap.trl
    # Beta's row 5 is never judged at turn 1, row 7 at turn 2: both masked.
    monkeypatch.setitem(PLANS, "beta", [[(C, 1.5)], [("lost", None)], [("wrong_answer", None), (C, 0.7)],
                                        [("compile_error", None), ("lost", None)]])
    trainers = {}

    class Recording(leap.trl.leap_grpo_trainer(GRPOTrainer)):
        def _generate(self, prompts):
            result = super()._generate(prompts)
            trainers[self.accelerator.process_index] = result
            return result

    outputs = run_processes(Recording, leap_score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)
    extra = [trainers[rank][5] for rank in range(PROCESSES)]
    masked = extra[0]["masked"] + extra[1]["masked"]
    assert masked == [0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
    # The gate counted beta's three judged members (two failures): expanded, so row 6 was repaired.
    assert extra[0]["gate"][4] == "expand" and extra[1]["solved_turn"][0] == 2
    # No token of a masked row is trained (env_mask is TRL's tool mask, a loss mask).
    for row in (5, 7):
        rank, local = divmod(row, LOCAL_ROWS)
        mask = trainers[rank][2][local]
        assert len(mask) > 0 and set(mask) == {0}
    # Unscored, the masked rows get 0; beta's judged rows 4 and 6 are ranked between themselves.
    got = torch.cat([o["advantages"] for o in outputs]).double().numpy()
    assert got[5] == 0 and got[7] == 0
    assert got[4] == pytest.approx(1.0) and got[6] == pytest.approx(-1.0)
