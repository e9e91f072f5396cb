# SPDX-License-Identifier: Apache-2.0
"""An out that shares memory with any input is refused with a ValueError naming the input, and
nothing is written: shifted views of one buffer, one shared element, integer views of out's bytes.
The one exception: out may be the rewards or scores array itself, computed in place with exactly the
fresh numbers. Views of one buffer that share no byte work too."""
import numpy as np
import pytest

import leap

N = 8
IDS = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=np.uint32)
TURNS = np.array([1, 0, 2, 1, 3, 0, 1, 2], dtype=np.int32)
VALUES = np.array([1.0, 0.0, 0.5, 2.0, 0.25, 1.0, 3.0, 0.0])
SPEEDUP_ORDER = leap.KernelOrder.with_speedup(0.05)

# name -> (call(values, ids, out), the values' argument name). Each value argument has out's dtype,
# so it can be out's own memory. rewards and scores may be out itself (in place); speedup may not.
FUNCTIONS = {
    "grpo_advantages": (lambda v, ids, out: leap.grpo_advantages(v, ids, out=out), "rewards"),
    "grpo_advantages(scale_by_std=False)":
        (lambda v, ids, out: leap.grpo_advantages(v, ids, scale_by_std=False, out=out), "rewards"),
    "rloo_advantages": (lambda v, ids, out: leap.rloo_advantages(v, ids, out=out), "rewards"),
    "rank_advantages_of_scores": (lambda v, ids, out: leap.rank_advantages_of_scores(v, ids, 0.1, out=out), "scores"),
    "rank_advantages(speedup=)":
        (lambda v, ids, out: leap.rank_advantages(TURNS, ids, speedup=v, order=SPEEDUP_ORDER, out=out), "speedup"),
}


def fresh(name, values=VALUES, ids=IDS):
    call, _ = FUNCTIONS[name]
    return call(values.copy(), ids.copy(), None)


def refused(call, buffer, fragment):
    """call() raises ValueError with fragment, and buffer (the memory out lies in) is unchanged."""
    before = np.array(buffer, copy=True)
    with pytest.raises(ValueError) as error:
        call()
    assert fragment in str(error.value), str(error.value)
    assert np.array_equal(np.asarray(buffer), before, equal_nan=True), "out was written before the error"


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("ids", [IDS, np.array([1, 0, 1, 0, 0, 1, 1, 0], dtype=np.uint32)], ids=["runs", "interleaved"])
def test_out_as_the_input_itself(name, ids):
    call, argument = FUNCTIONS[name]
    values = VALUES.copy()
    if argument == "speedup":
        refused(lambda: call(values, ids, values), values, "out overlaps speedup; pass a separate array")
        return
    expected = fresh(name, ids=ids)
    assert call(values, ids, values) is values
    assert np.array_equal(values, expected), "in place differs from a fresh out"


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("shift", [1, -1, 3, -(N - 1)])
def test_shifted_views_of_one_buffer_are_refused(name, shift):
    call, argument = FUNCTIONS[name]
    buffer = np.full(N + abs(shift), 0.75)
    values = buffer[:N] if shift > 0 else buffer[-shift:]
    out = buffer[shift:] if shift > 0 else buffer[:N]
    values[:] = VALUES
    assert np.shares_memory(values, out)
    refused(lambda: call(values, IDS, out), buffer, f"out overlaps {argument}")


@pytest.mark.parametrize("name", FUNCTIONS)
def test_views_of_one_buffer_that_share_no_byte_work(name):
    call, _ = FUNCTIONS[name]
    buffer = np.full(3 * N, -7.0)
    values, out = buffer[N:2 * N], buffer[:N]  # out ends where the values begin
    values[:] = VALUES
    assert not np.shares_memory(values, out)
    assert call(values, IDS, out) is out
    assert np.array_equal(out, fresh(name))
    assert np.array_equal(values, VALUES) and (buffer[2 * N:] == -7.0).all()
    out_after = buffer[2 * N:]  # and out just after the values
    assert np.array_equal(call(values, IDS, out_after), fresh(name))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_group_ids_in_outs_bytes_are_refused(name):
    call, _ = FUNCTIONS[name]
    buffer = np.full(N, 0.5)
    ids = buffer.view(np.uint32)[N // 2:N // 2 + N]  # the middle of out's bytes, as integers
    ids[:] = IDS
    refused(lambda: call(VALUES.copy(), ids, buffer), buffer, "out overlaps group_ids")
    separate = np.full(2 * N, 0.5)
    ids_after = separate[N:].view(np.uint32)[:N]  # the same kind of view, past out's last byte
    ids_after[:] = IDS
    assert np.array_equal(call(VALUES.copy(), ids_after, separate[:N]), fresh(name))


@pytest.mark.parametrize("column", ["solved_turn", "tokens", "verdict"])
def test_rank_columns_in_outs_bytes_are_refused(column):
    buffer = np.full(2 * N, 0.5)
    out = buffer[:N]
    shared = buffer.view(np.int64)[N - 1:2 * N - 1]  # its first element is out's last
    columns = {"solved_turn": TURNS.astype(np.int64), "tokens": np.arange(N, dtype=np.int64) * 100,
               "verdict": np.where(TURNS > 0, 4, 1).astype(np.int64)}
    shared[:] = columns[column]
    columns[column] = shared
    order = leap.KernelOrder.with_speedup_and_tokens(0.05, 0.1)
    refused(lambda: leap.rank_advantages(columns["solved_turn"], IDS, speedup=np.ones(N), tokens=columns["tokens"],
                                         verdict=columns["verdict"], order=order, out=out),
            buffer, f"out overlaps {column}")


def test_float32_shifted_view_is_refused():
    buffer = np.zeros(N + 1, dtype=np.float32)
    buffer[:N] = VALUES
    refused(lambda: leap.grpo_advantages(buffer[:N], IDS, out=buffer[1:]), buffer, "out overlaps rewards")


def test_normalize_refuses_group_ids_in_the_advantages_bytes():
    advantages = np.linspace(-1.0, 1.0, N)
    ids = advantages.view(np.uint32)[:N]
    ids[:] = IDS
    refused(lambda: leap.normalize_advantages(advantages, ids), advantages, "advantages overlaps group_ids")


def test_torch_views_of_one_storage():
    import torch
    for name, (call, argument) in FUNCTIONS.items():
        buffer = torch.full((N + 1,), 0.75, dtype=torch.float64)
        buffer[:N] = torch.from_numpy(VALUES)
        refused(lambda: call(buffer[:N], torch.from_numpy(IDS.astype(np.int64)), buffer[1:]), buffer.numpy(),
                f"out overlaps {argument}")
        refused(lambda: call(buffer[1:], torch.from_numpy(IDS.astype(np.int64)), buffer[:N]), buffer.numpy(),
                f"out overlaps {argument}")
        wide = torch.full((2 * N,), -7.0, dtype=torch.float64)
        wide[N:] = torch.from_numpy(VALUES)
        returned = call(wide[N:], torch.from_numpy(IDS.astype(np.int64)), wide[:N])
        assert torch.equal(wide[:N], torch.from_numpy(fresh(name))), name
        assert isinstance(returned, torch.Tensor)
