# SPDX-License-Identifier: Apache-2.0
"""A SandboxPool used before a fork and then in the forked child (a DataLoader worker, a process pool
of reward functions): the child gets servers of its own, or the error it asked for, and no reply
ever reaches the other process's futures. Every test forks after the pool has been used."""
import json
import multiprocessing
import os
import sys

import pytest

from leap.sandbox import SandboxPool

FAKE = [sys.executable, os.path.join(os.path.dirname(__file__), "fake_serve.py")]

POOL = None  # the module-level pool that multiprocessing's forked workers inherit


def in_forked_child(work):
    """Forks; the child runs work(signal) and sends back its JSON-able return (or its error) on a
    pipe, then leaves with os._exit. signal() tells the parent to go on; the parent waits for that
    (a handshake, not a timing). Returns (wait_for_result, release_child): release_child lets a
    child that called hold() finish."""
    result_read, result_write = os.pipe()
    go_read, go_write = os.pipe()
    hold_read, hold_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(result_read), os.close(go_read), os.close(hold_write)

            signalled = []

            def signal():
                if not signalled:
                    signalled.append(os.write(go_write, b"g"))

            def hold():
                os.read(hold_read, 1)

            try:
                payload = {"value": work(signal, hold)}
            except BaseException as error:  # everything goes back to the parent's assertions
                payload = {"error": f"{type(error).__name__}: {error}"}
            signal()
            with os.fdopen(result_write, "w") as stream:
                json.dump(payload, stream)
        finally:
            os._exit(0)
    os.close(result_write), os.close(go_write), os.close(hold_read)
    assert os.read(go_read, 1) == b"g", "the child ended before it signalled"
    os.close(go_read)

    def wait_for_result():
        with os.fdopen(result_read) as stream:
            payload = json.load(stream)
        os.waitpid(pid, 0)
        return payload

    def release_child():
        try:
            os.write(hold_write, b"r")
        except BrokenPipeError:
            pass  # the child did not hold(), and has ended
        os.close(hold_write)

    return wait_for_result, release_child


def test_a_forked_child_and_its_parent_each_get_their_own_answers():
    pool = SandboxPool(FAKE, servers=2)
    warm = [pool.submit("echo", tag=f"parent-warm-{k}") for k in range(6)]
    assert [f.result(timeout=30)["tag"] for f in warm] == [f"parent-warm-{k}" for k in range(6)]
    parent_servers = set(pool.server_pids())

    def child(signal, hold):
        # A slow request first: the copy of the parent's id counter gives it the id of the parent's
        # next request, and its reply would come after the parent had sent that request.
        slow = pool.submit("sleep", seconds=0.5, tag="child-slow")
        signal()
        quick = [pool.submit("echo", tag=f"child-{k}") for k in range(4)]
        results = [slow.result(timeout=30)] + [f.result(timeout=30) for f in quick]
        return {"tags": [r["tag"] for r in results], "answered_by": sorted({r["pid"] for r in results}),
                "servers": pool.server_pids(), "unmatched": pool.unmatched_replies}

    wait_for_child, release_child = in_forked_child(child)
    mine = [pool.submit("echo", tag=f"parent-{k}") for k in range(8)]
    results = [f.result(timeout=30) for f in mine]
    assert [r["tag"] for r in results] == [f"parent-{k}" for k in range(8)], "the parent got another's answer"
    assert {r["pid"] for r in results} <= parent_servers
    child_report = wait_for_child()
    release_child()
    assert "error" not in child_report, child_report
    child_report = child_report["value"]
    assert child_report["tags"] == ["child-slow"] + [f"child-{k}" for k in range(4)]
    assert not set(child_report["answered_by"]) & parent_servers, "the child was answered by the parent's server"
    assert not set(child_report["servers"]) & parent_servers and None not in child_report["servers"]
    assert child_report["unmatched"] == 0 and pool.unmatched_replies == 0
    pool.close()


def test_the_child_lets_go_of_the_parents_pipes():
    # While a forked child lives, the parent's close() still reaches its servers: the child holds no
    # copy of their stdin, so they see the end of input and exit 0 (not killed after close's wait).
    pool = SandboxPool(FAKE, servers=2)
    assert pool.submit("echo", tag="before").result(timeout=30)["tag"] == "before"

    def child(signal, hold):
        signal()
        hold()  # alive until the parent has closed its pool
        return True

    wait_for_child, release_child = in_forked_child(child)
    try:
        pool.close(timeout=60)
        assert [server.process.returncode for server in pool._servers] == [0, 0]
    finally:
        release_child()
        assert wait_for_child() == {"value": True}


def test_a_child_that_asked_for_it_gets_a_clear_error():
    pool = SandboxPool(FAKE, servers=1, after_fork="raise")
    assert pool.submit("echo", tag="before").result(timeout=30)["tag"] == "before"

    def child(signal, hold):
        signal()
        try:
            pool.submit("echo", tag="child")
        except RuntimeError as error:
            return str(error)
        return "no error"

    wait_for_child, release_child = in_forked_child(child)
    after = pool.submit("echo", tag="after")
    message = wait_for_child()["value"]
    release_child()
    assert "forked" in message and "create a SandboxPool in the child" in message, message
    assert after.result(timeout=30)["tag"] == "after"
    pool.close()
    with pytest.raises(ValueError, match="after_fork"):
        SandboxPool(FAKE, servers=1, after_fork="ignore")


def _worker(tag):
    result = POOL.submit("echo", tag=tag).result(timeout=30)
    return result["tag"], result["pid"], POOL.server_pids()


def test_multiprocessing_fork_workers_use_a_module_level_pool():
    global POOL
    POOL = SandboxPool(FAKE, servers=1)
    try:
        assert POOL.submit("echo", tag="parent-warm").result(timeout=30)["tag"] == "parent-warm"
        parent_servers = set(POOL.server_pids())
        context = multiprocessing.get_context("fork")
        with context.Pool(2) as workers:
            pending = workers.map_async(_worker, [f"child-{k}" for k in range(8)])
            mine = [POOL.submit("echo", tag=f"parent-{k}") for k in range(8)]
            answers = pending.get(timeout=120)
        assert [f.result(timeout=30)["tag"] for f in mine] == [f"parent-{k}" for k in range(8)]
        assert [tag for tag, _, _ in answers] == [f"child-{k}" for k in range(8)]
        for _, answered_by, servers in answers:
            assert answered_by not in parent_servers and answered_by in servers
        assert POOL.unmatched_replies == 0
    finally:
        POOL.close()
        POOL = None


def test_a_reply_nobody_sent_is_dropped_and_counted():
    with SandboxPool(FAKE, servers=1) as pool:
        result = pool.submit("stray", tag="real").result(timeout=30)
        assert result["op"] == "stray" and result["tag"] == "real"
        assert pool.unmatched_replies == 3
        assert pool.submit("echo", tag="next").result(timeout=30)["tag"] == "next"


def kernel(k):
    return (f'extern "C" __global__ void scale_{k}(float* x, int n) {{\n'
            f'  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= {k}.5f;\n}}\n')


def test_the_real_server_after_a_fork(tmp_path):
    executable = os.environ.get("LEAP_SANDBOX")
    if not executable:
        pytest.skip("LEAP_SANDBOX is not set (the sandbox needs the CUDA toolkit; run through CTest)")
    env = dict(os.environ, LEAP_SANDBOX_CACHE_DIR=str(tmp_path / "cache"))
    pool = SandboxPool(executable, servers=1, env=env)
    assert pool.compile(kernel(1)).result(timeout=120)["status"] == "ok"
    parent_servers = set(pool.server_pids())

    def child(signal, hold):
        broken = pool.compile('extern "C" __global__ void broken(float* x) { x[0] = y; }')
        signal()
        status = broken.result(timeout=120)["status"]
        return {"status": status, "servers": pool.server_pids()}

    wait_for_child, release_child = in_forked_child(child)
    good = [pool.compile(kernel(k)) for k in range(2, 5)]
    results = [f.result(timeout=120) for f in good]
    child_report = wait_for_child()
    release_child()
    pool.close()
    assert [r["status"] for r in results] == ["ok"] * 3, "the parent got the child's answer"
    assert [r.get("kernels") for r in results] == [[f"scale_{k}"] for k in range(2, 5)]
    assert child_report.get("value", {}).get("status") == "error", child_report
    assert not set(child_report["value"]["servers"]) & parent_servers
    assert pool.unmatched_replies == 0


def test_a_fork_that_ran_no_hooks_is_noticed_on_first_use():
    # A fork from C code (not os.fork) runs no Python fork hooks: the pid check on use does the same.
    import leap.sandbox
    pool = SandboxPool(FAKE, servers=1)
    assert pool.submit("echo", tag="before").result(timeout=30)["tag"] == "before"
    parent_servers = set(pool.server_pids())
    leap.sandbox._live_pools.discard(pool)

    def child(signal, hold):
        slow = pool.submit("sleep", seconds=0.5, tag="child-slow")
        signal()
        result = slow.result(timeout=30)
        return {"tag": result["tag"], "pid": result["pid"], "servers": pool.server_pids()}

    wait_for_child, release_child = in_forked_child(child)
    after = pool.submit("echo", tag="after")
    assert after.result(timeout=30)["tag"] == "after"
    report = wait_for_child()["value"]
    release_child()
    assert report["tag"] == "child-slow" and report["pid"] not in parent_servers
    assert not set(report["servers"]) & parent_servers
    pool.close()
