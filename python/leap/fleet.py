# SPDX-License-Identifier: Apache-2.0
"""The trainer's client of a sandbox fleet on Redis Streams (``leap-sandbox fleet-member``), on python3-redis.

    from leap.fleet import FleetClient

    with FleetClient("redis://10.0.0.5:6379") as fleet:    # password from $LEAP_SANDBOX_REDIS_PASSWORD
        futures = [fleet.eval("softmax", source) for source in candidates]
        results = [f.result() for f in futures]          # dicts: verdict, speedup, feedback, ...

The same requests and results as ``leap.sandbox.SandboxPool`` (``compile``/``eval``/``info``/``submit``
return ``concurrent.futures.Future`` objects whose result is the response's ``result`` object; an
``"ok": false`` answer sets a ``SandboxError``), served by any number of members on any number of
machines. A request is one entry of the request stream (``request`` = the JSON line, ``reply`` = this
client's reply stream ``<stream>:reply:<name>``); a member answers on the reply stream.

Authentication: requests and answers are signed under the fleet's shared key (HMAC-SHA256, the same
tags as the C++ client and the members), read from ``key``/``key_file``, else the file named by
$LEAP_FLEET_KEY_FILE, else $LEAP_FLEET_KEY; at least 16 bytes. A key file must be a regular file of
this user's, that group and others may not read, of at most 4096 bytes (read_fleet_key says which
rule a file breaks and how to fix it; a FIFO or a directory is refused, never waited on). Without a
key the client refuses to start unless ``insecure_no_key=True``. An answer without a valid tag for this
client's reply stream, session and request id is dropped (``stats()["forged_dropped"]``) and logged
(logger ``leap.fleet``); the real answer still settles the future. An entry that carries another
session is another client's of the same name when its tag is valid for that session (left for it,
counted in ``duplicates_dropped``), else a forgery.

Every future resolves. A request a member could not read is refused at submit with
``leap.sandbox.RequestEncodingError``, naming the field (a NaN, a lone surrogate, nesting past 64, a
line past ``max_request_bytes``); a member's answer to a line it could not read (``"id": null``) fails
the request whose signed id it carries. The reply stream is read with bounded memory, as the C++ client
reads it: an entry with a value over 32 MiB is streamed past, never held, and dropped as a forgery
(no answer is that large), and one read keeps at most 64 MiB.

Fork: a client belongs to the process that made it. Used in a forked child it raises RuntimeError
saying to create a new client there; answers are matched by (session, id), the session random per
client and process, so an answer never reaches another client's future.

Delivery is at least once: a request whose member died is taken over by another, so an answer may
come twice; the second answer for an id is dropped (``stats()["duplicates_dropped"]``) and each
future is settled exactly once. A request unanswered at its deadline (``timeout`` seconds after
submit) fails with ``TimeoutError``. After a Redis restart the reader reconnects (50 ms doubling to
2 s) and resumes after the last answer it saw; a submit during an outage waits for Redis, at most until
its deadline. Thread-safe.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import hmac
import itertools
import json
import logging
import os
import pwd
import secrets
import socket
import stat
import threading
import time
from typing import Any, Optional, Union

import redis

from ._bounded_redis import Array, BoundedRedis, RedisReplyError, StreamEntry, stream_entries
from ._request_line import DEFAULT_MAX_DEPTH, DEFAULT_MAX_REQUEST_BYTES, encode_request
from .sandbox import Result, SandboxError

__all__ = ["FleetClient", "FleetKeyError", "parse_redis_url", "read_fleet_key", "PASSWORD_ENV", "USER_ENV",
           "KEY_ENV", "KEY_FILE_ENV"]

PASSWORD_ENV = "LEAP_SANDBOX_REDIS_PASSWORD"
USER_ENV = "LEAP_SANDBOX_REDIS_USER"
KEY_FILE_ENV = "LEAP_FLEET_KEY_FILE"
KEY_ENV = "LEAP_FLEET_KEY"
KEY_MIN_BYTES = 16
_CONNECTION_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
# What the bounded reader raises when Redis is away or sends what is not RESP (socket.timeout is an OSError).
_READER_ERRORS = (ConnectionError, OSError, RedisReplyError)
KEY_FILE_MAX_BYTES = 4096
_READ_COUNT = 512  # answers taken in one read of the reply stream
_TAG_VERSION = b"leap-fleet-v1"
# The fields of the fleet's stream entries, as sandbox/src/fleet/fleet_fields.hpp spells them. A reply's
# member name is in "worker", its 0.1 spelling, kept so that clients and members of 0.1 read each other.
_F_REQUEST, _F_REPLY_STREAM, _F_SESSION, _F_ID, _F_TAG = "request", "reply", "session", "id", "tag"
_F_RESPONSE, _F_MEMBER = "response", "worker"
_log = logging.getLogger("leap.fleet")
_MAKE_KEY = "umask 077; head -c 32 /dev/urandom | base64 > fleet.key"


class FleetKeyError(RuntimeError):
    """No usable fleet key: too short, a file others may read, none where one is required."""


def _checked_key(data: bytes, where: str) -> bytes:
    data = data.rstrip(b"\r\n")
    if len(data) < KEY_MIN_BYTES:
        raise FleetKeyError(f"the fleet key {where} is {len(data)} bytes; it must be at least {KEY_MIN_BYTES} "
                            f"(make one with: {_MAKE_KEY})")
    return data


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _key_from_file(path: Union[str, os.PathLike[str]]) -> bytes:
    """The key in a key file, checked as the fleet's C++ side checks one; FleetKeyError naming the rule a
    file breaks and what to do: it must open (without waiting: O_NONBLOCK, so that a FIFO is refused rather
    than waited on), be a regular file, belong to this user, be closed to group and others, and hold at
    most 4096 bytes."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        raise FleetKeyError(f"cannot read the fleet key file {name}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((what for test, what in _FILE_KINDS if test(st.st_mode)), "not a file")
            raise FleetKeyError(f"the fleet key file {name} is {kind}, not a regular file; name the file that holds "
                                f"the key")
        me = os.geteuid()
        if st.st_uid != me:
            raise FleetKeyError(f"the fleet key file {name} belongs to {_user(st.st_uid)}, not to this user "
                                f"({_user(me)}); a key file is trusted only from its own user: copy the key into a "
                                f"file of this user's (umask 077; cp {name} fleet.key) or chown it")
        if st.st_mode & 0o077:
            raise FleetKeyError(f"the fleet key file {name} may be read by group or others (mode "
                                f"{stat.S_IMODE(st.st_mode):04o}); make it private with: chmod 600 {name}")
        if st.st_size > KEY_FILE_MAX_BYTES:
            raise FleetKeyError(f"the fleet key file {name} is {st.st_size} bytes; a key file holds one key (at most "
                                f"{KEY_FILE_MAX_BYTES} bytes)")
        chunks: list[bytes] = []
        size = 0
        while size <= KEY_FILE_MAX_BYTES:
            chunk = os.read(fd, KEY_FILE_MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise FleetKeyError(f"cannot read the fleet key file {name}: {e.strerror}") from None
    finally:
        os.close(fd)
    if size > KEY_FILE_MAX_BYTES:
        raise FleetKeyError(f"the fleet key file {name} grew past {KEY_FILE_MAX_BYTES} bytes while read; a key file "
                            f"holds one key")
    return _checked_key(b"".join(chunks), f"in {name}")


def read_fleet_key(key: Union[str, bytes, None] = None,
                   key_file: Union[str, os.PathLike[str], None] = None) -> Optional[bytes]:
    """The fleet key as bytes: `key`, else `key_file`'s, else the file named by $LEAP_FLEET_KEY_FILE,
    else $LEAP_FLEET_KEY; None when none is given. A key or file that is given but unusable raises
    FleetKeyError (a typo must not turn authentication off)."""
    if key is not None:
        return _checked_key(key.encode() if isinstance(key, str) else bytes(key), "given")
    if key_file is not None:
        return _key_from_file(key_file)
    if KEY_FILE_ENV in os.environ:
        if not os.environ[KEY_FILE_ENV]:
            raise FleetKeyError(f"${KEY_FILE_ENV} is set but empty; name the key file or unset it")
        return _key_from_file(os.environ[KEY_FILE_ENV])
    if KEY_ENV in os.environ:
        return _checked_key(os.environ[KEY_ENV].encode(), f"in ${KEY_ENV}")
    return None


def _signed_message(kind: bytes, stream: bytes, reply_stream: bytes, session: bytes, request_id: bytes,
                    line: bytes) -> bytes:
    """The bytes a tag covers, as the C++ side builds them (sandbox/src/fleet/fleet_auth.hpp): netstrings of
    the version, the kind, the stream, the reply stream, the session, the id and the line's SHA-256."""
    parts = [_TAG_VERSION, kind, stream, reply_stream, session, request_id, hashlib.sha256(line).hexdigest().encode()]
    return b"".join(b"%d:%s," % (len(p), p) for p in parts)


def _tag(key: bytes, kind: bytes, stream: bytes, reply_stream: bytes, session: bytes, request_id: bytes,
         line: bytes) -> str:
    return hmac.new(key, _signed_message(kind, stream, reply_stream, session, request_id, line),
                    hashlib.sha256).hexdigest()


def parse_redis_url(url: str) -> tuple[str, int, int]:
    """(host, port, db) of redis://HOST:PORT[/DB], as the member reads it. A password in the URL is
    refused: it would end up in ps and logs; set $LEAP_SANDBOX_REDIS_PASSWORD instead."""
    hint = " (expected redis://HOST:PORT[/DB], e.g. redis://10.0.0.5:6379/0)"
    if not url.startswith("redis://"):
        raise ValueError(f"Redis URL {url!r}: the scheme must be redis://" + hint)
    rest, _, path = url[len("redis://"):].partition("/")
    if "@" in rest:
        raise ValueError(f"Redis URL {url!r}: credentials in a URL end up in ps and logs; put the password in "
                         f"${PASSWORD_ENV} (and an ACL user in ${USER_ENV}) instead")
    if rest.startswith("["):
        host, _, port_text = rest[1:].partition("]")
        port_text = port_text[1:] if port_text.startswith(":") else port_text
    else:
        host, _, port_text = rest.partition(":")
    if not host:
        raise ValueError(f"Redis URL {url!r}: no host" + hint)
    try:
        port = int(port_text) if port_text else 6379
        db = int(path) if path else 0
    except ValueError:
        raise ValueError(f"Redis URL {url!r}: port and database must be numbers" + hint) from None
    if not 1 <= port <= 65535 or db < 0:
        raise ValueError(f"Redis URL {url!r}: port {port} or database {db} out of range" + hint)
    return host, port, db


def _delay(attempt: int) -> float:
    return min(0.05 * 2.0 ** min(attempt, 6), 2.0)


class FleetClient:
    """Submits requests to a fleet's request stream and collects answers; see the module's documentation."""

    def __init__(self, url: str = "redis://127.0.0.1:6379", *, stream: str = "leap:requests",
                 name: Optional[str] = None, timeout: float = 600.0, request_maxlen: int = 1_000_000,
                 block_ms: int = 200, key: Union[str, bytes, None] = None,
                 key_file: Union[str, os.PathLike[str], None] = None, insecure_no_key: bool = False,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        """url: redis://HOST:PORT[/DB]; the password comes from $LEAP_SANDBOX_REDIS_PASSWORD.
        stream: the fleet's request stream (the members' --stream).
        name: names this client's reply stream; unique per client (default <hostname>-<pid>-<random>).
        timeout: seconds from submit to answer, unless a submit says otherwise.
        request_maxlen: MAXLEN ~ cap of the request stream (the most requests waiting).
        block_ms: how long the reader blocks for answers; also how often deadlines are checked.
        key, key_file: the fleet key (bytes or str) or a file holding it; default: $LEAP_FLEET_KEY_FILE,
        else $LEAP_FLEET_KEY. insecure_no_key: with no key anywhere, run unauthenticated (anyone who can
        write to Redis can then forge verdicts) instead of raising FleetKeyError.
        max_request_bytes: the members' --max-request-bytes (default 4 MiB): a longer request line is
        refused at submit."""
        host, port, db = parse_redis_url(url)
        self._key = read_fleet_key(key, key_file)
        if self._key is None and not insecure_no_key:
            raise FleetKeyError(
                "leap.fleet.FleetClient: no fleet key. Requests and answers are signed with a key shared by the "
                f"fleet's clients and members; put at least {KEY_MIN_BYTES} random bytes in a file only you can read "
                f"({_MAKE_KEY}) and name it in ${KEY_FILE_ENV} (or key_file=), or put the key in ${KEY_ENV}. To run "
                "without authentication (anyone who can write to the fleet's Redis can then submit work and forge "
                "verdicts), pass insecure_no_key=True")
        self._pid = os.getpid()
        self._session = f"{self._pid}-{secrets.token_hex(16)}"
        if timeout <= 0 or block_ms <= 0 or request_maxlen < 1 or max_request_bytes < 1:
            raise ValueError("timeout, block_ms, request_maxlen and max_request_bytes must be positive")
        self._max_request_bytes = int(max_request_bytes)
        self.stream = stream
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(6)}"
        self.reply_stream = f"{stream}:reply:{self.name}"
        self._timeout = float(timeout)
        self._maxlen = int(request_maxlen)
        self._block_ms = int(block_ms)
        password, username = os.environ.get(PASSWORD_ENV) or None, os.environ.get(USER_ENV) or None
        self._submitter = redis.Redis(host=host, port=port, db=db, decode_responses=True, socket_timeout=5,
                                      socket_connect_timeout=5, password=password, username=username)
        # Answers are read as bytes (a tag is over the bytes, and a forged entry need not be UTF-8) and with
        # bounded memory: anyone who can write to the reply stream can put an entry of hundreds of MB there.
        self._reader_redis = BoundedRedis(host, port, db, username=username, password=password)
        self._read_timeout = 5 + block_ms / 1000
        try:
            # Answers already in a reused reply stream belong to an earlier client of that name: start after them.
            last = stream_entries(self._reader_redis.command(["XREVRANGE", self.reply_stream, "+", "-", "COUNT", "1"],
                                                             timeout=5))
        except _READER_ERRORS as e:
            raise ConnectionError(f"cannot reach Redis at {url}: {e} (is it running, and reachable from here?)") from e
        self._last_seen: bytes = last[0].id if last else b"0-0"
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._submit_lock = threading.Lock()
        self._waiting: dict[int, tuple[concurrent.futures.Future[Result], float]] = {}  # id -> (future, deadline)
        self._stats = dict(submitted=0, answered=0, duplicates_dropped=0, timeouts=0, reconnects=0, forged_dropped=0)
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="leap-fleet-reader", daemon=True)
        self._reader.start()

    @property
    def authenticated(self) -> bool:
        """False only under insecure_no_key without a key."""
        return self._key is not None

    def _check_process(self) -> None:
        # A forked child has a copy of this object but not its reader thread; its sockets and locks are
        # the parent's (a lock held at the fork stays held). Nothing in it may be used there.
        if os.getpid() != self._pid:
            raise RuntimeError(
                f"this FleetClient (reply stream {self.reply_stream}) was created in process {self._pid} and is used "
                f"in process {os.getpid()}, a fork of it; a client cannot cross a fork (its reader and connections "
                "stay with the parent). Create a new FleetClient in the child, after the fork")

    # -- requests ---------------------------------------------------------------------------------
    def submit(self, op: str, *, timeout: Optional[float] = None, **fields: Any) -> concurrent.futures.Future[Result]:
        """Any request: submit("compile", source=...); the client sets "id". Returns a Future. A request a
        member could not read raises leap.sandbox.RequestEncodingError (a ValueError) here, naming the field."""
        self._check_process()
        if "id" in fields:
            raise ValueError('leave "id" out: the client numbers its requests to match answers')
        if self._closing.is_set():
            raise RuntimeError("the FleetClient is closed")
        deadline = time.monotonic() + (self._timeout if timeout is None else float(timeout))
        future: concurrent.futures.Future[Result] = concurrent.futures.Future()
        request_id = next(self._ids)
        # Checked before anything waits for it: a request a member could not read is refused here, naming
        # the field, instead of being answered "id": null.
        line = encode_request({"id": request_id, "op": op, **fields}, max_bytes=self._max_request_bytes,
                              max_depth=DEFAULT_MAX_DEPTH)
        entry = {_F_REQUEST: line, _F_REPLY_STREAM: self.reply_stream, _F_SESSION: self._session,
                 _F_ID: str(request_id)}
        if self._key is not None:
            entry[_F_TAG] = _tag(self._key, b"request", self.stream.encode(), self.reply_stream.encode(),
                                self._session.encode(), str(request_id).encode(), line.encode())
        with self._lock:
            self._waiting[request_id] = (future, deadline)
        with self._submit_lock:
            attempt = 0
            while True:
                try:
                    self._submitter.xadd(self.stream, entry, maxlen=self._maxlen, approximate=True)
                    break
                except _CONNECTION_ERRORS:
                    if time.monotonic() + _delay(attempt) >= deadline:
                        self._expire(time.monotonic() + _delay(attempt))
                        return future
                    time.sleep(_delay(attempt))
                    attempt += 1
                except BaseException:
                    with self._lock:  # Redis refused the entry: nothing will answer it
                        self._waiting.pop(request_id, None)
                    raise
            with self._lock:
                self._stats["submitted"] += 1
                if attempt:
                    self._stats["reconnects"] += 1
        return future

    def compile(self, source: str, *, arch: Optional[str] = None,
                timeout: Optional[float] = None) -> concurrent.futures.Future[Result]:
        fields = {"source": source}
        if arch:
            fields["arch"] = arch
        return self.submit("compile", timeout=timeout, **fields)

    def eval(self, task: Union[str, dict[str, Any]], source: str, *,
             timeout: Optional[float] = None) -> concurrent.futures.Future[Result]:
        """task: a built-in task's name or a spec dict."""
        return self.submit("eval", timeout=timeout, task=task, source=source)

    def info(self, *, timeout: Optional[float] = None) -> concurrent.futures.Future[Result]:
        return self.submit("info", timeout=timeout)

    def stats(self) -> dict[str, int]:
        self._check_process()
        with self._lock:
            return dict(self._stats, pending=len(self._waiting))

    # -- answers ----------------------------------------------------------------------------------
    def _forged(self, fields: dict[bytes, bytes], session: bytes) -> Optional[str]:
        """Why an answer entry is not signed for `session` on this client's reply stream, or None when it is."""
        if self._key is None:
            return None
        tag = fields.get(_F_TAG.encode())
        request_id, line = fields.get(_F_ID.encode()), fields.get(_F_RESPONSE.encode())
        if tag is None:
            return "unsigned (no tag field)"
        if request_id is None or line is None:
            return "no 'id' or 'response' field"
        expected = _tag(self._key, b"reply", self.stream.encode(), self.reply_stream.encode(), session, request_id, line)
        if not hmac.compare_digest(expected.encode(), tag):
            return "the tag does not match (forged, or copied from another request)"
        return None

    def _drop_forged(self, entry_id: bytes, why: str) -> None:
        with self._lock:
            self._stats["forged_dropped"] += 1
            n = self._stats["forged_dropped"]
        if n & (n - 1) == 0:  # the 1st, 2nd, 4th, ...: a flood cannot flood the log
            _log.warning("leap.fleet.FleetClient: dropped answer %s on %s: %s (%d dropped so far; something without "
                         "the fleet key writes to this stream)", entry_id.decode(errors="replace"), self.reply_stream,
                         why, n)

    def _settle(self, line: str, member: str, signed_id: Optional[bytes]) -> Optional[str]:
        """Settles the future the response answers; returns why the response is refused, or None. A response
        with "id": null answers a request line the member could not read: the entry's id field (signed, with
        a key) says which request that was."""
        try:
            response = json.loads(line)
        except (ValueError, RecursionError):
            response = None
        if not isinstance(response, dict) or "id" not in response:
            if self._key is None or signed_id is None or not signed_id.isdigit():
                return "the response is not a JSON object with an id"
            # A signed line that is no protocol response at all: no other answer follows, so it fails the
            # request its signed id names at once (as the C++ client does) instead of leaving it to time out.
            response = {"id": None, "ok": False, "code": "internal_error",
                        "error": f"the answer of fleet member {member[:64]!r} is not a protocol response (a JSON "
                                 f"object with an integer or null id): {line[:200]!r}"}
        request_id: Any = response["id"]
        if request_id is None and signed_id is not None and signed_id.isdigit():
            request_id = int(signed_id)
        elif self._key is not None and signed_id != str(request_id).encode():
            return "the response's id differs from the signed id"
        with self._lock:
            entry = self._waiting.pop(request_id, None) if type(request_id) is int else None
            if entry is None:
                self._stats["duplicates_dropped"] += 1
                return None
            self._stats["answered"] += 1
        future = entry[0]
        try:
            if response.get("ok"):
                result: Any = response.get("result")
                future.set_result(result)
            else:
                future.set_exception(SandboxError(
                    f"{response.get('error', 'error')} (request {request_id}, member {member})",
                    code=response.get("code") if isinstance(response.get("code"), str) else None))
        except concurrent.futures.InvalidStateError:
            pass  # cancelled by the caller
        return None

    def _expire(self, now: float) -> None:
        with self._lock:
            overdue = [(i, f) for i, (f, deadline) in self._waiting.items() if deadline <= now]
            for i, _ in overdue:
                del self._waiting[i]
            self._stats["timeouts"] += len(overdue)
        for request_id, future in overdue:
            future.set_exception(TimeoutError(
                f"request {request_id} on {self.stream} got no answer before its deadline (are members running "
                "on that stream, and is the timeout long enough for the fleet's backlog?)"))

    def _read_loop(self) -> None:
        attempt = 0
        while not self._closing.is_set():
            try:
                reply = self._reader_redis.command(
                    ["XREAD", "COUNT", str(_READ_COUNT), "BLOCK", str(self._block_ms), "STREAMS", self.reply_stream,
                     self._last_seen], timeout=self._read_timeout)
                if attempt:
                    with self._lock:
                        self._stats["reconnects"] += 1
                    attempt = 0
                streams = reply.elements if isinstance(reply, Array) else []
                stream = streams[0] if streams and isinstance(streams[0], Array) else None
                entries = stream_entries(stream.elements[1]) if stream is not None and len(stream.elements) > 1 else []
                done = [entry.id for entry in self._take(entries)]
                if done:
                    self._reader_redis.command(["XDEL", self.reply_stream, *done], timeout=self._read_timeout)
            except _READER_ERRORS:
                self._closing.wait(_delay(attempt))
                attempt += 1
            self._expire(time.monotonic())

    def _take(self, entries: list[StreamEntry]) -> list[StreamEntry]:
        """Handles one read's entries in order, as the C++ client does; returns those to delete (this
        client's answers and the forgeries, not another client's answers)."""
        limits = self._reader_redis.limits
        done: list[StreamEntry] = []
        own = self._session.encode()
        for i, entry in enumerate(entries):
            # A value over the size limit makes the entry no answer. A value or name cut short by the read's
            # budget (not by its own size) is read again on the next turn; an entry that is first and still
            # cut exceeds the budget alone, which no answer does.
            oversized = any(length > limits.max_value_bytes for length in entry.lengths.values())
            cut = not entry.complete or any(len(entry.fields[name]) != length for name, length in entry.lengths.items()
                                            if length <= limits.max_value_bytes)
            if cut and i > 0:
                break
            self._last_seen = entry.id
            if cut or oversized:
                done.append(entry)
                self._drop_forged(entry.id, f"too large to be an answer ({sum(entry.lengths.values())} bytes)")
                continue
            fields = entry.fields
            session = fields.get(_F_SESSION.encode())
            if session is not None and session != own:
                # Another session: another client of this name sharing the stream (a fork that reused it),
                # whose answers are its own, when the tag is valid for that session; else a forgery.
                why = self._forged(fields, session) if self._key is not None else None
                if why is None:
                    with self._lock:
                        self._stats["duplicates_dropped"] += 1
                    continue
                done.append(entry)
                self._drop_forged(entry.id, f"{why}, under another session")
                continue
            done.append(entry)
            why = self._forged(fields, own)
            line: Optional[str] = None
            if why is None and _F_RESPONSE.encode() not in fields:
                why = "no 'response' field"
            if why is None:
                try:
                    line = fields[_F_RESPONSE.encode()].decode()
                except UnicodeDecodeError:
                    why = "the response is not UTF-8"
            if why is None and line is not None:
                why = self._settle(line, fields.get(_F_MEMBER.encode(), b"").decode(errors="replace"),
                                   fields.get(_F_ID.encode()))
            if why is not None:
                self._drop_forged(entry.id, why)
        return done

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the reader, fails the futures still waiting and deletes the reply stream. In a forked
        child, does nothing: the reader, the connections and the reply stream are the parent's."""
        if os.getpid() != self._pid or self._closing.is_set():
            return
        self._closing.set()
        self._reader.join()
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        for request_id, (future, _) in waiting.items():
            future.set_exception(RuntimeError(f"the FleetClient closed before request {request_id} was answered"))
        try:
            self._submitter.delete(self.reply_stream)
        except _CONNECTION_ERRORS:
            pass  # the members give reply streams a TTL
        self._submitter.close()
        self._reader_redis.close()

    def __enter__(self) -> FleetClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
