#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/gpu/gpu_facts.py, the logic of tests/gpu/run.sh: facts parsing, switch selection, budgets,
the variants to evaluate and the verdict lines. Runs anywhere (no GPU): python3 test_gpu_facts.py."""
import json
import glob
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_facts  # noqa: E402

H200_SMI = "NVIDIA H200, 570.124.06, Exclusive_Process, 3201, 143771, 00000000:19:00.0\n"
H200_DRIVER = """driver_api=12.8
device=NVIDIA H200
compute_capability_major=9
compute_capability_minor=0
compute_mode=3
multiprocessors=132
clock_khz=1980000
l2_cache_bytes=52428800
memory_clock_khz=3201000
memory_bus_width_bits=6144
max_shared_per_block_optin=232448
pageable_memory_access=1
"""
HOST_FULL = "landlock=1\nseccomp=1\nuser_namespaces=1\n"


class Facts(unittest.TestCase):
    def test_an_h200_in_exclusive_process_mode_with_hmm(self):
        f = gpu_facts.facts(H200_SMI, H200_DRIVER, HOST_FULL)
        self.assertEqual(f["device"], "NVIDIA H200")
        self.assertEqual(f["compute_capability"], "9.0")
        self.assertEqual(f["compute_mode"], "Exclusive_Process")
        self.assertEqual(f["l2_cache_bytes"], 52428800)
        self.assertEqual(f["max_shared_per_block_optin"], 232448)
        # 3.2 GHz x 768 bytes x 2: the H200's 4.9 TB/s
        self.assertEqual(f["peak_memory_bytes_per_s"], 3201000 * 1000 * 768 * 2)
        self.assertTrue(f["pageable_memory_access"])
        self.assertIsNone(f["driver_problem"])
        self.assertEqual(f["gpus"][0]["memory_clock_max_mhz"], "3201")

    def test_no_driver_and_no_nvidia_smi(self):
        f = gpu_facts.facts("", "driver=none (libcuda.so.1: cannot open shared object file)\n", "landlock=0\n")
        self.assertEqual(f["driver_problem"], "driver none (libcuda.so.1: cannot open shared object file)")
        self.assertIsNone(f["compute_mode"])
        self.assertIsNone(f["peak_memory_bytes_per_s"])
        self.assertFalse(f["pageable_memory_access"])
        self.assertEqual(f["gpus"], [])

    def test_the_compute_mode_from_the_driver_when_nvidia_smi_says_nothing(self):
        f = gpu_facts.facts("No devices were found\n", H200_DRIVER.replace("compute_mode=3", "compute_mode=2"), HOST_FULL)
        self.assertEqual(f["compute_mode"], "Prohibited")

    def test_nvidia_smi_not_available_fields(self):
        gpus = gpu_facts.parse_smi_csv("GPU X, 1.0, Default, [N/A], 1000, 0:1:0\nshort, line\n")
        self.assertEqual(len(gpus), 1)
        self.assertIsNone(gpus[0]["memory_clock_max_mhz"])


class Switches(unittest.TestCase):
    def facts(self, driver=H200_DRIVER, host=HOST_FULL, smi=H200_SMI):
        return gpu_facts.facts(smi, driver, host)

    def test_hmm_asks_for_pageable_access_and_exclusive_mode_is_said(self):
        switches, reasons, skip = gpu_facts.choose_switches(self.facts())
        self.assertEqual(switches, ["--allow-pageable-host-access"])
        self.assertIn("pageable host memory", reasons[0])
        self.assertTrue(any("Exclusive_Process" in r for r in reasons))
        self.assertIsNone(skip)

    def test_no_switch_on_an_ordinary_host(self):
        f = self.facts(driver=H200_DRIVER.replace("pageable_memory_access=1", "pageable_memory_access=0"),
                       smi=H200_SMI.replace("Exclusive_Process", "Default"))
        switches, reasons, skip = gpu_facts.choose_switches(f)
        self.assertEqual(switches, [])
        self.assertEqual(reasons, ["no switch needed: every confinement layer in force, no pageable host access"])
        self.assertIsNone(skip)

    def test_missing_user_namespaces_accept_the_weaker_set_and_missing_landlock_goes_unconfined(self):
        weaker, _, _ = gpu_facts.choose_switches(self.facts(host="landlock=1\nseccomp=1\nuser_namespaces=0\n"))
        self.assertIn("--accept-weaker-confinement", weaker)
        self.assertNotIn("--unconfined", weaker)
        bare, reasons, _ = gpu_facts.choose_switches(self.facts(host="landlock=0\nseccomp=1\nuser_namespaces=1\n"))
        self.assertIn("--unconfined", bare)
        self.assertNotIn("--accept-weaker-confinement", bare)
        self.assertTrue(any("landlock" in r for r in reasons))

    def test_the_programs_own_account_wins(self):
        info = {"gpu": {"available": True, "devices": [{"pageable_memory_access": False}]},
                "confinement": {"in_force": False, "sufficient": True, "missing": "private mount namespace"}}
        f = self.facts(driver=H200_DRIVER.replace("pageable_memory_access=1", "pageable_memory_access=0"),
                       host="landlock=0\nseccomp=0\nuser_namespaces=0\n")
        switches, reasons, skip = gpu_facts.choose_switches(f, info)
        self.assertEqual(switches, ["--accept-weaker-confinement"])
        self.assertIn("private mount namespace", reasons[0])
        self.assertIsNone(skip)
        info["gpu"]["devices"][0]["pageable_memory_access"] = True
        self.assertIn("--allow-pageable-host-access", gpu_facts.choose_switches(f, info)[0])

    def test_no_gpu_or_a_prohibited_mode_skips_every_device_step(self):
        info = {"gpu": {"available": False, "status": "no_driver", "reason": "cannot load libcuda.so.1"},
                "confinement": {"in_force": True, "sufficient": True}}
        _, _, skip = gpu_facts.choose_switches(self.facts(), info)
        self.assertEqual(skip, "no GPU (no_driver: cannot load libcuda.so.1)")
        _, _, prohibited = gpu_facts.choose_switches(self.facts(smi=H200_SMI.replace("Exclusive_Process", "Prohibited")))
        self.assertIn("Prohibited", prohibited)


class Budgets(unittest.TestCase):
    def test_the_steps_fit_nine_minutes_and_each_keeps_its_reserve(self):
        self.assertEqual(gpu_facts.TOTAL_SECONDS, 540)
        self.assertEqual([s[0] for s in gpu_facts.STEPS][:4], ["facts", "build", "info", "variants"])
        reserves = sum(s[2] for s in gpu_facts.STEPS)
        self.assertLess(reserves, gpu_facts.TOTAL_SECONDS)
        # At the start each step gets its cap; the build is cut so that the reserves of the later steps remain.
        self.assertEqual(gpu_facts.budget("facts", 0), 30)
        later = sum(s[2] for s in gpu_facts.STEPS[2:])
        self.assertEqual(gpu_facts.budget("build", 20), min(270, 540 - 20 - later))
        self.assertEqual(gpu_facts.budget("hostile", 100), 150)

    def test_a_late_step_gets_what_is_left_and_never_below_five(self):
        self.assertEqual(gpu_facts.budget("tasks_measure", 300), 150)
        self.assertEqual(gpu_facts.budget("tasks_measure", 500), 40)
        self.assertEqual(gpu_facts.budget("tasks_measure", 600), 5)
        self.assertEqual(gpu_facts.budget("hostile", 300), max(5, 540 - 300 - (30 + 15 + 20 + 30 + 60)))

    def test_an_unknown_step_is_an_error_that_names_the_known_ones(self):
        with self.assertRaisesRegex(ValueError, "unknown step 'bench'.*bench_cupti"):
            gpu_facts.budget("bench", 0)


class VariantsAndVerdicts(unittest.TestCase):
    def test_variants_with_their_files_flat_or_one_folder_deeper(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "scale_add"))
            os.makedirs(os.path.join(d, "reductions", "row_sum"))
            for path in ("scale_add/fast.cu", "scale_add/wrong.cu", "reductions/row_sum/fast.cu"):
                open(os.path.join(d, path), "w").close()
            tasks = [{"name": "scale_add", "variants": [{"name": "fast", "expect": "correct"},
                                                        {"name": "wrong", "expect": "wrong_answer"},
                                                        {"name": "broken", "expect": "compile_error"}]},
                     {"name": "row_sum", "variants": [{"name": "fast", "expect": "correct"}]}]
            found = gpu_facts.variants(tasks, d)
            self.assertEqual([(t, v, e) for t, v, e, _ in found],
                             [("scale_add", "fast", "correct"), ("scale_add", "wrong", "wrong_answer"),
                              ("row_sum", "fast", "correct")])
            self.assertTrue(found[2][3].endswith(os.path.join("reductions", "row_sum", "fast.cu")))

    def test_the_shipped_tasks_all_have_files(self):
        tasks_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox", "tasks")
        names = [os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(tasks_dir, "*", "*", "task.json"))]
        self.assertGreaterEqual(len(names), 120)
        tasks = [{"name": n, "variants": [{"name": "fast", "expect": "correct"}]} for n in names]
        self.assertEqual(len(gpu_facts.variants(tasks, tasks_dir)), len(names))

    def test_verdict_lines(self):
        correct = {"verdict": "correct", "speedup": 2.5, "timings": {
            "method": "cupti", "stopping_rule_source": "cupti", "reps": 10, "checked_runs": 10, "matched_by_id": 20,
            "matched_by_window": 0, "dropped_records": 0,
            "warmup": {"candidate": {"launches": 511}, "reference": {"launches": 255}}}}
        line = gpu_facts.verdict_line(json.dumps(correct), "correct")
        self.assertTrue(line.startswith("PASS correct; speedup 2.5, cupti (stopping rule cupti)"))
        self.assertIn("matched 20 by id / 0 by window", line)
        wrong = gpu_facts.verdict_line(json.dumps({"verdict": "correct", "timings": None}), "wrong_answer")
        self.assertTrue(wrong.startswith("FAIL correct (expected wrong_answer)"))
        self.assertTrue(gpu_facts.verdict_line('{"verdict": null, "status": "no_gpu"}', "correct")
                        .startswith("FAIL status no_gpu"))
        self.assertTrue(gpu_facts.verdict_line("Segmentation fault", "correct").startswith("FAIL no JSON result"))


def measured_task(name, ok=True, median_ms=None, failed_check=None):
    checks = [{"name": "compile:reference:device", "ok": True, "detail": "compiled"}]
    if failed_check:
        checks.append({"name": failed_check[0], "ok": False, "detail": failed_check[1]})
    time = {"reps": 10, "median_ms": median_ms, "min_ms": median_ms, "max_ms": median_ms, "spread": 0.01,
            "method": "events"} if median_ms is not None else None
    return {"task": name, "ok": ok, "checks": checks, "time": time}


class MeasuredReferences(unittest.TestCase):
    def test_agreement_failures_and_times_outside_the_aim(self):
        report = {"device": "NVIDIA H200", "arch": "sm_90a", "seconds": 61.2, "tasks": [
            measured_task("matmul", median_ms=1.2),
            measured_task("gelu", median_ms=0.05),
            measured_task("relu", median_ms=0.08),
            measured_task("conv3d", median_ms=9.5),
            measured_task("cumsum", ok=False, failed_check=(
                "reference_vs_oracle:timing", "task 'cumsum', timing {n=1}: out: 1 of 1 elements differ; first at [0]")),
        ]}
        lines = gpu_facts.measured_lines(report)
        self.assertEqual(lines[0], "4 of 5 references agree with their oracles at their timing sizes "
                                   "(NVIDIA H200, sm_90a; 61 s)")
        self.assertEqual(lines[1], "FAIL cumsum: reference_vs_oracle:timing: task 'cumsum', timing {n=1}: out: 1 of 1 "
                                   "elements differ; first at [0]")
        self.assertEqual(lines[2], "timed 4: median 1.2 ms, fastest 0.05 ms, slowest 9.5 ms")
        self.assertEqual(lines[3], "2 below 0.1 ms: gelu 0.05, relu 0.08")
        self.assertEqual(lines[4], "1 above 5 ms: conv3d 9.5")
        self.assertEqual(len(lines), 5)

    def test_a_long_list_is_cut_and_says_how_many_more(self):
        report = {"tasks": [measured_task("t%02d" % i, median_ms=0.01 * (i + 1)) for i in range(9)]}
        lines = gpu_facts.measured_lines(report, limit=3)
        self.assertEqual(lines[-1], "9 below 0.1 ms: t00 0.01, t01 0.02, t02 0.03 and 6 more")

    def test_a_report_cut_short_says_so(self):
        lines = gpu_facts.measured_lines({"complete": False, "tasks": [measured_task("matmul", median_ms=1.0)]})
        self.assertTrue(lines[1].startswith("INCOMPLETE: tasks measure was stopped before its end"))
        self.assertFalse(any(line.startswith("INCOMPLETE") for line in gpu_facts.measured_lines(
            {"complete": True, "tasks": [measured_task("matmul", median_ms=1.0)]})))

    def test_a_missing_report_is_said_not_raised(self):
        with tempfile.TemporaryDirectory() as d:
            out = subprocess.run([sys.executable, gpu_facts.__file__, "measured", os.path.join(d, "none.json")],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0)
            self.assertTrue(out.stdout.startswith("no report from tasks measure"))


class CommandLine(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, gpu_facts.__file__, *args], capture_output=True, text=True)

    def test_the_commands_run_sh_calls(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, text in (("smi", H200_SMI), ("driver", H200_DRIVER), ("host", HOST_FULL)):
                paths[name] = os.path.join(d, name)
                with open(paths[name], "w") as fh:
                    fh.write(text)
            facts = self.run_tool("facts", paths["smi"], paths["driver"], paths["host"])
            self.assertEqual(facts.returncode, 0, facts.stderr)
            facts_path = os.path.join(d, "facts.json")
            with open(facts_path, "w") as fh:
                fh.write(facts.stdout)
            switches = self.run_tool("switches", facts_path)
            self.assertEqual(switches.stdout.splitlines()[0], "--allow-pageable-host-access")
            self.assertEqual(self.run_tool("budget", "info", "0").stdout.strip(), "20")
            self.assertEqual(self.run_tool("nonsense").returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=1)
