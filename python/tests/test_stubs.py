# SPDX-License-Identifier: Apache-2.0
"""leap/_core.pyi says exactly what the compiled leap._core has: the same names at module level and in
every class, read-only properties where the binding has no setter, and for every function and method
the parameters pybind11 records for it (names, positional or keyword-only, with or without a default;
an overloaded method: the same set of overloads). The stub read is the one beside the imported
module, so under the wheel test this checks the installed copy. mypy's stubtest (python3-mypy)
checks the stub against the module as well."""
import ast
import importlib
import os
import subprocess
import sys

import pytest

import leap
import leap._core as core

STUB = os.path.join(os.path.dirname(core.__file__), "_core.pyi")

# What every extension module has; the stub describes only what the bindings add.
MODULE_ATTRIBUTES = {"__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__"}


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read(), STUB)


def defined_names(body):
    """name -> list of nodes (functions may be overloaded) for the definitions in a module or class body."""
    names = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.setdefault(node.target.id, []).append(node)
    return names


def is_decorated(node, name):
    return any(isinstance(d, ast.Name) and d.id == name for d in node.decorator_list)


def stub_parameters(function):
    """(name, kind, has_default) for a stub function, kind: 'positional' or 'keyword'."""
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    first_default = len(positional) - len(arguments.defaults)
    parameters = [(a.arg, "positional", i >= first_default) for i, a in enumerate(positional)]
    if arguments.vararg:
        parameters.append(("*" + arguments.vararg.arg, "variadic", False))
    parameters += [(a.arg, "keyword", d is not None) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg:
        parameters.append(("**" + arguments.kwarg.arg, "variadic", False))
    return tuple(parameters)


def split_top_level(text):
    """Splits a pybind11 parameter list at the commas outside brackets (types such as
    List[leap._core.Outcome] and defaults such as leap.KernelOrder(by_turn=True, ...) hold commas)."""
    parts, depth, current = [], 0, ""
    for character in text:
        if character in "([{<":
            depth += 1
        elif character in ")]}>":
            depth -= 1
        if character == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += character
    if current.strip():
        parts.append(current.strip())
    return parts


def parse_signature(line, name):
    """(name, kind, has_default) for each parameter of one pybind11 signature line 'name(...) -> T'."""
    assert line.startswith(name + "("), (name, line)
    inner = line[len(name) + 1:line.rindex(") -> ")]
    parameters, keyword_only = [], False
    for part in split_top_level(inner):
        if part == "*":
            keyword_only = True
        elif part.startswith("*"):
            parameters.append((part, "variadic", False))
        else:
            parameter_name = part.split(":", 1)[0].strip()
            parameters.append((parameter_name, "keyword" if keyword_only else "positional", " = " in part))
    return tuple(parameters)


def runtime_signatures(function, name):
    """The set of signatures pybind11 wrote into the docstring (one, or one per overload)."""
    lines = (function.__doc__ or "").splitlines()
    if len(lines) > 1 and lines[1] == "Overloaded function.":
        prefix = ". " + name + "("
        return {parse_signature(line.split(". ", 1)[1], name) for line in lines if prefix in line[:len(prefix) + 4]}
    return {parse_signature(lines[0], name)}


def module_stub():
    return defined_names(stub_tree().body)


def test_the_stub_names_exactly_the_modules_names():
    runtime = {name for name in dir(core) if name not in MODULE_ATTRIBUTES}
    assert set(module_stub()) == runtime


@pytest.mark.parametrize("class_name", sorted(n for n in dir(core) if isinstance(getattr(core, n), type)))
def test_each_class_has_exactly_the_stubs_members(class_name):
    stub = module_stub()[class_name][0]
    assert isinstance(stub, ast.ClassDef)
    members = defined_names(stub.body)
    cls = getattr(core, class_name)
    # Public names only: pybind11 gives every class the same dunders (__getstate__, __ne__, ...).
    runtime = {n for n in vars(cls) if not n.startswith("_")}
    assert {n for n in members if not n.startswith("_")} == runtime
    for name in runtime:
        value = vars(cls)[name]
        node = members[name][0]
        if isinstance(value, property):  # a field: writable in the stub exactly when it has a setter
            writable = isinstance(node, ast.AnnAssign)
            assert writable == (value.fset is not None), f"{class_name}.{name}"
            if not writable:
                assert isinstance(node, ast.FunctionDef) and is_decorated(node, "property"), f"{class_name}.{name}"
        elif isinstance(value, cls):  # an enum member: a class variable of the enum's own type
            assert isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) == f"ClassVar[{class_name}]"
        else:  # a method: static in the stub exactly when it is at run time
            assert isinstance(node, ast.FunctionDef), f"{class_name}.{name}"
            assert is_decorated(node, "staticmethod") == isinstance(value, staticmethod), f"{class_name}.{name}"


def has_constructor(cls):
    """Whether pybind11 binds a constructor (a class made by the core only has none: calling it raises):
    a bound one's docstring is pybind11's signature of it."""
    return (cls.__init__.__doc__ or "").startswith("__init__(")


def callables():
    """(qualified name, runtime object, stub nodes) for every function, method and constructor."""
    found = []
    for name, nodes in module_stub().items():
        node = nodes[0]
        if isinstance(node, ast.FunctionDef):
            found.append((name, getattr(core, name), nodes))
        elif isinstance(node, ast.ClassDef):
            for member, member_nodes in defined_names(node.body).items():
                if member == "__init__" and not has_constructor(getattr(core, name)):
                    continue  # test_a_class_without_a_constructor_says_so_in_the_stub
                if isinstance(member_nodes[0], ast.FunctionDef) and not is_decorated(member_nodes[0], "property") \
                        and (member == "__init__" or not member.startswith("_")):
                    found.append((f"{name}.{member}", getattr(getattr(core, name), member), member_nodes))
    return found


@pytest.mark.parametrize("qualified,function,nodes", callables(), ids=[c[0] for c in callables()])
def test_each_function_takes_the_stubs_parameters(qualified, function, nodes):
    stub = {stub_parameters(node) for node in nodes}
    runtime = runtime_signatures(function, qualified.rsplit(".", 1)[-1])
    if qualified == "KernelOrder.__init__":
        # Bound as a **kwargs constructor that refuses unknown names; the stub spells the names out,
        # which must be exactly the writable fields.
        assert runtime == {(("self", "positional", False), ("**kwargs", "variadic", False))}
        fields = {n for n, v in vars(core.KernelOrder).items() if isinstance(v, property) and v.fset is not None}
        (parameters,) = stub
        assert parameters[0] == ("self", "positional", False)
        assert {p[0] for p in parameters[1:]} == fields and all(p[1:] == ("keyword", True) for p in parameters[1:])
        return
    assert stub == runtime


@pytest.mark.parametrize("class_name", sorted(n for n in dir(core) if isinstance(getattr(core, n), type)
                                               and not has_constructor(getattr(core, n))))
def test_a_class_without_a_constructor_says_so_in_the_stub(class_name):
    cls = getattr(core, class_name)
    with pytest.raises(TypeError, match="No constructor defined"):
        cls()
    # The stub's __init__ takes anything and never returns, so a type checker refuses the call's result.
    (init,) = defined_names(module_stub()[class_name][0].body)["__init__"]
    assert ast.unparse(init.returns) == "NoReturn"
    assert init.args.vararg is not None and init.args.kwarg is not None


def test_a_keyword_the_kernel_order_stub_names_is_accepted_and_another_refused():
    for field in ("by_turn", "by_severity", "tokens_only_when_solved"):
        assert getattr(core.KernelOrder(**{field: True}), field) is True
    with pytest.raises(TypeError, match="has no field 'by_turns'"):
        core.KernelOrder(by_turns=True)


def test_the_stub_and_the_marker_are_installed_beside_the_module():
    package = os.path.dirname(leap.__file__)
    assert os.path.isfile(os.path.join(package, "py.typed"))
    assert os.path.dirname(STUB) == package


def test_mypy_stubtest_finds_no_difference(tmp_path):
    importlib.import_module("mypy.stubtest")  # python3-mypy
    # pybind11 classes have pybind11's metaclass, which no stub can name; stubtest reports that once
    # per class and nothing else about the class itself is allowlisted (its members still are checked).
    # `import leap` gives each class a __signature__ for inspect (leap/_signatures.py), which is no
    # part of the binding.
    classes = [n for n in dir(core) if isinstance(getattr(core, n), type)]
    entries = [f"leap._core.{n}" for n in classes]
    entries += [f"leap._core.{n}.__signature__" for n in classes if "__signature__" in vars(getattr(core, n))]
    allowlist = tmp_path / "allowlist"
    allowlist.write_text("".join(entry + "\n" for entry in entries))
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(core.__file__)))
    run = subprocess.run([sys.executable, "-m", "mypy.stubtest", "leap._core", "--allowlist", str(allowlist)],
                         capture_output=True, text=True, env=environment, cwd=str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
