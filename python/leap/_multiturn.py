# SPDX-License-Identifier: Apache-2.0
"""What the multi-turn trainer adapters (leap.verl_agent, leap.trl, leap.openrlhf) share, with no trainer
imported: the gate's band for a group or a part of one, the feedback message, token ids out of whatever a
tokenizer's chat template returns, and a coroutine run to completion from synchronous code.
"""
from __future__ import annotations

import asyncio
import importlib
import math
import threading
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Optional, TypeVar

_core: Any = importlib.import_module("._core", __package__)  # typed by its .pyi stubs where installed

T = TypeVar("T")

DEFAULT_FEEDBACK = ("Your kernel was evaluated: {verdict}.\n{feedback}\n"
                    "Fix the kernel and answer with the whole corrected kernel in one ```cuda block.")


def band_for(size: int, group_size: int, t_min: Optional[int] = None, t_max: Optional[int] = None) -> Any:
    """The FailBandGate for `size` members of a group configured as `group_size` with the band
    (t_min, t_max) (default: LEAP's, leap.FailBandGate.leap_default(group_size)). A full group gets
    the band itself; a part of k members gets t_min' = ceil(t_min * k / n) and t_max' = k - (n - t_max),
    raised to t_min' when lower."""
    full = _core.FailBandGate.leap_default(group_size) if t_min is None or t_max is None else \
        _core.FailBandGate(int(t_min), int(t_max))
    if size == group_size:
        return full
    low = math.ceil(full.t_min * size / group_size)
    high = max(size - (group_size - full.t_max), low)
    return _core.FailBandGate(low, high)


def token_ids(encoded: Any, what: str = "apply_chat_template") -> list[int]:
    """The token ids of one sequence out of what a tokenizer returned: a list of ints (transformers 4's
    apply_chat_template(tokenize=True)), a BatchEncoding or any mapping with "input_ids" (transformers 5's
    default, return_dict=True), a tensor or an array, or a batch of one of these. Anything else is a
    TypeError naming what came back: token ids are never taken from a mapping's keys."""
    value = encoded
    if isinstance(value, Mapping) or (hasattr(value, "keys") and hasattr(value, "__getitem__")
                                      and not isinstance(value, (list, tuple, str))):
        try:
            value = value["input_ids"]
        except (KeyError, TypeError, IndexError):
            raise TypeError(f"{what} returned a mapping without 'input_ids' (keys {list(value.keys())}): "
                            f"expected token ids") from None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{what} returned {type(encoded).__name__}, not token ids: pass tokenize=True")
    if len(value) == 1 and isinstance(value[0], (list, tuple)):  # a batch of one
        value = value[0]
    ids = list(value)
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in ids):
        raise TypeError(f"{what} returned {type(encoded).__name__} whose items are not token ids "
                        f"(first: {ids[0]!r})" if ids else f"{what} returned no token ids")
    return ids


def run_to_completion(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine from synchronous code and returns its result. asyncio.run where no event loop runs
    in this thread; where one does (a notebook, a trainer that calls the hook from async code), the
    coroutine runs on its own loop in a helper thread while this one waits, since asyncio.run would
    raise there."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # noqa: BLE001 - handed back to the caller's thread
            outcome["error"] = error

    helper = threading.Thread(target=run, name="leap-run-to-completion")
    helper.start()
    helper.join()
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["value"]
    return result


class OutOfRoom(RuntimeError):
    """No room is left in the response for another turn (verl's response_length, TRL's max_completion_length):
    raised by an adapter's policy before it adds anything, so the episode ends there."""


def trained_outcome(turns: Sequence[Any], kept: Sequence[bool]) -> tuple[Any, int]:
    """The Outcome of an episode over the turns that are trained, and their count: the leading turns whose
    completion was generated and, per `kept` (one flag per generated completion, in order), lies whole in the
    trained response. A turn the policy could not take (OutOfRoom) and every turn after it are left out, so
    "solved at turn k" is said only of a turn k the loss sees."""
    count = 0
    for turn in turns:
        if turn.completion is None or count >= len(kept) or not kept[count]:
            break
        count += 1
    chosen = list(turns[:count])
    outcome = _core._summarize([t.verdict for t in chosen], [t.speedup for t in chosen], [t.tokens for t in chosen],
                               [t.environment_failure for t in chosen])
    return outcome, count


def chat_suffix_ids(tokenizer: Any, messages: Sequence[Mapping[str, Any]], *, eos_token_id: Optional[int] = None,
                    **template_kwargs: Any) -> list[int]:
    """The token ids a chat template adds for `messages` after an assistant turn, generation prompt included:
    the template over a dummy exchange plus `messages`, less the template over the dummy exchange alone
    (trimmed at its last EOS, where a template ends a turn with EOS and a newline), as TRL computes a tool
    result's ids (grpo_trainer.py:1881-1930 at f2cd577). return_dict=False is passed: transformers 5 returns
    a BatchEncoding by default."""
    dummy = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "dummy"}]
    prefix = token_ids(tokenizer.apply_chat_template(dummy, add_generation_prompt=False, tokenize=True,
                                                     return_dict=False, **template_kwargs))
    full = token_ids(tokenizer.apply_chat_template(dummy + list(messages), add_generation_prompt=True, tokenize=True,
                                                   return_dict=False, **template_kwargs))
    if eos_token_id is not None:
        ends = [i for i, t in enumerate(prefix) if t == eos_token_id]
        if ends:
            prefix = prefix[:ends[-1] + 1]
    if full[:len(prefix)] != prefix:
        raise ValueError("the chat template does not render a conversation as its prefix followed by the new "
                         "messages; pass encode_feedback= to encode the feedback yourself")
    return full[len(prefix):]
