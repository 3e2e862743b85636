"""The import graph of the zarrox package: imports point one way, down the layers of
:data:`LAYERS` (integrations -> user API -> nodes -> storage and metadata -> core), and no
module imports one that imports it back (directly or through others, counting imports inside
functions and those made only for type checkers)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "zarrox"
CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"


def _module_name(path: Path) -> str:
    parts = ["zarrox", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str], *, type_checking: bool = True) -> set[str]:
    """The zarrox modules ``path`` imports: at module level, inside functions and (unless
    ``type_checking`` is False) under ``if TYPE_CHECKING:``."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node) and not type_checking:
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


def import_graph(*, type_checking: bool = True) -> dict[str, set[str]]:
    """Module -> the zarrox modules it imports (see :func:`_imports`)."""
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    modules = {_module_name(p) for p in files}
    return {_module_name(p): _imports(p, modules, type_checking=type_checking) for p in files}


CORE, STORAGE_METADATA, NODES, USER_OBJECTS, USER_FRONT, INTEGRATIONS, PACKAGE_FRONT = range(7)
LAYER_NAMES = (
    "core",
    "storage and metadata",
    "nodes",
    "user API: arrays and groups",
    "user API: front doors",
    "integrations",
    "package",
)

#: Every module of the package and its layer. A module imports modules of its own layer or
#: of layers below. A new module must be placed here (test_every_module_has_a_layer).
#: The user API is two layers: arrays and groups (with their awaitable and dask forms), and
#: the front doors over them (zarrox.api's functions, their awaitable forms, and the
#: TensorStore views, which ``zarrox.open(spec)`` answers). The TensorStore spec documents
#: (parsing specs, schemas, chunk layouts, index transforms, the drivers' metadata, the spec
#: of an array) describe a node as the metadata modules do, so they sit with the nodes.
LAYERS: dict[str, int] = {
    # core: the Rust extension's companions, importing nothing above them
    "zarrox.errors": CORE,
    "zarrox.config": CORE,
    "zarrox.staging": CORE,
    "zarrox._progress": CORE,
    "zarrox._post_import": CORE,
    "zarrox.storage.replay": CORE,
    # storage and metadata
    "zarrox.storage": STORAGE_METADATA,
    "zarrox.storage.base": STORAGE_METADATA,
    "zarrox.storage.local": STORAGE_METADATA,
    "zarrox.storage.memory": STORAGE_METADATA,
    "zarrox.storage.served": STORAGE_METADATA,
    "zarrox.storage.zip": STORAGE_METADATA,
    "zarrox.storage.object": STORAGE_METADATA,
    "zarrox.storage.zarr_python": STORAGE_METADATA,
    "zarrox.storage.resolve": STORAGE_METADATA,
    "zarrox.storage.bridge": STORAGE_METADATA,
    "zarrox.storage.options": STORAGE_METADATA,
    "zarrox.storage.references": STORAGE_METADATA,
    "zarrox.storage.zarr_adapter": STORAGE_METADATA,
    "zarrox.metadata": STORAGE_METADATA,
    "zarrox.metadata._checks": STORAGE_METADATA,
    "zarrox.metadata.chunk_grid": STORAGE_METADATA,
    "zarrox.metadata.codec_scalars": STORAGE_METADATA,
    "zarrox.metadata.codecs": STORAGE_METADATA,
    "zarrox.metadata.consolidated": STORAGE_METADATA,
    "zarrox.metadata.description": STORAGE_METADATA,
    "zarrox.metadata.draft_v3": STORAGE_METADATA,
    "zarrox.metadata.dtypes": STORAGE_METADATA,
    "zarrox.metadata.dtypes.base": STORAGE_METADATA,
    "zarrox.metadata.dtypes.fixed": STORAGE_METADATA,
    "zarrox.metadata.dtypes.floats": STORAGE_METADATA,
    "zarrox.metadata.dtypes.numeric": STORAGE_METADATA,
    "zarrox.metadata.dtypes.registry": STORAGE_METADATA,
    "zarrox.metadata.dtypes.struct": STORAGE_METADATA,
    "zarrox.metadata.dtypes.time": STORAGE_METADATA,
    "zarrox.metadata.dtypes.typestr": STORAGE_METADATA,
    "zarrox.metadata.dtypes.v2_json": STORAGE_METADATA,
    "zarrox.metadata.dtypes.variable": STORAGE_METADATA,
    "zarrox.metadata.v1": STORAGE_METADATA,
    "zarrox.metadata.v2": STORAGE_METADATA,
    "zarrox.metadata.v2_codecs": STORAGE_METADATA,
    "zarrox.metadata.v3": STORAGE_METADATA,
    "zarrox.codecs": STORAGE_METADATA,
    "zarrox.codecs.numcodecs": STORAGE_METADATA,
    "zarrox.pickle_codec": STORAGE_METADATA,
    "zarrox.indexing": STORAGE_METADATA,
    "zarrox.values": STORAGE_METADATA,
    "zarrox.transfer": STORAGE_METADATA,
    "zarrox.attributes": STORAGE_METADATA,
    # nodes: reading, creating and writing nodes' metadata; TensorStore spec documents
    "zarrox.nodes": NODES,
    "zarrox.nodes.chunks": NODES,
    "zarrox.nodes.create": NODES,
    "zarrox.nodes.like": NODES,
    "zarrox.nodes.modes": NODES,
    "zarrox.nodes.place": NODES,
    "zarrox.nodes.plans": NODES,
    "zarrox.nodes.rectilinear": NODES,
    "zarrox.nodes.sharding": NODES,
    "zarrox.nodes.v2_create": NODES,
    "zarrox.nodes.write_hierarchy": NODES,
    "zarrox.nodes.discover": NODES,
    "zarrox.nodes.node": NODES,
    "zarrox.tensorstore_spec._json": NODES,
    "zarrox.tensorstore_spec.index_space": NODES,
    "zarrox.tensorstore_spec.kvstore": NODES,
    "zarrox.tensorstore_spec.of_array": NODES,
    "zarrox.tensorstore_spec.schema": NODES,
    "zarrox.tensorstore_spec.spec": NODES,
    "zarrox.tensorstore_spec.units": NODES,
    "zarrox.tensorstore_spec.zarr2": NODES,
    "zarrox.tensorstore_spec.zarr3": NODES,
    # user API: arrays and groups, their awaitable and dask forms, copying hierarchies
    "zarrox.async_node": USER_OBJECTS,
    "zarrox.array_dask": USER_OBJECTS,
    "zarrox.array_info": USER_OBJECTS,
    "zarrox.array": USER_OBJECTS,
    "zarrox.transactions": USER_OBJECTS,
    "zarrox.group": USER_OBJECTS,
    "zarrox.hierarchy": USER_OBJECTS,
    # user API: the front doors (opening and creating by store, path, URL or spec)
    "zarrox.tensorstore_spec": USER_FRONT,
    "zarrox.tensorstore_spec.driver": USER_FRONT,
    "zarrox.tensorstore_spec.store_io": USER_FRONT,
    "zarrox.tensorstore_spec.view": USER_FRONT,
    "zarrox.api": USER_FRONT,
    "zarrox.batching": USER_FRONT,
    "zarrox.api.asynchronous": USER_FRONT,
    "zarrox.api.synchronous": USER_FRONT,
    "zarrox.asynchronous": USER_FRONT,
    # integrations: other libraries and tools over the user API
    "zarrox.pipeline": INTEGRATIONS,
    "zarrox.dask": INTEGRATIONS,
    "zarrox.xarray": INTEGRATIONS,
    "zarrox.cli": INTEGRATIONS,
    "zarrox.convert": INTEGRATIONS,
    "zarrox.verify": INTEGRATIONS,
    # the package: the public names
    "zarrox": PACKAGE_FRONT,
}


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """The imports of ``graph`` that point to a higher layer, as ``"a [layer] -> b [layer]"``."""
    return sorted(
        f"{a} [{LAYER_NAMES[layers[a]]}] -> {b} [{LAYER_NAMES[layers[b]]}]"
        for a, imported in graph.items()
        for b in imported
        if layers[b] > layers[a]
    )


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


def test_the_graph_sees_imports_inside_functions_and_for_type_checkers() -> None:
    graph = import_graph()
    # cli imports the verifier inside its `verify` command
    assert "zarrox.verify" in graph["zarrox.cli"]
    assert "zarrox.nodes.discover" in graph["zarrox.api"]
    # array.py imports Spec (the return type of Array.spec) only for type checkers
    assert "zarrox.tensorstore_spec.spec" in graph["zarrox.array"]
    assert "zarrox.tensorstore_spec.spec" not in import_graph(type_checking=False)["zarrox.array"]


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_zarrox_modules() -> None:
    """Counting imports inside functions and those made only for type checkers."""
    assert cycles(import_graph()) == []


def test_every_module_has_a_layer() -> None:
    modules = set(import_graph())
    assert sorted(modules - set(LAYERS)) == []
    assert sorted(set(LAYERS) - modules) == []  # no stale entries


def test_upward_imports_are_found() -> None:
    layers = {"low": CORE, "mid": NODES, "high": USER_FRONT}
    graph = {"low": {"high"}, "mid": {"low", "mid2"}, "mid2": set(), "high": {"mid"}}
    assert upward_imports(graph, {**layers, "mid2": NODES}) == [
        "low [core] -> high [user API: front doors]"
    ]
    assert upward_imports({"high": {"mid"}, "mid": {"low"}}, layers) == []


def test_imports_point_down_the_layers() -> None:
    """Every import (module level, in a function, for type checkers) goes to the importer's
    own layer or one below it."""
    assert upward_imports(import_graph(), LAYERS) == []


def test_array_reaches_its_views_without_a_registry() -> None:
    """Array.async_array, .spec() and .to_dask() construct what they return from modules at
    or below Array's layer; the modules that wrap arrays import array.py, not the reverse."""
    graph = import_graph()
    for higher in ("zarrox.api.asynchronous", "zarrox.dask", "zarrox.tensorstore_spec.view"):
        assert higher not in graph["zarrox.array"], higher
        assert "zarrox.array" in graph[higher], higher
    assert {"zarrox.async_node", "zarrox.array_dask"} <= graph["zarrox.array"]
    assert "zarrox.tensorstore_spec.of_array" in graph["zarrox.array"]
    source = (PACKAGE / "array.py").read_text()
    assert "register_view" not in source and "_VIEWS" not in source


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
    graph = import_graph()
    for cycle in cycles(graph):
        print("cycle:", " <-> ".join(cycle))
    for line in upward_imports(graph, {**LAYERS, **dict.fromkeys(set(graph) - set(LAYERS), 0)}):
        print("upward:", line)


def documented_layers(heading: str) -> list[tuple[str, list[str]]]:
    """The layers CONTRIBUTING.md's "Layers" section lists after the line starting with
    ``heading``, bottom first: (name, the modules it names in backticks)."""
    text = CONTRIBUTING.read_text()
    section = text[text.index("## Layers") :]
    section = section[: section.index("\n## ", 3)]
    part = section[section.index(heading) :].split("\n\n", 2)[1]
    items = re.split(r"^\d+\. ", part, flags=re.M)[1:]
    out = []
    for item in items:
        name = re.match(r"\*\*(.+?)\*\*", item)
        assert name is not None, item
        out.append((name.group(1), re.findall(r"`([A-Za-z_.]+)`", item)))
    return out


def test_the_documented_layers_are_these() -> None:
    """CONTRIBUTING.md names the layers of :data:`LAYERS` in their order, and each module it
    names in a layer is in that layer here."""
    layers = documented_layers("The Python package")
    assert [name for name, _ in layers] == list(LAYER_NAMES)
    for layer, (_, modules) in enumerate(layers):
        for m in modules:
            full = "zarrox" if m in ("zarrox", "__init__") else f"zarrox.{m}"
            assert LAYERS.get(full) == layer, (m, LAYER_NAMES[layer], LAYERS.get(full))
