#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The logic of tests/gpu/run.sh, kept out of shell so a CPU test holds it (test_gpu_facts.py).

Subcommands (each prints plain lines the script reads):
  facts SMI_CSV DEVICE_FACTS HOST_FACTS   the device and host facts as one JSON object
  switches FACTS_JSON [INFO_JSON]         line 1: the run switches chosen (may be empty);
                                          then one line per reason, and "skip: WHY" when no
                                          device step can run at all
  budget STEP ELAPSED [TOTAL]             seconds the step may take (its cap, less what the later
                                          steps need at least, never below 5)
  variants TASKS_JSON TASKS_DIR           "task variant expect path" per shipped variant with a file
  verdict EVAL_JSON_FILE EXPECT           "PASS verdict ..." or "FAIL verdict ..." for one eval
  measured REFERENCE_TIMES_JSON           the summary lines of `leap-sandbox tasks measure --json-file`
"""
import glob
import json
import os
import sys

# The steps in the order run.sh takes them: (name, cap in seconds, the least it needs to be useful).
# The caps sum to more than the total on purpose: a step that ends early leaves its time to the
# next; the reserves of the later steps keep one slow step from starving them all.
STEPS = [
    ("facts", 30, 5),
    ("build", 270, 30),
    ("info", 20, 10),
    ("variants", 100, 45),
    ("hostile", 150, 90),
    ("bench_cupti", 50, 30),
    ("bench_events", 25, 15),
    ("bench_dirty", 35, 20),
    ("sandbox_loop", 45, 30),
    ("tasks_measure", 150, 60),
]
TOTAL_SECONDS = 540  # 9 minutes on an H200, the build included


def budget(step, elapsed, total=TOTAL_SECONDS):
    """Seconds `step` may take after `elapsed` seconds: its cap, less the reserves of the steps
    after it, never below 5 (a step always gets to say that it ran out of time)."""
    names = [s[0] for s in STEPS]
    if step not in names:
        raise ValueError("unknown step '%s' (known: %s)" % (step, ", ".join(names)))
    i = names.index(step)
    cap = STEPS[i][1]
    later = sum(s[2] for s in STEPS[i + 1:])
    left = int(total - elapsed - later)
    return max(5, min(cap, left))


def parse_key_values(text):
    """key=value lines (tests/gpu/device_facts.cpp, the host facts) into a dict of str."""
    out = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


SMI_FIELDS = ["name", "driver_version", "compute_mode", "memory_clock_max_mhz", "memory_total_mib", "pci_bus_id"]


def parse_smi_csv(text):
    """nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.max.memory,memory.total,pci.bus_id
    --format=csv,noheader,nounits: one dict per GPU (strings; "[N/A]" kept as None)."""
    gpus = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.lower().startswith(("no devices", "nvidia-smi has failed")):
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < len(SMI_FIELDS):
            continue
        gpus.append({k: (None if v in ("[N/A]", "N/A", "") else v) for k, v in zip(SMI_FIELDS, cells)})
    return gpus


def as_int(value, default=None):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def facts(smi_text, device_text, host_text):
    """The facts run.sh records and decides by, from the three files it gathers."""
    d = parse_key_values(device_text)
    h = parse_key_values(host_text)
    gpus = parse_smi_csv(smi_text)
    mode = gpus[0]["compute_mode"] if gpus else None
    if mode is None and "compute_mode" in d:  # the driver's number: 0 default, 2 prohibited, 3 exclusive process
        mode = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}.get(as_int(d["compute_mode"]))
    clock_khz = as_int(d.get("memory_clock_khz"))
    bus_bits = as_int(d.get("memory_bus_width_bits"))
    peak = clock_khz * 1000 * (bus_bits // 8) * 2 if clock_khz and bus_bits else None
    problem = None
    if "driver" in d:
        problem = "driver " + d["driver"]
    elif d.get("device") in (None, "none"):
        problem = "no device"
    return {
        "gpus": gpus,
        "device": d.get("device") if problem is None else (gpus[0]["name"] if gpus else None),
        "driver_problem": problem,
        "compute_capability": "%s.%s" % (d["compute_capability_major"], d["compute_capability_minor"])
        if "compute_capability_major" in d and "compute_capability_minor" in d else None,
        "compute_mode": mode,
        "memory_clock_khz": clock_khz,
        "memory_bus_width_bits": bus_bits,
        "peak_memory_bytes_per_s": peak,
        "l2_cache_bytes": as_int(d.get("l2_cache_bytes")),
        "max_shared_per_block_optin": as_int(d.get("max_shared_per_block_optin")),
        "pageable_memory_access": as_int(d.get("pageable_memory_access"), 0) == 1,
        "landlock": h.get("landlock") == "1",
        "seccomp": h.get("seccomp") == "1",
        "user_namespaces": h.get("user_namespaces") == "1",
    }


def choose_switches(f, info=None):
    """(switches, reasons, skip): the run switches for this host, why each, and why no device step
    can run (None when they can). `info` (leap-sandbox info --json), when given, is the program's
    own account of confinement and pageable access and wins over the host facts."""
    switches, reasons = [], []
    pageable = f.get("pageable_memory_access", False)
    if info is not None:
        devices = info.get("gpu", {}).get("devices", [])
        pageable = pageable or any(dev.get("pageable_memory_access") for dev in devices)
    if pageable:
        switches.append("--allow-pageable-host-access")
        reasons.append("--allow-pageable-host-access: the device can read and write pageable host memory (HMM), "
                       "so the GPU runner would refuse every evaluation; accepted on this throwaway check machine")
    if info is not None and "confinement" in info:
        c = info["confinement"]
        full, sufficient = bool(c.get("in_force")), bool(c.get("sufficient"))
        missing = c.get("missing") or "?"
    else:
        full = f.get("landlock") and f.get("seccomp") and f.get("user_namespaces")
        sufficient = f.get("landlock") and f.get("seccomp")
        missing = ", ".join(k for k in ("landlock", "seccomp", "user_namespaces") if not f.get(k)) or "?"
    if not sufficient:
        switches.append("--unconfined")
        reasons.append("--unconfined: confinement layers missing (%s); compiles run without the OS confinement, "
                       "acceptable only on a throwaway check machine" % missing)
    elif not full:
        switches.append("--accept-weaker-confinement")
        reasons.append("--accept-weaker-confinement: a confinement layer is missing (%s); the others stay in force"
                       % missing)
    skip = None
    mode = f.get("compute_mode")
    if mode == "Prohibited":
        skip = "compute mode Prohibited: no process may create a CUDA context on this GPU"
    elif mode in ("Exclusive_Process", "Exclusive_Thread"):
        reasons.append("compute mode %s: one CUDA context at a time; every program here keeps one GPU runner "
                       "at a time and the steps run one after another" % mode)
    if info is not None and not info.get("gpu", {}).get("available", False):
        g = info.get("gpu", {})
        skip = skip or "no GPU (%s: %s)" % (g.get("status", "?"), g.get("reason", ""))
    if not reasons:
        reasons.append("no switch needed: every confinement layer in force, no pageable host access")
    return switches, reasons, skip


def variants(tasks, tasks_dir):
    """(task, variant, expect, path) for every variant `leap-sandbox tasks --json` lists that has a
    source file under tasks_dir (sandbox/tasks/<category>/<task>/<variant>.cu, or one folder shallower)."""
    out = []
    for t in tasks:
        for v in t.get("variants", []):
            candidates = sorted(glob.glob(os.path.join(tasks_dir, t["name"], v["name"] + ".cu")) +
                                glob.glob(os.path.join(tasks_dir, "*", t["name"], v["name"] + ".cu")))
            if candidates:
                out.append((t["name"], v["name"], v["expect"], candidates[0]))
    return out


def verdict_line(result_text, expect):
    """One eval's line for the summary: PASS when its verdict is the one expected."""
    try:
        r = json.loads(result_text)
    except ValueError:
        return "FAIL no JSON result: %s" % result_text.strip()[:200]
    got = r.get("verdict") or ("status " + str(r.get("status")))
    line = "%s %s" % ("PASS" if got == expect else "FAIL", got)
    if got != expect:
        line += " (expected %s): %s %s" % (expect, (r.get("detail") or "")[:200], r.get("error") or "")
    t = r.get("timings")
    if t:
        line += "; speedup %s, %s (stopping rule %s), %s run pairs, %s checked, matched %s by id / %s by window, " \
                "%s dropped, warm-up %s/%s launches" % (
                    r.get("speedup"), t.get("method"), t.get("stopping_rule_source"), t.get("reps"),
                    t.get("checked_runs"), t.get("matched_by_id"), t.get("matched_by_window"),
                    t.get("dropped_records"), t.get("warmup", {}).get("candidate", {}).get("launches"),
                    t.get("warmup", {}).get("reference", {}).get("launches"))
    return line


# The reference times the timing sizes aim at (docs/tasks.md): long enough to time, short enough to run often.
AIM_MS = (0.1, 5.0)


def measured_lines(report, limit=12):
    """The summary of `leap-sandbox tasks measure --json-file`: how many references agree with their
    oracles at their timing sizes, each failure with its first failed check, and the measured times
    against the 0.1-5 ms the timing sizes aim at (the tasks outside it, slowest or fastest first)."""
    tasks = report.get("tasks", [])
    failed = [t for t in tasks if not t.get("ok")]
    lines = ["%d of %d references agree with their oracles at their timing sizes (%s, %s; %.0f s)"
             % (len(tasks) - len(failed), len(tasks), report.get("device"), report.get("arch"),
                report.get("seconds", 0))]
    if report.get("complete") is False:
        lines.append("INCOMPLETE: tasks measure was stopped before its end; these are the tasks it had reported")
    for t in failed[:limit]:
        bad = next((c for c in t.get("checks", []) if not c.get("ok")), {})
        lines.append("FAIL %s: %s: %s" % (t.get("task"), bad.get("name"), (bad.get("detail") or "")[:300]))
    if len(failed) > limit:
        lines.append("... and %d more failures (logs/reference_times.json)" % (len(failed) - limit))
    timed = [t for t in tasks if t.get("time")]
    if timed:
        ms = sorted(t["time"]["median_ms"] for t in timed)
        lines.append("timed %d: median %.3g ms, fastest %.3g ms, slowest %.3g ms" % (len(ms), ms[len(ms) // 2], ms[0], ms[-1]))
        below = sorted((t for t in timed if t["time"]["median_ms"] < AIM_MS[0]), key=lambda t: t["time"]["median_ms"])
        above = sorted((t for t in timed if t["time"]["median_ms"] > AIM_MS[1]), key=lambda t: -t["time"]["median_ms"])
        for name, group in (("below %g ms" % AIM_MS[0], below), ("above %g ms" % AIM_MS[1], above)):
            if group:
                shown = ", ".join("%s %.3g" % (t["task"], t["time"]["median_ms"]) for t in group[:limit])
                more = " and %d more" % (len(group) - limit) if len(group) > limit else ""
                lines.append("%d %s: %s%s" % (len(group), name, shown, more))
    return lines


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]

    def read(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    if cmd == "facts" and len(args) == 3:
        print(json.dumps(facts(read(args[0]), read(args[1]), read(args[2])), indent=1, sort_keys=True))
    elif cmd == "switches" and len(args) in (1, 2):
        info = json.loads(read(args[1])) if len(args) == 2 and os.path.getsize(args[1]) > 0 else None
        switches, reasons, skip = choose_switches(json.loads(read(args[0])), info)
        print(" ".join(switches))
        for r in reasons:
            print(r)
        if skip:
            print("skip: " + skip)
    elif cmd == "budget" and len(args) in (2, 3):
        print(budget(args[0], float(args[1]), float(args[2]) if len(args) == 3 else TOTAL_SECONDS))
    elif cmd == "variants" and len(args) == 2:
        for v in variants(json.loads(read(args[0])), args[1]):
            print(" ".join(v))
    elif cmd == "verdict" and len(args) == 2:
        print(verdict_line(read(args[0]), args[1]))
    elif cmd == "measured" and len(args) == 1:
        try:
            report = json.loads(read(args[0]))
        except (OSError, ValueError) as e:
            print("no report from tasks measure (%s)" % e)
            return 0
        for line in measured_lines(report):
            print(line)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
