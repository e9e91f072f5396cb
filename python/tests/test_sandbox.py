# SPDX-License-Identifier: Apache-2.0
"""leap.sandbox.SandboxPool: the real `leap-sandbox serve` (compiling needs no GPU), including a server
killed mid-flight, and a scripted stand-in server for the retry rules."""
import concurrent.futures
import os
import signal
import sys
import time

import pytest

from leap.sandbox import SandboxError, SandboxPool

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
        with pytest.raises(TypeError):
            pool.submit("echo", payload=object())
        assert pool.in_flight == 0
