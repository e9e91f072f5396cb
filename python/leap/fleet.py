# SPDX-License-Identifier: Apache-2.0
"""The trainer's client of a sandbox fleet on Redis Streams (``leap-sandbox worker``), on python3-redis.

    from leap.fleet import FleetClient

    with FleetClient("redis://10.0.0.5:6379") as fleet:    # password from $LEAP_SANDBOX_REDIS_PASSWORD
        futures = [fleet.eval("softmax", source) for source in candidates]
        results = [f.result() for f in futures]          # dicts: verdict, speedup, feedback, ...

The same requests and results as ``leap.sandbox.SandboxPool`` (``compile``/``eval``/``info``/``submit``
return ``concurrent.futures.Future`` objects whose result is the response's ``result`` object; an
``"ok": false`` answer sets a ``SandboxError``), served by any number of workers on any number of
machines. A request is one entry of the request stream (``request`` = the JSON line, ``reply`` = this
client's reply stream ``<stream>:reply:<name>``); a worker answers on the reply stream.

Delivery is at least once: a request whose worker died is taken over by another, so an answer may
come twice; the second answer for an id is dropped (``stats()["duplicates_dropped"]``) and each
future is settled exactly once. A request unanswered at its deadline (``timeout`` seconds after
submit) fails with ``TimeoutError``. After a Redis restart the reader reconnects (50 ms doubling to
2 s) and resumes after the last answer it saw; a submit during an outage waits for Redis, at most until
its deadline. Thread-safe.
"""
import concurrent.futures
import itertools
import json
import os
import random
import socket
import threading
import time

import redis

from .sandbox import SandboxError

__all__ = ["FleetClient", "parse_redis_url", "PASSWORD_ENV", "USER_ENV"]

PASSWORD_ENV = "LEAP_SANDBOX_REDIS_PASSWORD"
USER_ENV = "LEAP_SANDBOX_REDIS_USER"
_CONNECTION_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def parse_redis_url(url):
    """(host, port, db) of redis://HOST:PORT[/DB], as the worker reads it. A password in the URL is
    refused: it would end up in ps and logs; set $LEAP_SANDBOX_REDIS_PASSWORD instead."""
    hint = " (expected redis://HOST:PORT[/DB], e.g. redis://10.0.0.5:6379/0)"
    if not url.startswith("redis://"):
        raise ValueError(f"Redis URL {url!r}: the scheme must be redis://" + hint)
    rest, _, path = url[len("redis://"):].partition("/")
    if "@" in rest:
        raise ValueError(f"Redis URL {url!r}: credentials in a URL end up in ps and logs; put the password in "
                         f"${PASSWORD_ENV} (and an ACL user in ${USER_ENV}) instead")
    if rest.startswith("["):
        host, _, port = rest[1:].partition("]")
        port = port[1:] if port.startswith(":") else port
    else:
        host, _, port = rest.partition(":")
    if not host:
        raise ValueError(f"Redis URL {url!r}: no host" + hint)
    try:
        port = int(port) if port else 6379
        db = int(path) if path else 0
    except ValueError:
        raise ValueError(f"Redis URL {url!r}: port and database must be numbers" + hint) from None
    if not 1 <= port <= 65535 or db < 0:
        raise ValueError(f"Redis URL {url!r}: port {port} or database {db} out of range" + hint)
    return host, port, db


def _delay(attempt):
    return min(0.05 * (2 ** min(attempt, 6)), 2.0)


class FleetClient:
    """Submits requests to a fleet's request stream and collects answers; see the module's documentation."""

    def __init__(self, url="redis://127.0.0.1:6379", *, stream="leap:requests", name=None, timeout=600.0,
                 request_maxlen=1_000_000, block_ms=200):
        """url: redis://HOST:PORT[/DB]; the password comes from $LEAP_SANDBOX_REDIS_PASSWORD.
        stream: the fleet's request stream (the workers' --stream).
        name: names this client's reply stream; unique per client (default <hostname>-<pid>-<random>).
        timeout: seconds from submit to answer, unless a submit says otherwise.
        request_maxlen: MAXLEN ~ cap of the request stream (the most requests waiting).
        block_ms: how long the reader blocks for answers; also how often deadlines are checked."""
        host, port, db = parse_redis_url(url)
        if timeout <= 0 or block_ms <= 0 or request_maxlen < 1:
            raise ValueError("timeout, block_ms and request_maxlen must be positive")
        self.stream = stream
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{random.randrange(1 << 30)}"
        self.reply_stream = f"{stream}:reply:{self.name}"
        self._timeout = float(timeout)
        self._maxlen = int(request_maxlen)
        self._block_ms = int(block_ms)
        credentials = dict(password=os.environ.get(PASSWORD_ENV) or None, username=os.environ.get(USER_ENV) or None)
        self._submitter = redis.Redis(host=host, port=port, db=db, decode_responses=True, socket_timeout=5,
                                      socket_connect_timeout=5, **credentials)
        self._reader_redis = redis.Redis(host=host, port=port, db=db, decode_responses=True,
                                         socket_timeout=5 + block_ms / 1000, socket_connect_timeout=5, **credentials)
        try:
            last = self._submitter.xrevrange(self.reply_stream, "+", "-", count=1)
        except _CONNECTION_ERRORS as e:
            raise ConnectionError(f"cannot reach Redis at {url}: {e} (is it running, and reachable from here?)") from e
        self._last_seen = last[0][0] if last else "0-0"
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._submit_lock = threading.Lock()
        self._waiting = {}  # id -> (future, deadline)
        self._stats = dict(submitted=0, answered=0, duplicates_dropped=0, timeouts=0, reconnects=0)
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="leap-fleet-reader", daemon=True)
        self._reader.start()

    # -- requests ---------------------------------------------------------------------------------
    def submit(self, op, *, timeout=None, **fields):
        """Any request: submit("compile", source=...); the client sets "id". Returns a Future."""
        if "id" in fields:
            raise ValueError('leave "id" out: the client numbers its requests to match answers')
        if self._closing.is_set():
            raise RuntimeError("the FleetClient is closed")
        deadline = time.monotonic() + (self._timeout if timeout is None else float(timeout))
        future = concurrent.futures.Future()
        with self._lock:
            request_id = next(self._ids)
            self._waiting[request_id] = (future, deadline)
        line = json.dumps({"id": request_id, "op": op, **fields})
        with self._submit_lock:
            attempt = 0
            while True:
                try:
                    self._submitter.xadd(self.stream, {"request": line, "reply": self.reply_stream},
                                         maxlen=self._maxlen, approximate=True)
                    break
                except _CONNECTION_ERRORS:
                    if time.monotonic() + _delay(attempt) >= deadline:
                        self._expire(time.monotonic() + _delay(attempt))
                        return future
                    time.sleep(_delay(attempt))
                    attempt += 1
            with self._lock:
                self._stats["submitted"] += 1
                if attempt:
                    self._stats["reconnects"] += 1
        return future

    def compile(self, source, *, arch=None, timeout=None):
        fields = {"source": source}
        if arch:
            fields["arch"] = arch
        return self.submit("compile", timeout=timeout, **fields)

    def eval(self, task, source, *, timeout=None):
        """task: a built-in task's name or a spec dict."""
        return self.submit("eval", timeout=timeout, task=task, source=source)

    def info(self, *, timeout=None):
        return self.submit("info", timeout=timeout)

    def stats(self):
        with self._lock:
            return dict(self._stats, pending=len(self._waiting))

    # -- answers ----------------------------------------------------------------------------------
    def _settle(self, line, worker):
        try:
            response = json.loads(line)
            request_id = response["id"]
        except (ValueError, KeyError, TypeError):
            response, request_id = None, None
        with self._lock:
            entry = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
            if entry is None:
                self._stats["duplicates_dropped"] += 1
                return
            self._stats["answered"] += 1
        future = entry[0]
        if response.get("ok"):
            future.set_result(response.get("result"))
        else:
            future.set_exception(SandboxError(f"{response.get('error', 'error')} (request {request_id}, worker {worker})"))

    def _expire(self, now):
        with self._lock:
            overdue = [(i, f) for i, (f, deadline) in self._waiting.items() if deadline <= now]
            for i, _ in overdue:
                del self._waiting[i]
            self._stats["timeouts"] += len(overdue)
        for request_id, future in overdue:
            future.set_exception(TimeoutError(
                f"request {request_id} on {self.stream} got no answer before its deadline (are workers running "
                "on that stream, and is the timeout long enough for the fleet's backlog?)"))

    def _read_loop(self):
        attempt = 0
        while not self._closing.is_set():
            try:
                batches = self._reader_redis.xread({self.reply_stream: self._last_seen}, count=512,
                                                   block=self._block_ms)
                if attempt:
                    with self._lock:
                        self._stats["reconnects"] += 1
                    attempt = 0
                done = []
                for _, entries in batches or []:
                    for entry_id, fields in entries:
                        self._last_seen = entry_id
                        done.append(entry_id)
                        if "response" in fields:
                            self._settle(fields["response"], fields.get("worker", ""))
                if done:
                    self._reader_redis.xdel(self.reply_stream, *done)
            except _CONNECTION_ERRORS:
                self._closing.wait(_delay(attempt))
                attempt += 1
            except redis.exceptions.ResponseError:
                self._closing.wait(_delay(attempt))
                attempt += 1
            self._expire(time.monotonic())

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self):
        """Stops the reader, fails the futures still waiting and deletes the reply stream."""
        if self._closing.is_set():
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
            pass  # the workers give reply streams a TTL
        self._submitter.close()
        self._reader_redis.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
