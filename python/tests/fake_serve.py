#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for `leap-sandbox serve` with the same JSON-lines protocol and scripted failures, so the
pool's retry rules can be tested deterministically (the real server is tested in test_sandbox.py).
ops: echo (answers with its CUDA_VISIBLE_DEVICES), fail (ok: false), sleep (seconds), slow (seconds,
answered from a thread, so that later requests are answered first, as serve -j N does), unreadable
(answered as serve answers a line it cannot parse: "id": null, parse_error), crash_once (exits the
first time a marker file is missing), crash (always exits), stray (first writes replies with ids
nobody sent), exit_at_start is a flag. Every result carries the request's "tag", so a test can tell
whose answer it got."""
import json
import os
import sys
import threading
import time

if "--exit-at-start" in sys.argv:
    sys.exit(3)
output = threading.Lock()


def write(reply):
    with output:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def answer(request):
    return {"id": request["id"], "ok": True,
            "result": {"op": request["op"], "pid": os.getpid(), "device": os.environ.get("CUDA_VISIBLE_DEVICES"),
                       "tag": request.get("tag")}}


for line in sys.stdin:
    request = json.loads(line)
    op = request["op"]
    if op == "crash" or (op == "crash_once" and not os.path.exists(request["marker"])):
        if op == "crash_once":
            open(request["marker"], "w").close()
        os._exit(9)
    if op == "stray":
        for stray_id in (str(request["id"]) + "-not-mine", 12345, [1, 2]):
            write({"id": stray_id, "ok": True, "result": {"op": "stray"}})
    if op == "unreadable":
        write({"id": None, "ok": False, "code": "parse_error",
               "error": "malformed request: not JSON within the limits: (scripted)"})
    elif op == "slow":
        threading.Thread(target=lambda r=request: (time.sleep(r["seconds"]), write(answer(r)))).start()
    elif op == "fail":
        write({"id": request["id"], "ok": False, "error": "unknown task 'nope'"})
    else:
        if op == "sleep":
            time.sleep(request["seconds"])
        write(answer(request))
