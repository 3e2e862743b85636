"""The installed package is typed (PEP 561) and the stub of the compiled module is complete:
every public name of ``zarrox._core`` and every public member of its classes is declared in
``zarrox/_core.pyi``, with the parameters the compiled functions take. (mypy itself runs once,
from tests/run.sh: tests/typecheck.py.)"""

from __future__ import annotations

import ast
import inspect
from importlib import resources

import pytest

from zarrox import _core

STUB = resources.files("zarrox") / "_core.pyi"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text())


def declared(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def public(obj: object) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_the_installed_package_ships_its_marker_and_stub() -> None:
    assert (resources.files("zarrox") / "py.typed").is_file()
    assert STUB.is_file()


def test_stub_declares_every_public_name_of_the_module() -> None:
    in_stub = declared(stub_tree().body)
    missing = public(_core) - set(in_stub)
    assert not missing, f"zarrox/_core.pyi lacks {sorted(missing)}"
    assert "__version__" in in_stub
    extra = {n for n in in_stub if not n.startswith("_")} - public(_core)
    assert not extra, f"zarrox/_core.pyi declares what _core does not have: {sorted(extra)}"


CLASSES = sorted(n for n in public(_core) if isinstance(getattr(_core, n), type))


@pytest.mark.parametrize("name", CLASSES)
def test_stub_declares_every_member_of_each_class(name: str) -> None:
    node = declared(stub_tree().body)[name]
    assert isinstance(node, ast.ClassDef)
    members = declared(node.body)
    cls = getattr(_core, name)
    missing = public(cls) - set(members)
    assert not missing, f"{name} in zarrox/_core.pyi lacks {sorted(missing)}"
    assert not {n for n in members if not n.startswith("_")} - public(cls)


def _parameters(node: ast.FunctionDef) -> list[str]:
    names = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    return [n for n in names if n not in ("self", "cls")]


def _functions() -> list[tuple[str, object, ast.FunctionDef]]:
    tree = declared(stub_tree().body)
    found: list[tuple[str, object, ast.FunctionDef]] = []
    for name, node in tree.items():
        obj = getattr(_core, name, None)
        if isinstance(node, ast.FunctionDef):
            found.append((name, obj, node))
        elif isinstance(node, ast.ClassDef):
            for member, sub in declared(node.body).items():
                if isinstance(sub, ast.FunctionDef) and not any(
                    isinstance(d, ast.Name) and d.id == "property" for d in sub.decorator_list
                ):
                    target = obj if member == "__new__" else getattr(obj, member, None)
                    found.append((f"{name}.{member}", target, sub))
    return found


@pytest.mark.parametrize(
    ("name", "obj", "node"), _functions(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_stub_parameters_are_those_the_compiled_functions_take(
    name: str, obj: object, node: ast.FunctionDef
) -> None:
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        pytest.skip(f"{name} has no text signature")
    want = [p for p in signature.parameters if p not in ("self", "cls", "$self", "$cls")]
    assert _parameters(node) == want, name
