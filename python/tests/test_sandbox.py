# SPDX-License-Identifier: Apache-2.0
"""leap.sandbox.SandboxPool: the real `leap-sandbox serve` (compiling needs no GPU), including a server
killed mid-flight, and a scripted stand-in server for the retry rules."""
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from leap.sandbox import RequestEncodingError, SandboxError, SandboxPool

FAKE = [sys.executable, os.path.join(os.path.dirname(__file__), "fake_serve.py")]


def kernel(k):
    """A distinct kernel per k, so nothing is a cache hit."""
    return (f'extern "C" __global__ void scale_{k}(float* x, int n) {{\n'
            f'  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= {k}.5f;\n}}\n')


@pytest.fixture
def sandbox(tmp_path):
    executable = os.environ.get("LEAP_SANDBOX")
    if not executable:
        pytest.skip("LEAP_SANDBOX is not set (the sandbox needs the CUDA toolkit; run through CTest)")
    return executable, dict(os.environ, LEAP_SANDBOX_CACHE_DIR=str(tmp_path / "cache"))


def test_compile_statuses_through_the_pool(sandbox):
    executable, env = sandbox
    with SandboxPool(executable, servers=2, env=env) as pool:
        good = pool.compile(kernel(1))
        broken = pool.compile('extern "C" __global__ void k(float* x) { x[0] = y; }')
        hostile = pool.compile('#include "/etc/passwd"\n')
        info = pool.info()
        assert good.result(timeout=120)["status"] == "ok"
        assert broken.result(timeout=120)["status"] == "error"
        assert hostile.result(timeout=120)["status"] == "refused"
        assert "versions" in info.result(timeout=120)


def test_a_killed_server_loses_no_request(sandbox):
    executable, env = sandbox
    pool = SandboxPool(executable, servers=2, args=["-j", "1"], env=env)
    futures = [pool.compile(kernel(k)) for k in range(24)]
    concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_COMPLETED, timeout=120)
    held = pool.pending_by_server()[0]
    assert held > 0, "the server to kill holds nothing: the test would prove nothing"
    victim = pool.server_pids()[0]
    os.kill(victim, signal.SIGKILL)
    results = [f.result(timeout=300) for f in futures]
    pool.close()
    assert [r["status"] for r in results] == ["ok"] * 24
    assert pool.restarts == 1 and pool.retried >= 1
    assert victim not in pool.server_pids()


def test_close_waits_for_everything_accepted(sandbox):
    executable, env = sandbox
    pool = SandboxPool(executable, servers=2, env=env)
    futures = [pool.compile(kernel(100 + k)) for k in range(10)]
    pool.close()
    assert all(f.done() for f in futures)
    assert [f.result()["status"] for f in futures] == ["ok"] * 10
    with pytest.raises(RuntimeError, match="closed"):
        pool.compile(kernel(0))


def test_eval_without_a_gpu_is_a_result(sandbox):
    executable, env = sandbox
    with SandboxPool(executable, env=env) as pool:
        source = 'extern "C" __global__ void scale_add(const float* x, const float* y, float* out, float a, int n) {}'
        result = pool.eval("scale_add", source).result(timeout=120)
        assert result["status"] in ("no_gpu", "ok")
        with pytest.raises(SandboxError):
            pool.eval("no_such_task", source).result(timeout=120)


def test_one_server_per_device_with_its_cuda_visible_devices():
    with SandboxPool(FAKE, devices=["3", "5"]) as pool:
        futures = [pool.submit("sleep", seconds=0.1) for _ in range(8)]  # spread over both servers
        seen = {f.result(timeout=30)["device"] for f in futures}
    assert seen == {"3", "5"}


def test_a_request_is_retried_once_then_fails(tmp_path):
    with SandboxPool(FAKE, servers=1) as pool:
        survived = pool.submit("crash_once", marker=str(tmp_path / "marker"))
        assert survived.result(timeout=30)["op"] == "crash_once"
        doomed = pool.submit("crash")
        with pytest.raises(SandboxError, match="two sandbox servers that died"):
            doomed.result(timeout=30)
        assert pool.submit("echo").result(timeout=30)["op"] == "echo"  # the pool still serves
        assert pool.restarts == 3 and pool.retried == 2
        with pytest.raises(SandboxError, match="unknown task"):
            pool.submit("fail").result(timeout=30)


def test_back_pressure_blocks_then_times_out():
    with SandboxPool(FAKE, servers=1, max_in_flight=2) as pool:
        first = [pool.submit("sleep", seconds=1.0) for _ in range(2)]
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="max_in_flight = 2"):
            pool.submit("echo", timeout=0.2)
        assert time.monotonic() - start >= 0.2
        late = pool.submit("echo", timeout=30)  # waits for a slot, then goes through
        assert late.result(timeout=30)["op"] == "echo"
        assert all(f.done() for f in first)


def test_a_server_that_cannot_start_fails_requests_instead_of_looping():
    with SandboxPool(FAKE + ["--exit-at-start"], servers=1, max_quick_deaths=2) as pool:
        future = pool.submit("echo")
        with pytest.raises(SandboxError):
            future.result(timeout=30)


def test_bad_arguments():
    with pytest.raises(ValueError, match="devices or servers"):
        SandboxPool(FAKE, devices=[0], servers=1)
    with SandboxPool(FAKE, servers=1) as pool:
        with pytest.raises(ValueError, match="sets a request's id and op"):
            pool.submit("echo", id=3)
        with pytest.raises(TypeError, match="field 'payload' is of type object"):
            pool.submit("echo", payload=object())
        assert pool.in_flight == 0


def nested(levels):
    """`levels` lists inside one another: the request holding it nests 1 + levels deep."""
    value = []
    for _ in range(levels - 1):
        value = [value]
    return value


def refused(pool, **fields):
    """The RequestEncodingError submit raises for these fields (failing the test when it sends them)."""
    with pytest.raises(RequestEncodingError) as error:
        pool.submit("echo", **fields)
    return error.value


def test_requests_serve_could_not_read_are_refused_at_submit_naming_the_field():
    with SandboxPool(FAKE, servers=1, args=["--max-request-bytes", "2048", "--max-depth", "8"]) as pool:
        error = refused(pool, task={"params": [{"min": float("nan")}]})
        assert error.field == "task.params[0].min" and "NaN" in str(error) and "field 'task.params[0].min'" in str(error)
        assert refused(pool, scale=float("-inf")).field == "scale"
        error = refused(pool, source="x = 1;\ud800")
        assert error.field == "source" and "lone surrogate U+D800 at character 6" in error.problem
        assert refused(pool, source="\udfff then text").field == "source"  # a low surrogate alone
        assert refused(pool, headers={"a.cuh\udc80": ""}).field == "headers"  # in a key
        assert refused(pool, value=10 ** 400).field == "value" and "beyond the range of a double" in str(
            refused(pool, value=-10 ** 400))
        error = refused(pool, task=nested(8))
        assert error.field == "task" + "[0]" * 7 and "9 levels deep" in error.problem and "limit of 8" in error.problem
        loop = []
        loop.append(loop)
        assert "nested without end" in refused(pool, task=loop).problem
        error = refused(pool, source="x" * 2100)
        assert error.field == "source" and "limit of 2048 bytes" in error.problem
        assert isinstance(error, ValueError)
        assert pool.in_flight == 0  # nothing refused holds a slot
        # What serve reads goes through: a surrogate pair (two code points), a big integer it reads as a
        # double, nesting at the limit, a line within it.
        fine = [pool.submit("echo", source="\ud83d\ude00"), pool.submit("echo", value=10 ** 300),
                pool.submit("echo", task=nested(7)), pool.submit("echo", source="x" * 1900)]
        assert [f.result(timeout=30)["op"] for f in fine] == ["echo"] * 4


def test_an_unreadable_answer_fails_its_request_and_close_returns():
    """An answer with "id": null (a line the server could not read) used to match nothing: the future
    never resolved, its slot was never freed and close() waited for ever."""
    pool = SandboxPool(FAKE, servers=1)
    future = pool.submit("unreadable")
    error = future.exception(timeout=10)
    assert isinstance(error, SandboxError) and error.code == "parse_error"
    assert "could not read this request" in str(error)
    assert pool.submit("echo").result(timeout=10)["op"] == "echo"  # the slot was freed, the server still serves
    pool.close(timeout=10)
    assert pool.in_flight == 0 and pool.unmatched_replies == 0


def test_an_unreadable_answer_goes_to_its_own_request_when_an_older_one_is_answered_later():
    """serve -j N answers out of order: a null-id answer that comes while an older request is still
    running belongs to the request that gets no other answer, not to the oldest one."""
    pool = SandboxPool(FAKE, servers=1)
    try:
        older = pool.submit("slow", seconds=1.0, tag="older")
        time.sleep(0.1)  # the older request is in the server's hands first
        unreadable = pool.submit("unreadable")
        assert older.result(timeout=10)["tag"] == "older"
        assert unreadable.exception(timeout=10).code == "parse_error"
        assert pool.unmatched_replies == 0
    finally:
        pool.close(timeout=10)
    assert pool.in_flight == 0


def test_the_pool_refuses_exactly_the_lines_serve_cannot_read(sandbox):
    """Each case as a raw line to a real serve and through the pool's check: the pool refuses a request
    exactly when serve answers it parse_error or request_too_large."""
    executable, env = sandbox
    limit, depth = 2048, 8
    args = ["--max-request-bytes", str(limit), "--max-depth", str(depth)]
    cases = {
        "nan": {"x": float("nan")}, "infinity": {"x": float("inf")}, "lone high": {"x": "a\ud800b"},
        "lone low": {"x": "\udc00"}, "lone in a key": {"x": {"\udbff": 1}}, "pair": {"x": "\ud83d\ude00"},
        "reversed pair": {"x": "\ude00\ud83d"}, "nul": {"x": "\u0000"}, "huge int": {"x": 10 ** 400},
        "big int": {"x": 10 ** 300}, "2^64": {"x": 2 ** 64}, "max double": {"x": 1.7976931348623157e308},
        "at the depth limit": {"x": nested(depth - 1)}, "past the depth limit": {"x": nested(depth)},
    }
    with SandboxPool(FAKE, servers=1, args=args) as pool:
        # The raw lines carry the ids the pool gives the same cases (its n-th submit's id ends in n), so
        # that both sides judge lines of the same length.
        ids = [f"{pool._id_prefix}{n + 1}" for n in range(len(cases) + 2)]
        base = len(json.dumps({"id": ids[-1], "op": "none", "x": ""}))
        cases["at the size limit"] = {"x": "y" * (limit - base)}
        cases["past the size limit"] = {"x": "y" * (limit - base + 1)}
        lines = [json.dumps({"id": ids[n], "op": "none", **fields}) for n, fields in enumerate(cases.values())]
        assert len(lines[-2]) == limit and len(lines[-1]) == limit + 1
        serve = subprocess.run([executable, "serve", *args], input="\n".join(lines) + "\n", env=env,
                               capture_output=True, text=True, timeout=120)
        answers = [json.loads(line) for line in serve.stdout.splitlines()]
        assert len(answers) == len(cases), serve.stderr
        # A parse_error's id is null: the lines serve could read are those answered otherwise, by id.
        readable = {a["id"] for a in answers if a.get("code") not in ("parse_error", "request_too_large")}
        serve_refused = {name for n, name in enumerate(cases) if ids[n] not in readable}
        pool_refused = set()
        for name, fields in cases.items():
            try:
                pool.submit("none", **fields).result(timeout=30)
            except RequestEncodingError:
                pool_refused.add(name)
    assert pool_refused == serve_refused
    assert pool_refused == {"nan", "infinity", "lone high", "lone low", "lone in a key", "reversed pair", "huge int",
                            "past the depth limit", "past the size limit"}
