"""The module graph of the Rust crate (``rust/``): paths point one way, down the layers of
:data:`RUST_LAYERS` (bindings -> front doors -> batch -> engine -> cache -> codecs -> stores
-> the array model -> foundations), and no module (file) uses one that uses it back.

Read from the sources: every ``crate::...`` and ``super::...`` path outside comments and
outside ``#[cfg(test)]`` modules is a use of the module it names (the longest prefix of the
path that is a module file)."""

from __future__ import annotations

import re
from pathlib import Path

from test_import_graph import cycles, documented_layers

RUST = Path(__file__).resolve().parents[1] / "rust"

(
    FOUNDATIONS,
    MODEL,
    STORES,
    CODECS,
    CACHE,
    ENGINE,
    BATCH,
    FRONT_DOORS,
    TOOLS,
    BINDINGS,
) = range(10)
RUST_LAYER_NAMES = (
    "foundations",
    "array model",
    "stores",
    "codecs",
    "cache",
    "engine",
    "batch",
    "front doors",
    "tools",
    "bindings",
)

#: Every top-level module of the crate and its layer; a module uses modules of its own layer
#: or of layers below. Stores sit below the codecs: a codec's partial decoder asks for byte
#: ranges (``store::ByteRange``) and knows no store. The chunk grids and the codecs both
#: hand complete configurations to Python (``members``), which is why that is a foundation.
RUST_LAYERS: dict[str, int] = {
    "error": FOUNDATIONS,
    "alloc": FOUNDATIONS,
    "fork": FOUNDATIONS,
    "pool": FOUNDATIONS,
    "members": FOUNDATIONS,
    "dtype": MODEL,
    "grid": MODEL,
    "indexing": MODEL,
    "region": MODEL,
    "order": MODEL,
    "selection": MODEL,
    "store": STORES,
    "codec": CODECS,
    "cache": CACHE,
    "engine": ENGINE,
    "batch": BATCH,
    "array": FRONT_DOORS,
    "pipeline": FRONT_DOORS,
    "floors": TOOLS,
    "python": BINDINGS,
}

_PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
_GROUP = re.compile(r"\b(crate|super)::((?:[a-z_][a-z0-9_]*::)*)\{([^}]*)\}")


def _module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(RUST).with_suffix("").parts
    if parts[-1] == "mod":
        parts = parts[:-1]
    return () if parts == ("lib",) else parts


def _strip(text: str) -> str:
    """The code of ``text`` without comments and without ``#[cfg(test)]`` modules."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    out: list[str] = []
    rest = text
    marker = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{")
    while (m := marker.search(rest)) is not None:
        out.append(rest[: m.start()])
        depth, i = 1, m.end()
        while depth and i < len(rest):
            depth += {"{": 1, "}": -1}.get(rest[i], 0)
            i += 1
        rest = rest[i:]
    out.append(rest)
    return "".join(out)


def _resolve(
    modules: set[tuple[str, ...]], base: tuple[str, ...], names: list[str]
) -> tuple[str, ...] | None:
    """The module a path names: the longest prefix of ``base + names`` that is a module."""
    for n in range(len(names), 0, -1):
        candidate = base + tuple(names[:n])
        if candidate in modules:
            return candidate
    return None


def _uses(
    module: tuple[str, ...], code: str, modules: set[tuple[str, ...]]
) -> set[tuple[str, ...]]:
    """The modules that ``module``'s ``code`` uses (not itself, nor its ancestors, whose
    items a child module shares)."""
    uses: set[tuple[str, ...]] = set()

    def add(kind: str, names: list[str]) -> None:
        # a file's `super` is its parent module (a mod.rs file is its folder's module)
        base = () if kind == "crate" else module[:-1]
        while names and names[0] == "super":
            base, names = base[:-1], names[1:]
        found = _resolve(modules, base, names)
        if found is not None and module[: len(found)] != found:
            uses.add(found)

    for m in _GROUP.finditer(code):
        prefix = [p for p in m.group(2).split("::") if p]
        for item in m.group(3).split(","):
            path = item.strip().split(" as ")[0].strip()
            if path and path not in ("self", "*"):
                add(m.group(1), [*prefix, *path.split("::")])
        add(m.group(1), prefix)
    for m in _PATH.finditer(code):
        add(m.group(1), [p for p in m.group(2).split("::") if p])
    return uses


def rust_module_graph() -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module (its path below the crate root) -> the modules it uses."""
    files = {
        _module_of(p): p for p in RUST.rglob("*.rs") if p.name != "tests.rs" and _module_of(p) != ()
    }
    modules = set(files)
    return {m: _uses(m, _strip(path.read_text()), modules) for m, path in files.items()}


def _name(module: tuple[str, ...]) -> str:
    return "::".join(module)


def test_the_graph_reads_paths_and_groups() -> None:
    graph = rust_module_graph()
    # rust/codec/array_to_bytes/sharding.rs: `use crate::codec::partial::{PartMap, ...}`
    assert ("codec", "partial") in graph["codec", "array_to_bytes", "sharding"]
    # rust/codec/registry.rs: `use super::array_to_bytes::{bytes, packbits, sharding, vlen}`
    assert ("codec", "array_to_bytes", "sharding") in graph["codec", "registry"]
    # rust/python/array.rs uses the bindings' batch outcomes
    assert ("python", "batch_io") in graph["python", "array"]
    # test modules are not counted: the codec tests' helpers are used only from tests
    assert all(("codec", "tests") not in uses for uses in graph.values())


def test_every_top_level_module_has_a_layer() -> None:
    tops = {m[0] for m in rust_module_graph()}
    assert sorted(tops - set(RUST_LAYERS)) == []
    assert sorted(set(RUST_LAYERS) - tops) == []


def test_rust_paths_point_down_the_layers() -> None:
    upward = sorted(
        f"{_name(a)} [{RUST_LAYER_NAMES[RUST_LAYERS[a[0]]]}] -> "
        f"{_name(b)} [{RUST_LAYER_NAMES[RUST_LAYERS[b[0]]]}]"
        for a, uses in rust_module_graph().items()
        for b in uses
        if RUST_LAYERS[b[0]] > RUST_LAYERS[a[0]]
    )
    assert upward == []


def test_no_cycle_among_rust_modules() -> None:
    """Neither among files (``python::buffers`` and ``python::stores`` once used each other)
    nor among the top-level modules."""
    graph = rust_module_graph()
    by_file = {_name(a): {_name(b) for b in uses} for a, uses in graph.items()}
    assert cycles(by_file) == []
    top: dict[str, set[str]] = {}
    for a, uses in graph.items():
        top.setdefault(a[0], set()).update(b[0] for b in uses if b[0] != a[0])
    assert cycles(top) == []


def test_codecs_are_grouped_by_kind() -> None:
    """One folder per kind of codec (as the v3 specification sorts them) and one for
    numcodecs'; the codec folder's own files are what every codec shares, and TensorStore's
    partial chains (``chain_spec``)."""
    codec = RUST / "codec"
    kinds = {p.name for p in codec.iterdir() if p.is_dir()}
    assert kinds == {"array_to_array", "array_to_bytes", "bytes_to_bytes", "numcodecs"}
    shared = {p.stem for p in codec.glob("*.rs")}
    assert shared == {
        "mod",
        "chain_rules",
        "chain_spec",
        "checksum",
        "complete",
        "config",
        "partial",
        "registry",
        "typed",
    }


def test_the_documented_layers_are_these() -> None:
    """CONTRIBUTING.md names the layers of :data:`RUST_LAYERS` in their order, with the
    top-level modules of each."""
    layers = documented_layers("The Rust crate")
    assert [name for name, _ in layers] == list(RUST_LAYER_NAMES)
    for layer, (_, modules) in enumerate(layers):
        assert sorted(modules) == sorted(m for m, n in RUST_LAYERS.items() if n == layer)
