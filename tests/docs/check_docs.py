#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that what the documentation names exists.

Reads README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md under --root and reports:
  - a relative markdown link (or image) whose file does not exist, or whose #anchor names no
    heading of the target markdown file (GitHub's heading ids);
  - a repository path in an inline code span, or in a shell block, that starts with one of the
    repository's top-level folders (include/, sandbox/, python/, tests/, ...) and does not exist
    (a `*` is a glob; a name with <placeholder> or ... is not a path and is skipped);
  - a public header named as `leap/....hpp` that neither include/ nor sandbox/include/ holds;
  - a single file under sandbox/src named by its path: the sandbox's internal sources move between
    folders, so the docs name their folder, or the public header, instead;
  - `leap-sandbox WORD` in code where WORD is not one of the CLI's commands (read from
    sandbox/tools/main.cpp, its deprecated spellings included, and the Command definitions in
    sandbox/tools/);
  - a README that does not open with its two commands (the first two shell blocks, before any
    other section), or whose second command is not a line that .ci/run runs.
Exit status 0 when everything resolves, 1 with one line per problem otherwise, 2 on misuse.

--self-test plants each kind of problem in a scratch repository and checks that every one is
reported (and that a clean one passes), so a checker that stopped seeing them fails too.
Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

TOP_LEVEL = ("include", "sandbox", "python", "tests", "examples", "benchmarks", "docs", "cmake", "tools", "fuzz",
             ".ci")
PATH_RE = re.compile(r"^(?:\./)?(?:%s)/" % "|".join(re.escape(t) for t in TOP_LEVEL))
INTERNAL_SOURCES = "sandbox/src/"
HEADER_RE = re.compile(r"^leap/[A-Za-z0-9_/]+\.hpp$")
LINK_RE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]*(?:\([^()]*\))?[^()\s]*)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1", re.S)
COMMAND_RE = re.compile(r"(?<![\w-])leap-sandbox\s+([A-Za-z][\w-]*)")
FENCE_RE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
SHELL_LANGS = {"sh", "bash", "shell", "console", ""}


def doc_files(root: Path) -> list[Path]:
    files = [root / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    files += sorted((root / "docs").glob("*.md"))
    return [f for f in files if f.is_file()]


def split_fences(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """Prose lines (number, text) and fenced-block lines (number, text, language)."""
    prose, fenced = [], []
    fence: str | None = None
    lang = ""
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence, lang = m.group(1), m.group(2).lower()
            continue
        if fence is not None and line.strip().startswith(fence[0] * len(fence)) and line.strip().strip(fence[0]) == "":
            fence = None
            continue
        (fenced.append((number, line, lang)) if fence is not None else prose.append((number, line)))
    return prose, fenced


def slug(heading: str) -> str:
    """GitHub's id for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LN":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    prose, _ = split_fences(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def cli_commands(root: Path) -> set[str]:
    tools = root / "sandbox" / "tools"
    main = tools / "main.cpp"
    if not main.is_file():
        raise SystemExit(f"check_docs: {main} not found: cannot read the leap-sandbox commands")
    listed = re.search(r"k_commands\s*=\s*\{(.*?)\};", main.read_text(encoding="utf-8"), re.S)
    if not listed:
        raise SystemExit(f"check_docs: no k_commands list in {main}")
    variables = re.findall(r"&\s*leap_cli::(\w+_command)\b", listed.group(1))
    names = set()
    for source in sorted(tools.glob("*.cpp")):
        for variable, name in re.findall(r"\bCommand\s+(\w+_command)\s*\{\s*\"([\w-]+)\"", source.read_text(encoding="utf-8")):
            if variable in variables:
                names.add(name)
    if not names:
        raise SystemExit(f"check_docs: found no command names for {variables} under {tools}")
    # Deprecated spellings the CLI still accepts (k_deprecated_commands): docs may name them to say so.
    deprecated = re.search(r"k_deprecated_commands\s*=\s*\{(.*?)\};", main.read_text(encoding="utf-8"), re.S)
    if deprecated:
        names.update(re.findall(r"\{\s*\"([\w-]+)\"\s*,\s*&leap_cli::", deprecated.group(1)))
    return names


def candidate_paths(code: str) -> list[str]:
    out = []
    for token in re.split(r"[\s=,;]+", code):
        token = token.strip("()[]{}\"'`,;:").rstrip(".")
        if token.endswith("'s"):
            token = token[:-2]
        token = re.sub(r":\d+$", "", token)  # file.cpp:123
        if not token or "<" in token or "..." in token or "$" in token:
            continue
        if PATH_RE.match(token) or HEADER_RE.match(token):
            out.append(token)
    return out


def path_exists(root: Path, token: str) -> bool:
    if HEADER_RE.match(token):
        return any((root / base / token).is_file() for base in ("include", "sandbox/include"))
    token = token[2:] if token.startswith("./") else token
    if any(ch in token for ch in "*?["):
        return bool(glob.glob(str(root / token)))
    return (root / token).exists()


def check_two_commands(root: Path) -> list[str]:
    """The README opens with two one-line shell commands, and CI runs the second as written."""
    readme, ci = root / "README.md", root / ".ci" / "run"
    if not readme.is_file():
        return []
    prose, fenced = split_fences(readme.read_text(encoding="utf-8"))
    second_heading = [n for n, line in prose if line.startswith("## ")][1:2]
    blocks: list[list[tuple[int, str]]] = []
    last = -1
    for number, line, lang in fenced:
        if lang not in ("sh", "bash"):
            continue
        if number != last + 1:
            blocks.append([])
        blocks[-1].append((number, line))
        last = number
    if len(blocks) < 2 or (second_heading and blocks[1][0][0] > second_heading[0]):
        return ["README.md: does not open with its two commands (two shell blocks before the second section)"]
    problems = [f"README.md:{b[0][0]}: the command block holds {len(b)} lines, not one" for b in blocks[:2] if len(b) != 1]
    if ci.is_file():
        command = blocks[1][0][1].strip()
        if command not in (line.strip() for line in ci.read_text(encoding="utf-8").split("\n")):
            problems.append(f"README.md:{blocks[1][0][0]}: the second command is not a line of .ci/run: {command}")
    return problems


def check(root: Path) -> list[str]:
    problems: list[str] = check_two_commands(root)
    commands = cli_commands(root)
    anchor_cache: dict[Path, set[str]] = {}
    for doc in doc_files(root):
        rel = doc.relative_to(root)
        text = doc.read_text(encoding="utf-8")
        prose, fenced = split_fences(text)

        def code_spans() -> list[tuple[int, str]]:
            spans = []
            for number, line in prose:
                spans += [(number, m.group(2)) for m in CODE_SPAN_RE.finditer(line)]
            return spans

        # Links, outside code.
        for number, line in prose:
            bare = CODE_SPAN_RE.sub("", line)
            for m in LINK_RE.finditer(bare):
                target = m.group(1).strip("<>")
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                dest = doc if not file_part else (doc.parent / file_part)
                if not dest.exists():
                    problems.append(f"{rel}:{number}: link to {target}: {file_part} does not exist")
                    continue
                if anchor and dest.suffix == ".md":
                    found = anchor_cache.setdefault(dest.resolve(), anchors(dest))
                    if anchor not in found:
                        problems.append(f"{rel}:{number}: link to {target}: {dest.relative_to(root) if dest.is_relative_to(root) else dest} has no heading #{anchor}")

        # Paths and commands in code: inline spans, and shell blocks.
        code: list[tuple[int, str]] = code_spans()
        code += [(number, line) for number, line, lang in fenced if lang in SHELL_LANGS]
        for number, snippet in code:
            for token in candidate_paths(snippet):
                if not path_exists(root, token):
                    problems.append(f"{rel}:{number}: `{token}` does not exist")
                elif token.startswith(INTERNAL_SOURCES) and (root / token).is_file():
                    problems.append(f"{rel}:{number}: `{token}` is an internal source file, which may move: "
                                    "name its folder, or the public header under sandbox/include")
        for number, snippet in code + [(n, l) for n, l, lang in fenced if lang not in SHELL_LANGS]:
            for name in COMMAND_RE.findall(snippet):
                if name not in commands:
                    problems.append(f"{rel}:{number}: `leap-sandbox {name}`: no such command "
                                    f"(the commands: {', '.join(sorted(commands))})")
    return problems


def self_test() -> int:
    """Plants one problem of each kind and checks each is reported; then checks a clean tree passes."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "sandbox" / "tools").mkdir(parents=True)
        (root / "sandbox" / "tools" / "main.cpp").write_text(
            "constexpr std::array<const leap_cli::Command*, 2> k_commands = {&leap_cli::info_command, &leap_cli::serve_command};\n")
        (root / "sandbox" / "tools" / "cmds.cpp").write_text(
            'const Command info_command{"info", "info", "", run};\nconst Command serve_command{"serve", "serve", "", run};\n')
        (root / "sandbox" / "src" / "compile").mkdir(parents=True)
        (root / "sandbox" / "src" / "compile" / "compiler.cpp").write_text("")
        (root / "include" / "leap").mkdir(parents=True)
        (root / "include" / "leap" / "real.hpp").write_text("")
        (root / "docs").mkdir()
        (root / "docs" / "guide.md").write_text("# A guide\n\n## Real section\n\nText.\n")
        (root / ".ci").mkdir()
        (root / ".ci" / "run").write_text("#!/bin/sh\nmake test\n")
        clean = ("# Project\n\n## Two commands\n\n```sh\nmake\n```\n\n```sh\nmake test\n```\n\n## More\n\n"
                 "See [the guide](docs/guide.md), [its section](docs/guide.md#real-section) and "
                 "[here](#project). `include/leap/real.hpp`, `leap/real.hpp`, `leap-sandbox serve`, `sandbox/src/compile/`.\n\n"
                 "```sh\nleap-sandbox info --json   # docs/guide.md\n```\n")
        (root / "README.md").write_text(clean)
        if check(root):
            print("self-test: a clean tree was reported:", *check(root), sep="\n  ")
            return 1
        planted = {
            "missing file": "[broken](docs/no_such_page.md)",
            "missing anchor": "[bad anchor](docs/guide.md#no-such-section)",
            "missing path": "`tests/no_such_dir/run.sh`",
            "missing header": "`leap/no_such_header.hpp`",
            "unknown command": "`leap-sandbox dance`",
            "internal source file": "`sandbox/src/compile/compiler.cpp`",
            "missing path in a shell block": "\n```sh\nsandbox/no_such_tool --help\n```\n",
        }
        expected = {
            "missing file": "docs/no_such_page.md does not exist",
            "missing anchor": "has no heading #no-such-section",
            "missing path": "`tests/no_such_dir/run.sh` does not exist",
            "missing header": "`leap/no_such_header.hpp` does not exist",
            "unknown command": "`leap-sandbox dance`: no such command",
            "internal source file": "`sandbox/src/compile/compiler.cpp` is an internal source file",
            "missing path in a shell block": "`sandbox/no_such_tool` does not exist",
        }
        failed = 0
        for kind, text in planted.items():
            (root / "CONTRIBUTING.md").write_text("# Contributing\n\n" + text + "\n")
            found = check(root)
            if len(found) != 1 or expected[kind] not in found[0]:
                print(f"self-test: planted {kind} ({text.strip()}): expected one problem with "
                      f"'{expected[kind]}', got {found}")
                failed += 1
        (root / "CONTRIBUTING.md").unlink()
        (root / ".ci" / "run").write_text("#!/bin/sh\nmake check\n")
        found = check(root)
        if len(found) != 1 or "the second command is not a line of .ci/run: make test" not in found[0]:
            print(f"self-test: a README whose second command CI does not run: expected that problem, got {found}")
            failed += 1
        if failed:
            return 1
    print("self-test: every planted problem was reported, and the clean tree passed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository root (default: two levels above this script)")
    parser.add_argument("--self-test", action="store_true", help="check the checker on planted problems")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    root = args.root.resolve()
    files = doc_files(root)
    if not files:
        print(f"check_docs: no documentation found under {root}", file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs: {len(problems)} problem(s) in {len(files)} files", file=sys.stderr)
        return 1
    print(f"check_docs: {len(files)} files, every link, path and leap-sandbox command resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
