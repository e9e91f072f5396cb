#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for `leap-sandbox serve` with the same JSON-lines protocol and scripted failures, so the
pool's retry rules can be tested deterministically (the real server is tested in test_sandbox.py).
ops: echo (answers with its CUDA_VISIBLE_DEVICES), fail (ok: false), sleep (seconds), crash_once
(exits the first time a marker file is missing), crash (always exits), stray (first writes replies
with ids nobody sent), exit_at_start is a flag. Every result carries the request's "tag", so a test
can tell whose answer it got."""
import json
import os
import sys
import time

if "--exit-at-start" in sys.argv:
    sys.exit(3)
for line in sys.stdin:
    request = json.loads(line)
    op = request["op"]
    if op == "crash" or (op == "crash_once" and not os.path.exists(request["marker"])):
        if op == "crash_once":
            open(request["marker"], "w").close()
        os._exit(9)
    if op == "stray":
        for stray_id in (str(request["id"]) + "-not-mine", 12345, [1, 2]):
            sys.stdout.write(json.dumps({"id": stray_id, "ok": True, "result": {"op": "stray"}}) + "\n")
    if op == "fail":
        reply = {"id": request["id"], "ok": False, "error": "unknown task 'nope'"}
    else:
        if op == "sleep":
            time.sleep(request["seconds"])
        reply = {"id": request["id"], "ok": True,
                 "result": {"op": op, "pid": os.getpid(), "device": os.environ.get("CUDA_VISIBLE_DEVICES"),
                            "tag": request.get("tag")}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
