# SPDX-License-Identifier: Apache-2.0
"""leap.fleet.FleetClient against a real Redis on a loopback port and a real leap-sandbox worker."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

redis = pytest.importorskip("redis", reason="python3-redis is not installed")

from leap.fleet import FleetClient, parse_redis_url  # noqa: E402
from leap.sandbox import SandboxError  # noqa: E402

KERNEL = 'extern "C" __global__ void scale_{k}(float* x, int n) {{ int i = threadIdx.x; if (i < n) x[i] *= {k}.5f; }}\n'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def fleet(tmp_path):
    """redis-server on a free loopback port in tmp_path and one worker; yields the URL."""
    server = shutil.which("redis-server")
    sandbox = os.environ.get("LEAP_SANDBOX")
    if not server:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
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
    env = dict(os.environ, LEAP_SANDBOX_CACHE_DIR=str(tmp_path / "cache"))
    with open(tmp_path / "worker.log", "w") as log:
        worker = subprocess.Popen([sandbox, "worker", "--redis", url, "--name", "py0", "-j", "2"], env=env,
                                  stdout=log, stderr=log)
    try:
        yield url
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
        redis_process.terminate()
        redis_process.wait(timeout=30)


def test_compiles_and_errors_come_back_once_each(fleet):
    with FleetClient(fleet, name="py-trainer", timeout=120) as client:
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

        # A second answer for an id (a reclaimed request answered twice) is dropped, not delivered.
        r = redis.Redis.from_url(fleet)
        r.xadd(client.reply_stream, {"response": json.dumps({"id": 1, "ok": True, "result": {}}), "worker": "ghost"})
        deadline = time.monotonic() + 10
        while client.stats()["duplicates_dropped"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert client.stats()["duplicates_dropped"] == 1
        assert client.stats()["answered"] == 22


def test_deadline_without_workers(fleet):
    with FleetClient(fleet, stream="nobody:listens", timeout=0.3) as client:
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
        FleetClient(f"redis://127.0.0.1:{free_port()}")


def test_the_fleet_client_is_also_leap_sandbox_fleetclient():
    import leap.sandbox
    assert leap.sandbox.FleetClient is FleetClient
    assert "FleetClient" in leap.sandbox.__all__
    with pytest.raises(AttributeError, match="no attribute 'NoSuchClient'"):
        leap.sandbox.NoSuchClient  # noqa: B018
