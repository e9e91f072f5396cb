#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Each internal protocol spells its keys in one codec, and each shared helper is defined once.

For every codec below, the string values it names (its `constexpr const char* x = "value";` and
`std::string_view x = "value";` constants) must not appear as string literals in the files that
speak that protocol: they use the codec's names instead. Comments are ignored. Exit 1 on a finding,
naming the file, the line and the codec the literal belongs to.
"""
import pathlib
import re
import shutil
import sys
import tempfile


def check(ROOT):
    """Every finding under ROOT, as lines of text."""
    SRC = ROOT / "sandbox" / "src"

    # codec -> (files that speak it, literals a file may keep: values some other meaning shares)
    CODECS = {
        "runner_pipe/evaluation_reply.cpp": (["evaluation/gpu_harness.cpp", "evaluation/gpu_runner_loop.cpp",
                                           "evaluation/runner_reply.cpp", "evaluation/evaluator.cpp"], set()),
        "runner_pipe/evaluation_request.cpp": (["evaluation/gpu_harness.cpp", "evaluation/gpu_runner_loop.cpp",
                                             "evaluation/evaluator.cpp"], set()),
        "runner_pipe/runner_control.cpp": (["evaluation/gpu_runner_loop.cpp", "evaluation/gpu_runner.cpp",
                                         "evaluation/evaluator.cpp", "evaluation/driver_probe.cpp"], set()),
        "runner_pipe/runner_control.hpp": (["evaluation/gpu_runner_loop.cpp", "evaluation/gpu_runner.cpp",
                                         "evaluation/evaluator.cpp", "runner_pipe/evaluation_reply.cpp"], set()),
        "runner_pipe/runner_stages.hpp": (["evaluation/gpu_harness.cpp", "evaluation/gpu_runner_loop.cpp",
                                        "evaluation/gpu_runner.cpp", "evaluation/evaluator.cpp",
                                        "evaluation/runner_reply.cpp"], set()),
        "fleet/fleet_fields.hpp": ([str(p.relative_to(SRC)) for p in sorted((SRC / "fleet").glob("*.cpp"))],
                                   # fleet_auth.cpp's signed kind labels are "request" and "reply"
                                   {"request", "reply"}),
        "serve/request_codec.hpp": (["serve/request_handler.cpp", "serve/request_codec.cpp",
                                        "fleet/fleet_client.cpp", "fleet/fleet_member.cpp"],
                                       # an info result's "arch" is a result key, not the request's
                                       {"arch"}),
    }
    CONSTANT = re.compile(r'(?:constexpr\s+(?:const\s+char\s*\*|std::string_view)|\bconst\s+char\s*\*)\s*'
                          r'(?:const\s+)?\w+\s*=\s*"([^"\\]+)"')
    ENUM_NAME = re.compile(r'case\s+[\w:]+:\s*return\s+"')
    LITERAL = re.compile(r'(?<![\w\\])"((?:[^"\\]|\\.)*)"')


    def code_of(line):
        """The line without a trailing // comment (outside string literals)."""
        out, in_string, i = [], False, 0
        while i < len(line):
            c = line[i]
            if in_string:
                out.append(c)
                if c == "\\" and i + 1 < len(line):
                    out.append(line[i + 1])
                    i += 1
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
                out.append(c)
            elif line.startswith("//", i):
                break
            else:
                out.append(c)
            i += 1
        return "".join(out)


    def raw_strings_removed(text):
        return re.sub(r'R"\((.*?)\)"', '""', text, flags=re.S)


    findings = []
    for codec, (speakers, shared) in CODECS.items():
        values = set(CONSTANT.findall((SRC / codec).read_text())) - shared
        if not values:
            findings.append(f"{codec}: no key constants found (has the codec moved?)")
            continue
        for speaker in speakers:
            path = SRC / speaker
            if path == SRC / codec:
                continue
            if not path.exists():
                findings.append(f"{speaker}: named as a speaker of {codec} but missing")
                continue
            text = raw_strings_removed(path.read_text())
            for number, line in enumerate(text.splitlines(), 1):
                if "not a protocol key" in line:  # a word that equals a key, said so where it is used
                    continue
                for literal in LITERAL.findall(code_of(line)):
                    # An enum's to_string (`case X::ok: return "ok";`) names a value, not a key.
                    if literal in values and CONSTANT.search(line) is None and not ENUM_NAME.search(line):
                        findings.append(f"sandbox/src/{speaker}:{number}: \"{literal}\" is a key of {codec}; use its name")

    # Frame kinds: the letters live in frames.hpp alone.
    for path in sorted((SRC / "runner_pipe").glob("*")) + sorted((SRC / "serve").glob("*")) + sorted((SRC / "evaluation").glob("gpu_runner*")):
        if path.name.startswith("frames."):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"'[QSR]'", code_of(line)):
                findings.append(f"{path.relative_to(ROOT)}:{number}: a frame letter outside frames.hpp; use FrameKind")

    # Helpers with one definition each.
    HELPERS = {
        "is_identifier": r"\bbool\s+is_identifier\s*\(",
        "UniqueFd": r"\bclass\s+UniqueFd\b",
        "read_regular": r"^\s*(?:inline\s+)?[\w:<>]+\s+read_regular\w*\s*\([^;]*$",
        "splitmix": r"\bstd::uint64_t\s+splitmix\s*\(",
        "shortened": r"\bstd::string\s+shortened\s*\(",
    }
    sources = [p for p in (ROOT / "sandbox").rglob("*") if p.suffix in (".hpp", ".cpp")]
    for name, pattern in HELPERS.items():
        where = [f"{p.relative_to(ROOT)}:{n}" for p in sources
                 for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(pattern, code_of(line))]
        if len(where) > 1:
            findings.append(f"{name} is defined {len(where)} times: {', '.join(where)}")
        elif not where:  # renamed or moved: the check must follow it, or it would pass by finding nothing
            findings.append(f"{name}: no definition found; update HELPERS in this script")

    return findings


def self_test():
    """Plants one of each problem in a copy of the sources; each must be reported."""
    real = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        shutil.copytree(real / "sandbox" / "src", root / "sandbox" / "src")
        plants = {
            "fleet/fleet_client.cpp": 'auto planted_field = std::string("session");\n',
            "evaluation/gpu_harness.cpp": 'auto planted_stage = std::string("reload");\n',
            "serve/request_handler.cpp": 'auto planted_key = std::string("ok");\n',
            "evaluation/gpu_runner.cpp": "const char planted_frame = 'Q';\n",
            "common/fd_io.cpp": "bool is_identifier(const char*) { return false; }\n",
        }
        for name, line in plants.items():
            with open(root / "sandbox" / "src" / name, "a") as f:
                f.write(line)
        findings = "\n".join(check(root))
        expected = ['fleet_client.cpp', '"session" is a key of fleet/fleet_fields.hpp',
                    '"reload" is a key of runner_pipe/runner_stages.hpp', '"ok" is a key of serve/request_codec.hpp',
                    "gpu_runner.cpp", "a frame letter outside frames.hpp", "is_identifier is defined 2 times"]
        missed = [e for e in expected if e not in findings]
        clean = check(real)
    for m in missed:
        print(f"self-test: a planted problem was not reported: {m}")
    for c in clean:
        print(f"self-test: the real tree is not clean: {c}")
    print(f"protocol spelling self-test: {len(missed)} planted problem(s) missed")
    return 1 if missed or clean else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    found = check(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve())
    for f in found:
        print(f)
    print(f"protocol spelling: {len(found)} finding(s)")
    sys.exit(1 if found else 0)
