# SPDX-License-Identifier: Apache-2.0
"""A request as one line of the serve protocol (docs/serve-protocol.md), refused at the client when the
sandbox could not read it.

`leap-sandbox serve` and a fleet member answer a line they cannot parse with ``"id": null``
(``parse_error``): nothing in that answer says which request it was. So SandboxPool and FleetClient
check each request before sending it, against the rules of serve's line reader
(sandbox/src/protocol: request_handler.cpp, bounded_json.cpp), and refuse at submit, naming the field
and what is wrong with it, every request that reader would refuse:

- a number that is not finite (NaN, Infinity: JSON has none), or an integer beyond a double's range
  (serve reads an integer past 64 bits as a double, and one past a double's range is a parse error);
- a string holding a lone surrogate (U+D800 to U+DFFF not in a high-low pair): it has no UTF-8 form,
  and serve's parser refuses the escape Python would write for it;
- arrays and objects nested deeper than the server's limit (``--max-depth``, 64; the request object
  itself is level 1);
- a line longer than the server's limit (``--max-request-bytes``, 4 MiB, without the newline);
- a value JSON has no form for (a set, bytes, an object), or an object key that is not a string,
  number, bool or None (json.dumps writes those as strings).

The walk over the request is iterative and stops at the depth limit, so a self-referencing or very
deep value is refused without recursion, and every string is scanned once (linear in its length).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Optional

__all__ = ["DEFAULT_MAX_DEPTH", "DEFAULT_MAX_REQUEST_BYTES", "RequestEncodingError", "encode_request", "string_problem",
           "lone_surrogate"]

DEFAULT_MAX_REQUEST_BYTES = 4 << 20  # serve's and the fleet member's --max-request-bytes default
DEFAULT_MAX_DEPTH = 64                # serve's --max-depth default; the fleet member's fixed limit

_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


class RequestEncodingError(ValueError, TypeError):
    """A request the sandbox could not read, refused before it is sent. ``field`` names the value
    (``"source"``, ``"task.params[2].min"``; ``""`` for the request object itself), ``problem`` says
    what is wrong with it. A ValueError, and a TypeError too, as json.dumps raised one or the other
    before (TypeError for a value JSON has no form for)."""

    def __init__(self, field: str, problem: str) -> None:
        where = f"field {field!r}" if field else "the request"
        super().__init__(f"cannot send the request: {where} {problem}")
        self.field = field
        self.problem = problem


def lone_surrogate(text: str) -> Optional[tuple[int, int]]:
    """(index, code point) of the first lone surrogate in text, or None. A high-low pair is not lone:
    json.dumps writes it as two escapes that the sandbox reads back as one character."""
    if text.isascii() or _ANY_SURROGATE.search(text) is None:
        return None
    match = _LONE_SURROGATE.search(text)
    return None if match is None else (match.start(), ord(match.group()))


def _child(path: str, key: object) -> str:
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    name = str(key)
    if name.isidentifier():
        return f"{path}.{name}" if path else name
    return f"{path}[{name!r}]"


def string_problem(text: str) -> Optional[str]:
    """What makes text unreadable to the sandbox (a lone surrogate), or None."""
    found = lone_surrogate(text)
    if found is None:
        return None
    index, code = found
    return (f"holds a lone surrogate U+{code:04X} at character {index}, which is not valid Unicode (it has no "
            f"UTF-8 form) and which the sandbox cannot read; remove it, or decode the text it came from with "
            f"errors='replace'")


def _scalar_problem(value: object) -> Optional[str]:
    """What the sandbox could not read in a scalar; None when it can. Containers are walked by the caller."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return string_problem(value)
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 64):
            return None
        try:
            float(value)
        except OverflowError:
            return (f"is an integer of {len(str(abs(value)))} digits, beyond the range of a double: the sandbox "
                    f"reads an integer past 64 bits as a double and cannot read this one")
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (f"is {value!r}: JSON has no NaN or Infinity, and the sandbox "
                                                  f"reads finite numbers only; send a finite number or None")
    return (f"is of type {type(value).__name__}, which JSON has no form for (use str, int, float, bool, None, a "
            f"list, a tuple or a dict)")


def _key_problem(key: object) -> Optional[str]:
    """What is wrong with an object key, said of the key; None when json.dumps writes it as a string the
    sandbox reads (a str, or an int, float, bool or None, written as its string)."""
    if isinstance(key, str):
        return string_problem(key)
    if isinstance(key, float):
        return None if math.isfinite(key) else "is not a finite number, which JSON has no form for"
    if key is None or isinstance(key, int):
        return None
    return f"is of type {type(key).__name__}; JSON object keys are strings"


def _check(message: Mapping[str, Any], max_depth: int) -> None:
    """Raises RequestEncodingError for the first value (in document order) the sandbox could not read."""
    # (value, its path, its depth: the request object is 1, a container inside it 2, ...)
    stack: list[tuple[object, str, int]] = [(message, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, Mapping):
            items: list[tuple[object, object]] = list(value.items())
        elif isinstance(value, (list, tuple)):
            items = list(enumerate(value))
        else:
            problem = _scalar_problem(value)
            if problem is not None:
                raise RequestEncodingError(path, problem)
            continue
        if depth > max_depth:
            raise RequestEncodingError(path, f"nests arrays and objects {depth} levels deep (the request itself is "
                                             f"level 1), past the sandbox's limit of {max_depth} (serve --max-depth)"
                                             f"; a value that contains itself is nested without end")
        is_object = isinstance(value, Mapping)
        for key, item in reversed(items):
            child = _child(path, key)
            if is_object:
                problem = _key_problem(key)
                if problem is not None:
                    raise RequestEncodingError(path, f"has a key {key!r} that {problem}")
            stack.append((item, child, depth + 1))


def _plain(value: object) -> object:
    # json.dumps writes dicts, lists and tuples; another Mapping (a MappingProxyType, a task spec class)
    # is written as the dict it holds.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode_request(message: Mapping[str, Any], *, max_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                   max_depth: int = DEFAULT_MAX_DEPTH) -> str:
    """The request as one protocol line (ASCII JSON, without its newline), or RequestEncodingError when
    the sandbox could not read it within max_bytes and max_depth."""
    _check(message, max_depth)
    line = json.dumps(message, default=_plain, allow_nan=False)
    if len(line) > max_bytes:  # ASCII: characters are bytes
        sizes = {str(key): len(json.dumps(value, default=_plain)) for key, value in message.items()}
        largest = max(sizes, key=lambda key: sizes[key])
        raise RequestEncodingError(largest, f"takes {sizes[largest]} bytes of a request line of {len(line)}, past the "
                                            f"sandbox's limit of {max_bytes} bytes for the line (serve "
                                            f"--max-request-bytes)")
    return line
