#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/task-catalogue.md from `leap-sandbox tasks --json`, or with --check says whether the
file in the tree is what the library would write now (the CTest docs:task_catalogue_current).

    tests/docs/task_catalogue.py --sandbox build/default/sandbox/leap-sandbox --out docs/task-catalogue.md
"""
import argparse
import collections
import json
import subprocess
import sys


def load(sandbox):
    done = subprocess.run([sandbox, "tasks", "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def dtypes(task):
    seen = []
    for p in task["params"]:
        if p.get("kind", "buffer") == "buffer" and p["dtype"] not in seen:
            seen.append(p["dtype"])
    return ", ".join(seen)


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(tasks):
    by_category = collections.defaultdict(list)
    for t in tasks:
        by_category[t["category"]].append(t)
    holdout = sum(1 for t in tasks if t["split"] == "holdout")
    tiers = collections.Counter(t["tier"] for t in tasks)
    out = [
        "# The task catalogue",
        "",
        "Generated from `leap-sandbox tasks --json` by `tests/docs/task_catalogue.py`; do not edit. The",
        "CTest `docs:task_catalogue_current` fails when the library and this page differ (rerun the",
        "command at the top of that script). What each column means: [tasks.md](tasks.md) and",
        "[task-json.md](task-json.md#library-fields).",
        "",
        f"{len(tasks)} tasks in {len(by_category)} categories; {len(tasks) - holdout} train, {holdout} holdout; "
        + ", ".join(f"{tiers[k]} of tier {k}" for k in sorted(tiers)) + ".",
        "",
        "| category | tasks | holdout |",
        "|---|---|---|",
    ]
    for category in sorted(by_category):
        group = by_category[category]
        out.append(f"| [{category}](#{category}) | {len(group)} | "
                   f"{sum(1 for t in group if t['split'] == 'holdout')} |")
    for category in sorted(by_category):
        out += ["", f"## {category}", "", "| task | tier | split | dtypes | semantics | origin |", "|---|---|---|---|---|---|"]
        for t in sorted(by_category[category], key=lambda t: t["name"]):
            provenance = t.get("provenance") or {}
            out.append(f"| `{t['name']}` | {t['tier']} | {t['split']} | {dtypes(t)} | "
                       f"{cell(provenance.get('semantics', ''))} | {cell(provenance.get('origin', ''))} |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox", required=True, help="the leap-sandbox program")
    parser.add_argument("--out", required=True, help="docs/task-catalogue.md")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when they differ")
    args = parser.parse_args()
    text = render(load(args.sandbox))
    if not args.check:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    try:
        with open(args.out, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if current == text:
        print(f"{args.out} is current")
        return 0
    old, new = set(current.splitlines()), set(text.splitlines())
    for line in sorted(new - old)[:10]:
        print(f"missing from {args.out}: {line}")
    for line in sorted(old - new)[:10]:
        print(f"in {args.out} but not in the library: {line}")
    print(f"{args.out} is out of date: tests/docs/task_catalogue.py --sandbox {args.sandbox} --out {args.out}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
