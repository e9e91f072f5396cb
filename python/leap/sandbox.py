# SPDX-License-Identifier: Apache-2.0
"""A pool of ``leap-sandbox serve`` processes behind futures. Standard library only.

    from leap.sandbox import SandboxPool

    with SandboxPool("build/default/sandbox/leap-sandbox", devices=range(8)) as pool:
        futures = [pool.eval("softmax", source) for source in candidates]
        results = [f.result() for f in futures]     # dicts: verdict, speedup, feedback, ...

One server per device (``CUDA_VISIBLE_DEVICES`` set for each), requests spread to the least busy
one. ``compile``/``eval``/``info``/``submit`` return ``concurrent.futures.Future`` objects whose
result is the response's ``result`` object; a response with ``"ok": false`` sets a SandboxError.

Back-pressure: at most ``max_in_flight`` requests are accepted and unanswered at a time; a submit
beyond that waits (or raises TimeoutError after its ``timeout``). A server that dies (a crash, the
OOM killer, a kill) is restarted on its device and the requests it held are sent again, once: a
request that was in flight on two dead servers fails with SandboxError instead of killing a third.
``close()`` (or leaving the ``with`` block) waits for every accepted request, then ends the servers:
nothing accepted is lost.

Every future resolves. A request the server could not read is refused at submit with a
``RequestEncodingError`` (a ``ValueError``) that names the field and what is wrong: a NaN or
infinite number, a lone surrogate in a string, nesting past serve's ``--max-depth``, a line past its
``--max-request-bytes`` (both read from ``args``; 64 and 4 MiB by default). Should a server still
answer a line with ``"id": null`` (a server whose limits differ from its ``args``), the answer fails
the request it belongs to: one the server held when the answer came and that gets no other answer
(serve answers every line exactly once, out of order with -j N), failed as soon as that is certain, at
once when the server held only one.

After ``os.fork`` (a DataLoader worker, a ``multiprocessing`` or ``ProcessPoolExecutor`` worker with
the fork start method) the parent's servers stay the parent's: the child lets go of its copies of
their pipes at once, and its first request starts servers of its own (the same command, devices and
environment), or raises RuntimeError with ``after_fork="raise"``. Request ids carry the process id
and a random nonce, and a reply whose id this pool did not send is dropped and counted
(``unmatched_replies``), so no answer reaches another process's future.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import json
import os
import secrets
import subprocess
import threading
import time
import weakref
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from ._request_line import DEFAULT_MAX_DEPTH, DEFAULT_MAX_REQUEST_BYTES, RequestEncodingError, encode_request

# A response's "result": the JSON object the server answered with (fields by operation: status,
# log, verdict, speedup, feedback, ...).
Result = dict[str, Any]
# What Popen runs: a program, or a program and its leading arguments.
Command = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]

__all__ = ["FleetClient", "RequestEncodingError", "SandboxError", "SandboxPool"]


def __getattr__(name: str) -> Any:
    # leap.sandbox.FleetClient is the fleet's client (leap.fleet), imported on first use so that the
    # pool above needs no redis package.
    if name == "FleetClient":
        from .fleet import FleetClient
        return FleetClient
    raise AttributeError(f"module 'leap.sandbox' has no attribute {name!r}")


class SandboxError(RuntimeError):
    """A request the sandbox could not answer: it replied with an error, or two servers died holding it.
    ``code`` is the server's error code when it gave one (bad_request, internal_error, ...), else None."""

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.code = code


# Every pool of this process, so that a forked child can let go of the parent's servers at once.
_live_pools: weakref.WeakSet[SandboxPool] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for pool in list(_live_pools):
        pool._leave_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _request_id_prefix() -> str:
    """Ids unique to this process and this pool: the pid, and a nonce for a pid used again."""
    return f"{os.getpid()}-{secrets.token_hex(8)}-"


class _Request:
    __slots__ = ("id", "line", "future", "attempts")

    def __init__(self, request_id: str, line: str) -> None:
        self.id = request_id
        self.line = line
        self.future: concurrent.futures.Future[Result] = concurrent.futures.Future()
        self.attempts = 0


class _Server:
    """One serve process and the requests it holds."""

    def __init__(self, slot: int, device: Optional[str]) -> None:
        self.slot = slot
        self.device = device
        self.process: Optional[subprocess.Popen[str]] = None
        self.pending: dict[str, _Request] = {}  # sent to this process and not answered
        self.write_lock = threading.Lock()
        self.reader: Optional[threading.Thread] = None
        self.started_at = 0.0
        self.answered = 0
        self.quick_deaths = 0  # deaths in a row before answering anything
        self.disabled = False
        # Answers with "id": null (a line the server could not read) not yet given to a request, and
        # the requests they may belong to: those pending when each came, less those answered since.
        self.unreadable: list[tuple[Optional[str], str]] = []  # (code, error) of each
        self.suspects: dict[str, None] = {}  # request ids, oldest first


class SandboxPool:
    """A pool of ``leap-sandbox serve`` processes; see the module's documentation."""

    def __init__(self, executable: Command = "leap-sandbox",
                 devices: Optional[Iterable[Union[int, str, None]]] = None, *, servers: Optional[int] = None,
                 args: Iterable[object] = (), max_in_flight: Optional[int] = None,
                 env: Optional[Mapping[str, str]] = None, max_quick_deaths: int = 3,
                 after_fork: str = "start") -> None:
        """executable: the leap-sandbox program, or a list (program and leading arguments).
        devices:  CUDA device ids, one server each (CUDA_VISIBLE_DEVICES=<id> for it). Default: the ids
                  in this process's CUDA_VISIBLE_DEVICES, else one server that sees every device.
        servers:  without devices, this many servers with the inherited environment.
        args:     extra arguments to `serve` (e.g. ["-j", "4"]); its --max-request-bytes and --max-depth
                  are the limits submit checks requests against.
        max_in_flight: accepted, unanswered requests at most (default 64 per server).
        max_quick_deaths: a server that dies this many times in a row without answering anything
                  is not restarted again (a broken installation, not a bad request).
        after_fork: what a forked child's first request does: "start" servers of its own, or "raise"
                  RuntimeError (where one set of servers per machine is all the devices can hold)."""
        command = [executable] if isinstance(executable, (str, os.PathLike)) else list(executable)
        serve_args = [str(a) for a in args]
        self._command = [os.fspath(part) for part in command] + ["serve"] + serve_args
        self._max_request_bytes, self._max_depth = _serve_limits(serve_args)
        if devices is not None and servers is not None:
            raise ValueError("pass devices or servers, not both")
        # One entry per server: its CUDA_VISIBLE_DEVICES, or None to inherit the environment's.
        slots: list[Optional[str]]
        if devices is not None:
            slots = [None if d is None else str(d) for d in devices]
        elif servers is not None:
            slots = [None] * int(servers)
        else:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
            slots = [d.strip() for d in visible.split(",") if d.strip()] or [None]
        if not slots:
            raise ValueError("a pool needs at least one server")
        self._env = dict(os.environ if env is None else env)
        self._max_in_flight = int(max_in_flight) if max_in_flight is not None else 64 * len(slots)
        if self._max_in_flight < 1:
            raise ValueError(f"max_in_flight ({max_in_flight}) must be >= 1")
        self._max_quick_deaths = max_quick_deaths
        if after_fork not in ("start", "raise"):
            raise ValueError(f"after_fork={after_fork!r}: expected 'start' or 'raise'")
        self._after_fork = after_fork
        self._owner_pid = os.getpid()
        self._forked_from: Optional[int] = None   # the parent's pid in a forked child whose servers are not started yet
        self._id_prefix = _request_id_prefix()
        self._ids = itertools.count(1)
        self._state = threading.Condition()  # guards everything below and each server's pending
        self._in_flight = 0
        self._closing = False
        self._closed = False
        self._servers = [_Server(slot, device) for slot, device in enumerate(slots)]
        self.restarts = 0  # servers started again after dying
        self.retried = 0   # requests sent again after their server died
        self.unmatched_replies = 0  # replies dropped: an id this pool did not send, or one answered already
        try:
            for server in self._servers:
                self._start(server)
        except BaseException:
            self._kill_all()
            raise
        _live_pools.add(self)

    # ---- requests ---------------------------------------------------------------------------------
    def submit(self, op: str, *, timeout: Optional[float] = None, **fields: Any) -> concurrent.futures.Future[Result]:
        """Sends {"op": op, **fields}; returns a Future of the response's result. A request the server could
        not read raises RequestEncodingError (a ValueError) here, naming the field and what is wrong."""
        if "id" in fields or "op" in fields:
            raise ValueError("the pool sets a request's id and op itself")
        self._own_servers()
        # Checked and written before a slot is taken: a request the server could not read is refused
        # here, naming the field, and never waits for room nor holds a slot.
        request_id = f"{self._id_prefix}{next(self._ids)}"
        line = encode_request({"id": request_id, "op": op, **fields}, max_bytes=self._max_request_bytes,
                              max_depth=self._max_depth) + "\n"
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state:
            while True:
                if self._closing:
                    raise RuntimeError("SandboxPool is closed: no new requests")
                if self._in_flight < self._max_in_flight:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(f"{self._in_flight} requests in flight (max_in_flight = "
                                       f"{self._max_in_flight}); none finished within {timeout} s")
                self._state.wait(remaining)
            self._in_flight += 1
        request = _Request(request_id, line)
        self._send(request)
        return request.future

    def compile(self, source: str, *, timeout: Optional[float] = None,
                **fields: Any) -> concurrent.futures.Future[Result]:
        """Compiles CUDA source (fields: arch, ...); the result has status ok|error|timeout|refused and the log."""
        return self.submit("compile", timeout=timeout, source=source, **fields)

    def eval(self, task: Union[str, Mapping[str, Any]], source: str, *, timeout: Optional[float] = None,
             **fields: Any) -> concurrent.futures.Future[Result]:
        """Evaluates a candidate against a task (a built-in name or a spec object); fields: headers.

        The server times every eval and draws its seeds itself; a field it does not take is refused."""
        return self.submit("eval", timeout=timeout, task=task, source=source, **fields)

    def info(self, *, timeout: Optional[float] = None) -> concurrent.futures.Future[Result]:
        return self.submit("info", timeout=timeout)

    @property
    def in_flight(self) -> int:
        self._in_this_process()
        with self._state:
            return self._in_flight

    def pending_by_server(self) -> list[int]:
        """How many requests each server holds (sent, not answered), by slot."""
        self._in_this_process()
        with self._state:
            return [len(s.pending) for s in self._servers]

    def server_pids(self) -> list[Optional[int]]:
        """The process ids of the running servers, by slot (for monitoring, and for tests); None for a
        slot with no server (in a forked child before its first request)."""
        self._in_this_process()
        with self._state:
            return [s.process.pid if s.process is not None else None for s in self._servers]

    # ---- shutdown ---------------------------------------------------------------------------------
    def close(self, timeout: Optional[float] = None) -> None:
        """Waits until every accepted request has its answer, then ends the servers (end of input; they
        exit 0 when idle). Idempotent. In a forked child it ends the child's servers only."""
        self._in_this_process()
        with self._state:
            self._closing = True
            deadline = None if timeout is None else time.monotonic() + timeout
            while self._in_flight > 0:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(f"{self._in_flight} requests still in flight after {timeout} s")
                self._state.wait(remaining)
            if self._closed:
                return
            self._closed = True
            servers = list(self._servers)
        for server in servers:
            process = server.process
            if process is None:
                continue
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if server.reader is not None and server.reader is not threading.current_thread():
                server.reader.join()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- fork ---------------------------------------------------------------------------------------
    def _leave_parent(self) -> None:
        """In a forked child (called by the fork hook, or on first use where the fork ran no hooks):
        lets go of the parent's servers without reading or writing their pipes. /dev/null takes the
        numbers of the child's copies of the pipe ends: the parent's servers then see the end of input
        when the parent closes, and the copied file objects, when collected, flush into nothing. The
        locks may have been held by a parent thread at the fork, so they are new, never acquired. The
        parent's requests stay the parent's: their copied futures here never resolve."""
        pid = os.getpid()
        if pid == self._owner_pid or not hasattr(self, "_servers"):
            return
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            for server in self._servers:
                process = server.process
                streams = () if process is None else (process.stdin, process.stdout)
                for stream in streams:
                    if stream is None:
                        continue
                    try:
                        os.dup2(devnull, stream.fileno())
                    except (OSError, ValueError):
                        pass  # closed already
        finally:
            os.close(devnull)
        self._forked_from = self._owner_pid
        self._owner_pid = pid
        self._id_prefix = _request_id_prefix()
        self._ids = itertools.count(1)
        self._state = threading.Condition()
        self._in_flight = 0
        self._servers = [_Server(server.slot, server.device) for server in self._servers]
        self.restarts = self.retried = self.unmatched_replies = 0
        _live_pools.add(self)

    def _in_this_process(self) -> None:
        if os.getpid() != self._owner_pid:
            self._leave_parent()

    def _own_servers(self) -> None:
        """Before a request: a forked child's pool starts its own servers (or refuses, by after_fork)."""
        self._in_this_process()
        if self._forked_from is None:
            return
        with self._state:
            if self._forked_from is None or self._closing:
                return  # started by another thread, or closed: submit says so
            if self._after_fork == "raise":
                raise RuntimeError(
                    f"this SandboxPool was created in process {self._forked_from} and this is a forked child "
                    f"({os.getpid()}); its servers answer the parent only: create a SandboxPool in the child "
                    f"(or pass after_fork='start' to have the pool start the child's own servers)")
            try:
                for server in self._servers:
                    self._start(server)
            except BaseException:
                self._kill_all()
                for server in self._servers:
                    server.process = None
                raise
            self._forked_from = None

    # ---- internals --------------------------------------------------------------------------------
    def _start(self, server: _Server) -> None:
        env = dict(self._env)
        if server.device is not None:
            env["CUDA_VISIBLE_DEVICES"] = server.device
        process = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                   text=True, bufsize=1)
        server.process = process
        server.started_at = time.monotonic()
        server.answered = 0
        server.reader = threading.Thread(target=self._read, args=(server, process),
                                         name=f"leap-sandbox-reader-{server.slot}", daemon=True)
        server.reader.start()

    def _least_busy(self) -> Optional[_Server]:
        alive = [s for s in self._servers if not s.disabled and s.process is not None]
        return min(alive, key=lambda s: len(s.pending)) if alive else None

    def _send(self, request: _Request) -> None:
        """Sends a request to the least busy server; a write to a dying server is left to the reader,
        which retries what the dead server held."""
        with self._state:
            server = self._least_busy()
            if server is None:
                self._finish(request, error=SandboxError("no sandbox server is running (each died at start; "
                                                         f"command: {' '.join(self._command)})"))
                return
            request.attempts += 1
            server.pending[request.id] = request
            stdin = server.process.stdin if server.process is not None else None
        try:
            with server.write_lock:
                if stdin is None:  # never: _least_busy picks a running server, and Popen opened the pipe
                    raise BrokenPipeError("the server has no input pipe")
                stdin.write(request.line)
                stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader sees the end of output and hands the request on

    def _finish(self, request: _Request, result: Any = None, error: Optional[BaseException] = None) -> None:
        """Resolves a request's future and frees its slot. Called with self._state held."""
        if error is not None:
            request.future.set_exception(error)
        else:
            request.future.set_result(result)
        self._in_flight -= 1
        self._state.notify_all()

    def _read(self, server: _Server, process: subprocess.Popen[str]) -> None:
        for line in process.stdout if process.stdout is not None else ():
            try:
                reply = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a torn last line of a dying server
            reply_id = reply.get("id") if isinstance(reply, dict) else None
            with self._state:
                if isinstance(reply, dict) and "id" in reply and reply_id is None:
                    self._unreadable_answer(server, reply)
                    continue
                # Only an id this pool sent to this server, not answered yet: any other reply (an id
                # of another process or pool, a second answer) is dropped, never given to a future.
                request = server.pending.pop(reply_id, None) if isinstance(reply_id, str) else None
                if request is None:
                    self.unmatched_replies += 1
                    continue
                server.answered += 1
                server.quick_deaths = 0
                if reply.get("ok"):
                    self._finish(request, result=reply.get("result"))
                else:
                    self._finish(request, error=SandboxError(reply.get("error", "the sandbox reported an error"),
                                                             code=reply.get("code")))
                if server.suspects:
                    server.suspects.pop(request.id, None)
                    self._settle_unreadable(server)
        process.wait()
        self._on_exit(server, process)

    def _unreadable_answer(self, server: _Server, reply: Mapping[str, Any]) -> None:
        """An answer with "id": null: a line of ours the server could not read (submit's checks make that
        a server whose limits differ from its args). It belongs to one of the requests the server holds
        now, the one that gets no other answer. Called with self._state held."""
        code = reply.get("code")
        server.unreadable.append((code if isinstance(code, str) else None,
                                  str(reply.get("error", "the sandbox could not read a request"))))
        for request_id in server.pending:
            server.suspects.setdefault(request_id)
        self._settle_unreadable(server)

    def _settle_unreadable(self, server: _Server) -> None:
        """Fails the requests the unreadable answers belong to once they are known: each such answer's
        request was pending when it came and gets no other answer, so when no more requests are suspected
        than there are such answers, the suspects are exactly those requests. Called with self._state held."""
        if len(server.suspects) > len(server.unreadable):
            return
        for request_id, (code, error) in zip(list(server.suspects), server.unreadable):
            request = server.pending.pop(request_id)
            server.answered += 1
            self._finish(request, error=SandboxError(
                f"the sandbox server could not read this request: {error} ({code}). The pool checks each request "
                f"against the server's limits before sending it (args --max-request-bytes {self._max_request_bytes}, "
                f"--max-depth {self._max_depth}); this server read it otherwise", code=code))
        self.unmatched_replies += max(0, len(server.unreadable) - len(server.suspects))
        server.unreadable.clear()
        server.suspects.clear()

    def _on_exit(self, server: _Server, process: subprocess.Popen[str]) -> None:
        with self._state:
            if server.process is not process:
                return
            orphans = list(server.pending.values())
            server.pending.clear()
            server.unreadable.clear()  # the requests they belong to are among the orphans, sent again
            server.suspects.clear()
            if self._closed and not orphans:
                return  # the normal end after close()
            if server.answered == 0:
                server.quick_deaths += 1
            restart = server.quick_deaths < self._max_quick_deaths
            server.process = None
            if not restart:
                server.disabled = True
        if restart:
            try:
                self._start(server)
                with self._state:
                    self.restarts += 1
            except OSError:
                with self._state:
                    server.disabled = True
        for request in orphans:
            if request.attempts >= 2:
                with self._state:
                    self._finish(request, error=SandboxError(
                        f"request {request.id} was in flight on two sandbox servers that died "
                        f"(last exit status {process.returncode}); it is not sent a third time"))
            else:
                with self._state:
                    self.retried += 1
                self._send(request)

    def _kill_all(self) -> None:
        for server in getattr(self, "_servers", []):
            if server.process is not None and server.process.poll() is None:
                server.process.kill()


def _serve_limits(args: Sequence[str]) -> tuple[int, int]:
    """serve's --max-request-bytes and --max-depth as the pool's args set them, else their defaults:
    the limits submit checks each request against. A value serve would refuse is left to serve, which
    then does not start and says why."""
    limits = {"--max-request-bytes": DEFAULT_MAX_REQUEST_BYTES, "--max-depth": DEFAULT_MAX_DEPTH}
    for option, value in zip(args, args[1:]):
        if option in limits:
            try:
                limits[option] = int(value)
            except ValueError:
                pass
    return limits["--max-request-bytes"], limits["--max-depth"]
