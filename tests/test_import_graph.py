"""The import graph of the zarrox package: no module imports one that imports it back
(directly or through others, counting imports inside functions), and the metadata modules,
which parse documents, never import the store layer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "zarrox"


def _module_name(path: Path) -> str:
    parts = ["zarrox", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The zarrox modules ``path`` imports when it runs: at module level or inside functions,
    leaving out imports made only for type checkers."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # `from zarrox.nodes import create` imports the module zarrox.nodes.create
            found.update(f"{base}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    # a module imports its package (e.g. zarrox) first: that edge is Python's, not a choice
    return {m for m in found if m in modules and m != name and not name.startswith(m + ".")}


def import_graph() -> dict[str, set[str]]:
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    modules = {_module_name(p) for p in files}
    return {_module_name(p): _imports(p, modules) for p in files}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(found)


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    # cli imports the verifier inside its `verify` command
    assert "zarrox.verify" in graph["zarrox.cli"]
    assert "zarrox.nodes.discover" in graph["zarrox.api"]


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_zarrox_modules() -> None:
    assert cycles(import_graph()) == []


def test_array_reaches_its_views_without_importing_them() -> None:
    """Array.spec / async_array / to_dask call builders that their modules register, and
    those modules import Array, not the other way round."""
    graph = import_graph()
    for owner in ("zarrox.asynchronous", "zarrox.dask", "zarrox.tensorstore_spec"):
        assert owner not in graph["zarrox.array"], owner
    assert "zarrox.array" in graph["zarrox.asynchronous"]
    assert "zarrox.array" in graph["zarrox.dask"]
    assert "zarrox.array" in graph["zarrox.tensorstore_spec.driver"]


def test_metadata_never_imports_the_store_layer() -> None:
    graph = import_graph()
    offenders = {
        module: sorted(
            m for m in imported if m == "zarrox.storage" or m.startswith("zarrox.storage.")
        )
        for module, imported in graph.items()
        if module.startswith("zarrox.metadata")
    }
    assert {m: i for m, i in offenders.items() if i} == {}


def test_nodes_and_objects_do_not_import_the_public_front() -> None:
    graph = import_graph()
    for module in ("zarrox.array", "zarrox.group", "zarrox.nodes.create", "zarrox.nodes.discover"):
        assert "zarrox.api" not in graph[module], module


if __name__ == "__main__":
    for cycle in cycles(import_graph()):
        print(" <-> ".join(cycle))
