# SPDX-License-Identifier: Apache-2.0
"""torch CPU tensors: the same bits as numpy, no copies in or out, clear errors otherwise."""
import numpy as np
import pytest

import torch

import leap
from leap._convert import as_array
from conftest import cpp_results, random_batch, same_bits


def test_tensors_give_the_cpp_results_bit_for_bit():
    rng = np.random.default_rng(11)
    batch = random_batch(rng, 5000, 400)
    order = leap.KernelOrder(speedup_tolerance=0.05, token_tolerance=0.0)
    expected = cpp_results(batch, order)
    turns = torch.from_numpy(batch["turns"])
    ids = torch.from_numpy(batch["ids"].astype(np.int64))  # torch has no uint32: int64 ids, narrowed by the core
    got = leap.rank_advantages(turns, ids, speedup=torch.from_numpy(batch["speedup"]),
                               tokens=torch.from_numpy(batch["tokens"].astype(np.int64)),
                               verdict=torch.from_numpy(batch["verdict"]), order=order)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    assert same_bits(got.numpy(), expected["rank"])
    rewards = torch.from_numpy(batch["rewards"])
    assert same_bits(leap.grpo_advantages(rewards, ids).numpy(), expected["grpo"])
    assert same_bits(leap.rloo_advantages(rewards, ids).numpy(), expected["rloo"])
    assert same_bits(leap.rank_advantages_of_scores(rewards, ids).numpy(),
                     leap.rank_advantages_of_scores(batch["rewards"], batch["ids"]))
    assert same_bits(leap.grpo_advantages(rewards.float(), ids).numpy(), expected["grpo_f32"])


def test_no_copies_in_or_out():
    rewards = torch.rand(1000, dtype=torch.float64, requires_grad=True)
    ids = torch.arange(1000) // 8
    assert as_array(rewards, "rewards").ctypes.data == rewards.data_ptr()
    out = torch.empty(1000, dtype=torch.float64)
    address = out.data_ptr()
    returned = leap.grpo_advantages(rewards, ids, out=out)
    assert returned is out and out.data_ptr() == address
    assert torch.equal(out, leap.grpo_advantages(rewards.detach(), ids))
    # A contiguous slice of a larger tensor is written in place.
    big = torch.zeros(3000, dtype=torch.float32)
    leap.rank_advantages_of_scores(rewards.detach().float(), ids, out=big[1000:2000])
    assert big[:1000].abs().sum() == 0 and big[2000:].abs().sum() == 0 and big[1000:2000].abs().sum() > 0


def test_tensor_errors_are_clear_and_write_nothing():
    ids = torch.arange(6) // 3
    out = torch.full((6,), -7.0, dtype=torch.float64)
    with pytest.raises(ValueError, match="rewards is not contiguous"):
        leap.grpo_advantages(torch.rand(6, 2, dtype=torch.float64)[:, 0], ids, out=out)
    with pytest.raises(ValueError, match="rewards has dtype torch.bfloat16"):
        leap.grpo_advantages(torch.rand(6).bfloat16(), ids, out=out)
    with pytest.raises(ValueError, match="rewards is on meta; leap computes on the CPU: pass rewards.cpu()"):
        leap.grpo_advantages(torch.empty(6, device="meta"), ids, out=out)
    with pytest.raises(ValueError, match="solved_turn has dtype float32"):
        leap.rank_advantages(torch.ones(6), ids, out=out)
    with pytest.raises(ValueError, match="out has dtype float32 but rewards has float64"):
        leap.grpo_advantages(torch.rand(6, dtype=torch.float64), ids, out=torch.zeros(6))
    assert (out == -7.0).all()
