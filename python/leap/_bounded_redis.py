# SPDX-License-Identifier: Apache-2.0
"""A Redis connection whose replies are read with bounded memory, for leap.fleet's reader.

Anyone who can write to a fleet's streams can add an entry of hundreds of MB to a client's reply
stream, and redis-py keeps a reply whole (several times over while parsing it). This reader streams
a reply's bytes off the socket instead, as the C++ client's reader does
(sandbox/src/fleet/fleet_bounded_reply.cpp, with the client's limits): a string longer than
``max_value_bytes`` keeps only its first ``oversized_prefix_bytes`` (its length is known before its
bytes arrive), the strings of one reply keep ``max_kept_bytes`` in all, at most ``max_elements``
array elements are kept; the rest is read and dropped, and each string and array says its full length
so the caller can tell what was cut. What it holds at once: its 1 MiB buffer and what it keeps.
RESP2 only; the commands the fleet client sends (AUTH, SELECT, XREAD, XREVRANGE, XDEL).
"""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

__all__ = ["Array", "Bulk", "BoundedRedis", "Limits", "RedisReplyError", "StreamEntry", "stream_entries"]


@dataclass(frozen=True)
class Limits:
    max_value_bytes: int = 32 << 20         # a longer string is oversized: only its start is kept
    oversized_prefix_bytes: int = 256       # kept of an oversized string
    max_kept_bytes: int = 64 << 20          # kept of all strings of one reply
    max_elements: int = 512 * 16 + 8        # array elements kept in one reply, at any depth
    max_line_bytes: int = 1 << 16           # a status, error or length line


class RedisReplyError(Exception):
    """Redis answered the command with an error (-ERR ...)."""


@dataclass
class Bulk:
    """A string: its kept start and its full length (whole when they agree)."""
    data: bytes
    length: int

    @property
    def whole(self) -> bool:
        return len(self.data) == self.length


@dataclass
class Array:
    """An array: its kept elements and its full element count."""
    elements: list[Reply] = field(default_factory=list)
    length: int = 0

    @property
    def whole(self) -> bool:
        return len(self.elements) == self.length


# nil is None; a status line is str; an integer is int; an error inside an array is a RedisReplyError.
Reply = Union[None, int, str, Bulk, Array, RedisReplyError]

_MAX_DEPTH = 8  # XREAD's reply nests 5 deep


class BoundedRedis:
    """One connection; not thread-safe (leap.fleet's reader thread owns it). Every failure to talk to
    Redis (refused, reset, timed out, a reply that is not RESP) is a ConnectionError or an OSError, after
    which the connection is closed and the next command connects again."""

    def __init__(self, host: str, port: int, db: int = 0, *, username: Optional[str] = None,
                 password: Optional[str] = None, connect_timeout: float = 5.0, limits: Limits = Limits()) -> None:
        self._address = (host, port)
        self._db = db
        self._username = username
        self._password = password
        self._connect_timeout = connect_timeout
        self._limits = limits
        self._socket: Optional[socket.socket] = None
        self._buffer = bytearray(1 << 20)
        self._view = memoryview(self._buffer)
        self._pos = self._end = 0
        self._kept_bytes = self._kept_elements = 0

    @property
    def limits(self) -> Limits:
        return self._limits

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.close()
            finally:
                self._socket = None

    def command(self, args: Sequence[Union[str, bytes]], timeout: float) -> Reply:
        """Sends one command and reads its reply, waiting at most `timeout` seconds for each read."""
        try:
            if self._socket is None:
                self._connect()
            assert self._socket is not None
            self._socket.settimeout(timeout)
            reply = self._roundtrip(args)
        except BaseException:
            self.close()
            raise
        if isinstance(reply, RedisReplyError):
            raise reply
        return reply

    # -- internals ----------------------------------------------------------------------------------
    def _connect(self) -> None:
        self._socket = socket.create_connection(self._address, timeout=self._connect_timeout)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._pos = self._end = 0
        setup: list[list[Union[str, bytes]]] = []
        if self._password:
            setup.append(["AUTH", self._username, self._password] if self._username else ["AUTH", self._password])
        if self._db:
            setup.append(["SELECT", str(self._db)])
        for args in setup:
            reply = self._roundtrip(args)
            if isinstance(reply, RedisReplyError):
                raise ConnectionError(f"Redis refused {args[0]!r} ({reply}); check $LEAP_SANDBOX_REDIS_PASSWORD and "
                                      "$LEAP_SANDBOX_REDIS_USER")

    def _roundtrip(self, args: Sequence[Union[str, bytes]]) -> Reply:
        assert self._socket is not None
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg.encode() if isinstance(arg, str) else bytes(arg)
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self._socket.sendall(b"".join(parts))
        self._kept_bytes = self._kept_elements = 0
        return self._value(0)

    def _more(self) -> None:
        """Reads more bytes after the unread ones; only called when the reply needs them, so a read never
        waits for bytes past the reply's end."""
        assert self._socket is not None
        if self._pos == self._end:
            self._pos = self._end = 0
        elif self._end == len(self._buffer):
            unread = self._end - self._pos
            self._buffer[:unread] = self._buffer[self._pos:self._end]
            self._pos, self._end = 0, unread
        n = self._socket.recv_into(self._view[self._end:])
        if n == 0:
            raise ConnectionError("Redis closed the connection")
        self._end += n

    def _line(self) -> bytes:
        while True:
            i = self._buffer.find(b"\r\n", self._pos, self._end)
            if i >= 0:
                line = bytes(self._buffer[self._pos:i])
                self._pos = i + 2
                return line
            if self._end - self._pos > self._limits.max_line_bytes:
                raise ConnectionError("Redis sent a line longer than the reader's limit")
            self._more()

    def _number(self, what: str) -> int:
        line = self._line()
        try:
            return int(line)
        except ValueError:
            raise ConnectionError(f"Redis sent a malformed {what} {line[:32]!r}") from None

    def _value(self, depth: int) -> Reply:
        if depth > _MAX_DEPTH:
            raise ConnectionError("Redis sent a reply nested deeper than any fleet command's")
        if self._pos == self._end:
            self._more()
        kind = self._buffer[self._pos]
        self._pos += 1
        if kind == ord("+"):
            return self._line().decode(errors="replace")
        if kind == ord("-"):
            return RedisReplyError(self._line().decode(errors="replace"))
        if kind == ord(":"):
            return self._number("integer")
        if kind == ord("$"):
            length = self._number("string length")
            return None if length < 0 else self._bulk(length)
        if kind == ord("*"):
            length = self._number("array length")
            if length < 0:
                return None
            array = Array(length=length)
            for _ in range(length):
                # The slot is taken before the element is read, so outer arrays keep their place first.
                keep = self._kept_elements < self._limits.max_elements
                if keep:
                    self._kept_elements += 1
                element = self._value(depth + 1)
                if keep:
                    array.elements.append(element)
            return array
        raise ConnectionError(f"Redis sent an unknown reply type {chr(kind)!r}")

    def _bulk(self, length: int) -> Bulk:
        limits = self._limits
        room = max(0, limits.max_kept_bytes - self._kept_bytes)
        keep = min(length, limits.oversized_prefix_bytes if length > limits.max_value_bytes else length, room)
        kept = bytearray()
        left = length
        while left > 0:
            if self._pos == self._end:
                self._more()
            take = min(left, self._end - self._pos)
            if len(kept) < keep:
                kept += self._view[self._pos:self._pos + min(take, keep - len(kept))]
            self._pos += take
            left -= take
        while self._end - self._pos < 2:
            self._more()
        if self._buffer[self._pos:self._pos + 2] != b"\r\n":
            raise ConnectionError("Redis sent a string without its closing CRLF")
        self._pos += 2
        self._kept_bytes += len(kept)
        return Bulk(bytes(kept), length)


@dataclass
class StreamEntry:
    """One stream entry as read: its fields' kept values and full lengths; complete when no field name
    was cut and no field was left off."""
    id: bytes
    fields: dict[bytes, bytes]
    lengths: dict[bytes, int]
    complete: bool


def stream_entries(reply: Reply) -> list[StreamEntry]:
    """The entries of an XRANGE / XREVRANGE reply, or of one stream of an XREAD reply."""
    out: list[StreamEntry] = []
    if not isinstance(reply, Array):
        return out
    for entry in reply.elements:
        if not isinstance(entry, Array) or not entry.elements or not isinstance(entry.elements[0], Bulk):
            continue  # deleted meanwhile
        entry_id = entry.elements[0]
        complete = entry.whole and entry_id.whole
        fields: dict[bytes, bytes] = {}
        lengths: dict[bytes, int] = {}
        if len(entry.elements) > 1:
            body = entry.elements[1]
            if not isinstance(body, Array):
                continue
            complete = complete and body.whole and body.length % 2 == 0
            for k in range(0, len(body.elements) - 1, 2):
                name, value = body.elements[k], body.elements[k + 1]
                if not isinstance(name, Bulk) or not name.whole:  # a name cut short names nothing
                    complete = False
                    continue
                data, length = (value.data, value.length) if isinstance(value, Bulk) else (b"", 0)
                fields[name.data] = data
                lengths[name.data] = length
        out.append(StreamEntry(entry_id.data, fields, lengths, complete))
    return out
