#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A trainer written in Python talks to the sandbox through `leap-sandbox serve`.

One sandbox process per GPU; JSON lines in, one JSON response per request out, matched by "id"
(responses may come back out of order). Standard library only.

    python3 examples/python/sandbox_client.py build/default/sandbox/leap-sandbox
"""
import json
import subprocess
import sys
from typing import Any

# One JSON response: {"id": ..., "result": {...}} or {"id": ..., "error": {...}}, fields by operation.
Response = dict[str, Any]


class Sandbox:
    """A `leap-sandbox serve` process. Requests are sent at once; responses are matched by id."""

    def __init__(self, executable: str) -> None:
        process = subprocess.Popen([executable, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   bufsize=1)
        if process.stdin is None or process.stdout is None:  # both are pipes: Popen opened them
            raise RuntimeError("leap-sandbox serve started without its pipes")
        self._process, self._stdin, self._stdout = process, process.stdin, process.stdout
        self._next_id = 0
        self._early: dict[int, Response] = {}  # responses that arrived before their caller asked

    def request(self, op: str, **fields: Any) -> int:
        """Sends one request and returns its id."""
        self._next_id += 1
        self._stdin.write(json.dumps({"id": self._next_id, "op": op, **fields}) + "\n")
        self._stdin.flush()
        return self._next_id

    def response(self, request_id: int) -> Response:
        """Waits for the response to `request_id`."""
        while request_id not in self._early:
            line = self._stdout.readline()
            if not line:
                raise RuntimeError("leap-sandbox serve exited")
            reply: Response = json.loads(line)
            self._early[reply["id"]] = reply
        return self._early.pop(request_id)

    def close(self) -> int:
        """End of input: the server finishes what is in flight and exits 0."""
        self._stdin.close()
        return self._process.wait()


def main() -> int:
    executable = sys.argv[1] if len(sys.argv) > 1 else "leap-sandbox"
    sandbox = Sandbox(executable)
    info = sandbox.response(sandbox.request("info"))["result"]
    print("sandbox:", info["versions"], "| GPU:", info["gpu"]["status"])

    good = 'extern "C" __global__ void twice(float* x, int n) {\n' \
           '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= 2.0f;\n}\n'
    broken = 'extern "C" __global__ void twice(float* x, int n) { x[0] = y; }\n'
    hostile = '#include "/etc/passwd"\n'
    ids = {name: sandbox.request("compile", source=source)
           for name, source in [("good", good), ("broken", broken), ("hostile", hostile)]}
    verdicts: dict[str, str] = {}
    for name, request_id in ids.items():
        result = sandbox.response(request_id)["result"]
        verdicts[name] = result["status"]
        first_line = (result["log"].strip().splitlines() or [""])[0]
        print(f"compile {name:8s}: {result['status']:8s} {first_line[:80]}")

    # A built-in task, evaluated end to end (compile, run, check, time): here its own reference kernel,
    # where a trainer would send what its policy wrote for the task's description.
    tasks = json.loads(subprocess.run([executable, "tasks", "--json"], capture_output=True, text=True,
                                      check=True).stdout)
    task = next(t for t in tasks if t["name"] == "scale_add")
    evaluation = sandbox.response(sandbox.request("eval", task="scale_add", source=task["reference"]))["result"]
    print("eval scale_add:", evaluation["status"], evaluation.get("verdict"), "-",
          evaluation["feedback"].splitlines()[0][:90])

    exit_code = sandbox.close()
    expected = {"good": "ok", "broken": "error", "hostile": "refused"}
    evaluated = evaluation["status"] == "no_gpu" or evaluation.get("verdict") == "correct"
    return 0 if verdicts == expected and evaluated and exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
