# SPDX-License-Identifier: Apache-2.0
"""leap.fleet.FleetClient against a real Redis on a loopback port and a real leap-sandbox fleet-member: answers,
deadlines, the fleet key, forged answers, and a client used across a fork."""
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
import types

import pytest

import redis

from leap.fleet import FleetClient, FleetKeyError, parse_redis_url, read_fleet_key  # noqa: E402
from leap import fleet as fleet_module  # noqa: E402
from leap.sandbox import RequestEncodingError, SandboxError  # noqa: E402

KERNEL = 'extern "C" __global__ void scale_{k}(float* x, int n) {{ int i = threadIdx.x; if (i < n) x[i] *= {k}.5f; }}\n'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def fleet(tmp_path):
    """redis-server on a free loopback port in tmp_path and one member on leap:requests, under a fresh fleet
    key; yields url, key and start_member(stream, name) for more members."""
    server = shutil.which("redis-server")
    sandbox = os.environ.get("LEAP_SANDBOX")
    if not server:  # a dependency the README's commands install: missing, it fails (conftest.py)
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    if not sandbox:
        pytest.skip("LEAP_SANDBOX is not set (run through CTest)")
    port = free_port()
    url = f"redis://127.0.0.1:{port}"
    with open(tmp_path / "redis.log", "w") as log:
        redis_process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path),
                                          "--save", "", "--appendonly", "no"], stdout=log, stderr=log)
    probe = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(200):
        try:
            probe.ping()
            break
        except redis.exceptions.ConnectionError:
            time.sleep(0.02)
    key = secrets.token_hex(16)
    env = dict(os.environ, LEAP_SANDBOX_CACHE_DIR=str(tmp_path / "cache"), LEAP_FLEET_KEY=key)
    env.pop("LEAP_FLEET_KEY_FILE", None)
    members = []

    def has_group(stream):
        try:
            return any(g["name"] == b"leap-sandbox" for g in probe.xinfo_groups(stream))
        except redis.exceptions.ResponseError:
            return False  # no such stream yet

    def start_member(stream="leap:requests", name="py0"):
        first = not has_group(stream)
        with open(tmp_path / f"{name}.log", "w") as log:
            members.append(subprocess.Popen([sandbox, "fleet-member", "--redis", url, "--name", name, "-j", "2",
                                             "--stream", stream], env=env, stdout=log, stderr=log))
        # The first member of a stream makes its group once it runs, after its SIGTERM handler is in place:
        # waiting for that lets a short test stop it cleanly.
        assert not first or wait_for(lambda: has_group(stream), 60), f"member {name} did not start on {stream}"

    start_member()
    try:
        yield types.SimpleNamespace(url=url, key=key, start_member=start_member, log_dir=tmp_path)
    finally:
        for member in members:
            member.send_signal(signal.SIGTERM)
        for member in members:
            assert member.wait(timeout=30) == 0
        redis_process.terminate()
        redis_process.wait(timeout=30)


def test_compiles_and_errors_come_back_once_each(fleet):
    with FleetClient(fleet.url, name="py-trainer", timeout=120, key=fleet.key) as client:
        futures = [client.compile(KERNEL.format(k=k % 5)) for k in range(20)]
        results = [f.result(timeout=120) for f in futures]
        assert all(r["status"] == "ok" for r in results)
        assert sum(not r["cache_hit"] for r in results) >= 5  # each kernel compiled for real once
        info = client.info().result(timeout=60)
        assert "NVRTC" in info["versions"]
        with pytest.raises(SandboxError, match="source"):
            client.submit("compile").result(timeout=60)  # the handler's own error, through the fleet
        stats = client.stats()
        assert stats["submitted"] == 22 and stats["answered"] == 22 and stats["pending"] == 0

        # A second signed answer for an id (a reclaimed request answered twice) is dropped, not delivered.
        r = redis.Redis.from_url(fleet.url)
        line = json.dumps({"id": 1, "ok": True, "result": {}})
        tag = fleet_module._tag(fleet.key.encode(), b"reply", b"leap:requests", client.reply_stream.encode(),
                                client._session.encode(), b"1", line.encode())
        r.xadd(client.reply_stream, {"response": line, "worker": "py0", "session": client._session, "id": "1",
                                     "tag": tag})
        assert wait_for(lambda: client.stats()["duplicates_dropped"] == 1, 10)
        assert client.stats()["answered"] == 22
        assert client.stats()["forged_dropped"] == 0


def test_deadline_without_members(fleet):
    with FleetClient(fleet.url, stream="nobody:listens", timeout=0.3, key=fleet.key) as client:
        with pytest.raises(TimeoutError, match="no answer before its deadline"):
            client.info().result(timeout=30)
        assert client.stats()["timeouts"] == 1


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="LEAP_SANDBOX_REDIS_PASSWORD"):
        parse_redis_url("redis://:secret@10.0.0.5:6379")
    with pytest.raises(ValueError, match="scheme"):
        parse_redis_url("rediss://10.0.0.5:6379")
    assert parse_redis_url("redis://10.0.0.5:6380/2") == ("10.0.0.5", 6380, 2)
    assert parse_redis_url("redis://[::1]") == ("::1", 6379, 0)
    with pytest.raises(ConnectionError, match="cannot reach Redis"):
        FleetClient(f"redis://127.0.0.1:{free_port()}", key="k" * 16)


def test_the_fleet_client_is_also_leap_sandbox_fleetclient():
    import leap.sandbox
    assert leap.sandbox.FleetClient is FleetClient
    assert "FleetClient" in leap.sandbox.__all__
    with pytest.raises(AttributeError, match="no attribute 'NoSuchClient'"):
        leap.sandbox.NoSuchClient  # noqa: B018


def test_tags_match_the_members():
    """The same vector as tests/sandbox/fleet/test_fleet_auth.cpp: Python and C++ sign the same bytes."""
    key = b"0123456789abcdef-test-key"
    assert fleet_module._signed_message(b"reply", b"s", b"s:reply:c", b"1-2", b"3", b"{}") == (
        b"13:leap-fleet-v1,5:reply,1:s,9:s:reply:c,3:1-2,1:3,64:" + hashlib.sha256(b"{}").hexdigest().encode() + b",")
    assert fleet_module._tag(key, b"reply", b"s", b"s:reply:c", b"1-2", b"3", b"{}") == \
        "51c49111afbf332d1c71cc08ce591865ae1f2b9f8375b01f950c6627a6e9478c"


def test_the_key_is_long_enough_private_and_never_silently_absent(tmp_path, monkeypatch):
    monkeypatch.delenv("LEAP_FLEET_KEY", raising=False)
    monkeypatch.delenv("LEAP_FLEET_KEY_FILE", raising=False)
    assert read_fleet_key() is None
    with pytest.raises(FleetKeyError, match="no fleet key.*insecure_no_key"):
        FleetClient(f"redis://127.0.0.1:{free_port()}")
    with pytest.raises(FleetKeyError, match="at least 16"):
        read_fleet_key("short")
    shared = tmp_path / "shared.key"
    shared.write_text("0123456789abcdef0123\n")
    shared.chmod(0o644)
    with pytest.raises(FleetKeyError, match="mode 0644.*chmod 600"):
        read_fleet_key(key_file=str(shared))
    private = tmp_path / "private.key"
    private.write_text("0123456789abcdef0123\n")
    private.chmod(0o600)
    assert read_fleet_key(key_file=str(private)) == b"0123456789abcdef0123"
    large = tmp_path / "large.key"
    large.write_bytes(b"k" * 5000)
    large.chmod(0o600)
    with pytest.raises(FleetKeyError, match="is 5000 bytes; a key file holds one key"):
        read_fleet_key(key_file=large)
    monkeypatch.setenv("LEAP_FLEET_KEY", "key-in-the-variable-0")
    assert read_fleet_key() == b"key-in-the-variable-0"
    monkeypatch.setenv("LEAP_FLEET_KEY_FILE", str(private))  # the file's variable comes first
    assert read_fleet_key() == b"0123456789abcdef0123"
    monkeypatch.setenv("LEAP_FLEET_KEY_FILE", str(tmp_path / "typo.key"))  # set but unusable: an error
    with pytest.raises(FleetKeyError, match="cannot read"):
        read_fleet_key()


def test_forged_answers_are_dropped_and_the_real_one_wins(fleet, caplog):
    r = redis.Redis.from_url(fleet.url)
    with FleetClient(fleet.url, stream="victim:requests", name="victim", timeout=120, key=fleet.key) as client:
        assert client.authenticated
        future = client.compile(KERNEL.format(k=3))
        # What a co-tenant reads off the request stream: the reply stream, the session and the id.
        (_, request), = r.xrange("victim:requests")
        assert request[b"reply"] == client.reply_stream.encode() and request[b"id"] == b"1"
        verdict = json.dumps({"id": 1, "ok": True, "result": {"status": "ok", "verdict": "correct", "speedup": 99}})
        r.xadd(client.reply_stream, {"response": verdict, "worker": "forger"})
        r.xadd(client.reply_stream, {"response": verdict, "worker": "forger", "session": request[b"session"],
                                     "id": "1", "tag": "a" * 64})
        # Signed under another key, and a request's tag posing as a reply's.
        other = fleet_module._tag(b"not-the-fleet-key-0123", b"reply", b"victim:requests", client.reply_stream.encode(),
                                  request[b"session"], b"1", verdict.encode())
        as_request = fleet_module._tag(fleet.key.encode(), b"request", b"victim:requests", client.reply_stream.encode(),
                                       request[b"session"], b"1", verdict.encode())
        for tag in (other, as_request):
            r.xadd(client.reply_stream, {"response": verdict, "worker": "forger", "session": request[b"session"],
                                         "id": "1", "tag": tag})
        r.xadd(client.reply_stream, {"response": b"\xff\xfe", "worker": "forger", "session": request[b"session"]})
        assert wait_for(lambda: client.stats()["forged_dropped"] == 5, 20)
        assert not future.done()
        fleet.start_member(stream="victim:requests", name="victim0")  # now the real answer comes
        result = future.result(timeout=60)
        assert result["status"] == "ok" and "verdict" not in result
        assert any("scale_3" in k for k in result["kernels"])
        stats = client.stats()
        assert stats["answered"] == 1 and stats["forged_dropped"] == 5 and stats["duplicates_dropped"] == 0
    logged = [rec.getMessage() for rec in caplog.records if rec.name == "leap.fleet"]
    assert len(logged) == 3 and "unsigned (no tag field)" in logged[0]  # the 1st, 2nd and 4th


def test_a_client_used_in_a_forked_child_says_to_make_a_new_one(fleet):
    with FleetClient(fleet.url, timeout=120, key=fleet.key) as parent:
        assert parent.compile(KERNEL.format(k=500)).result(timeout=120)["status"] == "ok"
        in_flight = [(k, parent.compile(KERNEL.format(k=k))) for k in range(501, 509)]
        child = os.fork()
        if child == 0:
            # 10: the parent's client was usable; 11: the error did not say what to do; 12: the child's own
            # client failed; 13: the child got an answer that is not its own.
            code = 10
            try:
                parent.info()
            except RuntimeError as e:
                code = 0 if "Create a new FleetClient in the child" in str(e) else 11
            if code == 0:
                try:
                    with FleetClient(fleet.url, timeout=60, key=fleet.key) as own:
                        for k in range(900, 904):
                            if not any(f"scale_{k}" in n for n in own.compile(KERNEL.format(k=k)).result()["kernels"]):
                                code = 13
                except Exception:  # noqa: BLE001 - any failure is the child's answer
                    code = 12
            parent.close()  # a no-op in the child: it must not delete the parent's reply stream
            os._exit(code)
        in_flight += [(k, parent.compile(KERNEL.format(k=k))) for k in range(509, 517)]
        _, status = os.waitpid(child, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        for k, future in in_flight:
            assert any(f"scale_{k}" in n for n in future.result(timeout=60)["kernels"])  # its own kernel's answer
        stats = parent.stats()
        assert stats["answered"] == 17 and stats["duplicates_dropped"] == 0 and stats["forged_dropped"] == 0


def sign_reply(key, client, request_id, line, session=None):
    """The tag a member puts on an answer to `client`'s request."""
    return fleet_module._tag(key.encode(), b"reply", client.stream.encode(), client.reply_stream.encode(),
                             (session or client._session).encode(), str(request_id).encode(), line.encode())


def test_requests_a_member_could_not_read_are_refused_at_submit_naming_the_field(fleet):
    with FleetClient(fleet.url, stream="nobody:listens", timeout=60, key=fleet.key, max_request_bytes=2048) as client:
        cases = {"task.params[0].min": {"task": {"params": [{"min": float("nan")}]}, "source": ""},
                 "source": {"task": "softmax", "source": "x\ud800"}}
        for field, fields in cases.items():
            with pytest.raises(RequestEncodingError) as error:
                client.submit("eval", **fields)
            assert error.value.field == field
        nested = []
        for _ in range(64):
            nested = [nested]
        with pytest.raises(RequestEncodingError, match="past the sandbox's limit of 64"):
            client.submit("eval", task=nested, source="")
        with pytest.raises(RequestEncodingError, match="limit of 2048 bytes") as error:
            client.compile("x" * 3000)
        assert error.value.field == "source"
        assert client.stats()["pending"] == 0 and client.stats()["submitted"] == 0  # nothing left waiting
        assert redis.Redis.from_url(fleet.url).xlen("nobody:listens") == 0


def test_a_members_answer_to_a_line_it_could_not_read_settles_the_signed_request(fleet):
    """A member answers a line it cannot parse "id": null, signed over the entry's id field. The client
    counted that genuine answer as forged and the request timed out; it fails the signed request now."""
    r = redis.Redis.from_url(fleet.url)
    with FleetClient(fleet.url, stream="unread:requests", timeout=60, key=fleet.key) as client:
        future = client.info()
        (entry_id, request), = r.xrange("unread:requests")
        # What a client whose checks let a bad line through would send: the same request, a NaN in it.
        line = b'{"id": 1, "op": "info", "x": NaN}'
        tag = fleet_module._tag(fleet.key.encode(), b"request", b"unread:requests", request[b"reply"],
                                request[b"session"], b"1", line)
        r.xdel("unread:requests", entry_id)
        r.xadd("unread:requests", {**request, b"request": line, b"tag": tag.encode()})
        fleet.start_member(stream="unread:requests", name="unread0")
        error = future.exception(timeout=60)
        assert isinstance(error, SandboxError) and error.code == "parse_error", error
        assert "malformed request" in str(error)
        stats = client.stats()
        assert stats["answered"] == 1 and stats["forged_dropped"] == 0 and stats["timeouts"] == 0


def test_a_signed_answer_that_is_no_protocol_response_fails_its_request_at_once(fleet):
    """A signed reply entry whose line is not a protocol response (no JSON object with an id) was counted
    as forged and its request left to time out; no other answer follows, so it fails the request its
    signed id names, as the C++ client does."""
    with FleetClient(fleet.url, stream="nobody:listens", timeout=120, key=fleet.key) as client:
        future = client.info()
        line = "this is no protocol response"
        redis.Redis.from_url(fleet.url).xadd(client.reply_stream, {
            "response": line, "worker": "m", "session": client._session, "id": "1",
            "tag": sign_reply(fleet.key, client, 1, line)})
        error = future.exception(timeout=30)
        assert isinstance(error, SandboxError) and "is not a protocol response" in str(error), error
        stats = client.stats()
        assert stats["answered"] == 1 and stats["forged_dropped"] == 0 and stats["timeouts"] == 0


def test_a_forged_answer_under_another_session_counts_as_forged(fleet):
    """An entry under another session is another client's answer (a client of the same name) only when
    its tag is valid for that session; a forgery that names a foreign session is counted as forged (and
    deleted), not as a duplicate."""
    r = redis.Redis.from_url(fleet.url)
    with FleetClient(fleet.url, stream="nobody:listens", name="shared", timeout=60, key=fleet.key) as client:
        line = json.dumps({"id": 1, "ok": True, "result": {"status": "verdict", "verdict": "correct"}})
        forged = r.xadd(client.reply_stream, {"response": line, "worker": "forger", "session": "1-someone-else",
                                              "id": "1", "tag": "a" * 64})
        genuine = r.xadd(client.reply_stream, {"response": line, "worker": "m", "session": "1-another-client",
                                               "id": "1", "tag": sign_reply(fleet.key, client, 1, line,
                                                                            session="1-another-client")})
        assert wait_for(lambda: client.stats()["forged_dropped"] == 1 and client.stats()["duplicates_dropped"] == 1,
                        10), client.stats()
        left = [entry_id for entry_id, _ in r.xrange(client.reply_stream)]
        assert forged not in left and genuine in left  # the other client's answer is left for it


# Writes four entries of 40 MB (over the 32 MiB a value may have) to a stream, from another process so
# that this one allocates nothing for them.
_WRITE_HUGE = """
import sys, redis
r = redis.Redis.from_url(sys.argv[1])
value = b"x" * (40 << 20)
for n in range(4):
    r.xadd(sys.argv[2], {"response": value, "worker": "co-tenant", "session": "9-co-tenant", "id": str(n)})
"""


def test_huge_entries_on_the_reply_stream_are_streamed_past_with_bounded_memory(fleet):
    """Four 40 MB entries on the reply stream (a co-tenant with write access): python3-redis read them
    whole (160 MB held at once here, 2.8 GB for four of 450 MB); the bounded reader streams them past,
    drops them as too large to be answers, and the real answer after them settles its future."""
    with FleetClient(fleet.url, stream="nobody:listens", timeout=120, key=fleet.key) as client:
        future = client.info()
        tracemalloc.start()
        try:
            subprocess.run([sys.executable, "-c", _WRITE_HUGE, fleet.url, client.reply_stream], check=True, timeout=120)
            line = json.dumps({"id": 1, "ok": True, "result": {"answered": True}})
            redis.Redis.from_url(fleet.url).xadd(client.reply_stream, {
                "response": line, "worker": "m", "session": client._session, "id": "1",
                "tag": sign_reply(fleet.key, client, 1, line)})
            assert future.result(timeout=60) == {"answered": True}
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20, f"{peak / 2 ** 20:.1f} MiB held while reading 4 x 40 MB entries"
        stats = client.stats()
        assert stats["forged_dropped"] == 4 and stats["answered"] == 1
        # The reader settles the future, then deletes the entries it read (fleet.py _read_loop): wait for that.
        deadline = time.monotonic() + 30
        while redis.Redis.from_url(fleet.url).xlen(client.reply_stream) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert redis.Redis.from_url(fleet.url).xlen(client.reply_stream) == 0  # dropped entries are deleted


def test_a_directory_as_the_key_file_is_a_fleet_key_error(tmp_path):
    """It raised IsADirectoryError, not the fleet's key error."""
    with pytest.raises(FleetKeyError, match="is a directory, not a regular file; name the file that holds the key"):
        read_fleet_key(key_file=tmp_path)


def test_a_fifo_as_the_key_file_is_refused_without_waiting_for_a_writer(tmp_path):
    """Opening a FIFO waited for a writer: start-up hung. It is opened without blocking and refused."""
    fifo = tmp_path / "fleet.fifo"
    os.mkfifo(fifo, 0o600)
    outcome = []

    def read_fifo():
        try:
            read_fleet_key(key_file=fifo)
        except FleetKeyError as e:
            outcome.append(str(e))

    reader = threading.Thread(target=read_fifo, daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # blocked opening the FIFO: let it go, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=30)
        pytest.fail("reading a FIFO as the key file waited for a writer")
    assert outcome and "is a FIFO, not a regular file" in outcome[0]


def test_a_key_file_of_another_user_is_refused(tmp_path):
    """A 0600 file that another user owns was taken; like the sandbox cache's key file, a fleet key file
    must be this user's own."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    theirs = tmp_path / "theirs.key"
    theirs.write_text("0123456789abcdef0123\n")
    theirs.chmod(0o600)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(FleetKeyError, match=r"belongs to .*uid 65534.*, not to this user .*chown"):
        read_fleet_key(key_file=theirs)

def test_a_dead_lettered_or_timed_out_fleet_request_is_masked_not_ranked(fleet):
    """Through the real client: a stand-in for the fleet's members (it holds the key) answers the request of
    the one correct kernel with dead_lettered and the others with verdicts; the episode runner evaluates it
    again, then masks it, and ranks the others among themselves. With no member at all, every request
    times out: all masked."""
    import asyncio
    import threading

    import leap
    from leap.environment import SandboxEnvironment

    stream = "dl:requests"
    stop = threading.Event()

    def members():
        r = redis.Redis.from_url(fleet.url)
        last = "0-0"
        while not stop.is_set():
            for _, entries in r.xread({stream: last}, block=100) or []:
                for entry_id, fields in entries:
                    last = entry_id
                    line = json.loads(fields[b"request"])
                    if "LOST" in line["source"]:
                        response = {"id": line["id"], "ok": False, "code": "dead_lettered",
                                    "error": "request delivered 3 times without an answer; not run again"}
                    else:
                        verdict = line["source"].split("// ", 1)[1].split()[0]
                        response = {"id": line["id"], "ok": True,
                                    "result": {"status": "verdict", "verdict": verdict, "speedup": 1.0}}
                    text = json.dumps(response)
                    tag = fleet_module._tag(fleet.key.encode(), b"reply", stream.encode(), fields[b"reply"],
                                            fields[b"session"], fields[b"id"], text.encode())
                    r.xadd(fields[b"reply"], {"response": text, "worker": "stand-in", "session": fields[b"session"],
                                              "id": fields[b"id"], "tag": tag})

    kernels = ["correct LOST", "wrong_answer", "compile_error", "correct"]

    async def policy(task, so_far, key):
        return leap.Completion(f"```cuda\n// {kernels[key.sample]}\n```", 10)

    answering = threading.Thread(target=members, daemon=True)
    answering.start()
    try:
        with FleetClient(fleet.url, stream=stream, name="masking", timeout=60, key=fleet.key) as client:
            batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(client), group_size=4,
                                                  max_turns=1))
            assert client.stats()["answered"] == 5  # the dead letter twice
    finally:
        stop.set()
        answering.join()
    assert batch.masks == [True, False, False, False]
    assert batch.samples[0].turns[0].environment_failure
    assert "delivered 3 times" in batch.samples[0].turns[0].feedback
    assert batch.advantages == [0.0, -0.5, -0.5, 1.0]  # ranked among the three judged members
    assert batch.groups[0].stats == leap.GroupStats(size=3, n_correct=1, n_wrong_answer=1, n_compile_error=1)

    with FleetClient(fleet.url, stream="nobody:listens", name="late", timeout=0.3, key=fleet.key) as client:
        late = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(client), group_size=2,
                                             max_turns=1))
    assert late.masks == [True, True] and late.advantages == [0.0, 0.0]
    assert "TimeoutError" in late.samples[0].turns[0].feedback
    assert (late.metrics.environment_errors, late.metrics.environment_retries,
            late.metrics.masked_trajectories) == (4, 2, 2)
