"""Rectilinear chunk grids (the ``rectilinear`` chunk grid extension of Zarr v3), and the v3
``chunk_key_encoding`` (:func:`parse_chunk_key_encoding`, whose names, separators and defaults
are the Rust core's, ``rust/grid.rs``).

A dimension is declared by one integer (a step repeated over the axis, as a regular grid)
or by explicit edge lengths, written as integers and ``[edge, count]`` run-length pairs. The
edges are kept here as runs, so a dimension of many equal chunks never expands; the answers
(chunk counts, offsets, data sizes, how a resize grows the edges) are zarr-python 3.4's.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zarrox import _core
from zarrox.errors import MetadataError, UnsupportedError

#: One dimension: a step (int) or explicit edges as ``(edge, count)`` runs, adjacent
#: equal edges merged.
DimSpec = int | tuple[tuple[int, int], ...]


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _positive(x: object, what: str, where: str) -> int:
    if not _is_int(x) or x < 1:  # type: ignore[operator]
        raise MetadataError(f"{where}{what}: must be a positive integer, got {x!r}")
    return int(x)  # type: ignore[call-overload]


def _merged(pairs: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    runs: list[tuple[int, int]] = []
    for edge, count in pairs:
        if runs and runs[-1][0] == edge:
            runs[-1] = (edge, runs[-1][1] + count)
        else:
            runs.append((edge, count))
    return tuple(runs)


@dataclass(frozen=True)
class RectilinearGrid:
    """Per dimension, a step or explicit edges as runs (see :data:`DimSpec`)."""

    dims: tuple[DimSpec, ...]

    # ---- JSON --------------------------------------------------------------------------

    @classmethod
    def from_json(cls, cfg: object, shape: Sequence[int], where: str) -> RectilinearGrid:
        """Validate a ``rectilinear`` grid's configuration against the array's shape."""
        label = "chunk_grid.configuration"
        if not isinstance(cfg, Mapping):
            raise MetadataError(f"{where}{label}: must be an object, got {cfg!r}")
        extra = sorted(str(k) for k in cfg if k not in ("kind", "chunk_shapes"))
        if extra:
            raise MetadataError(f"{where}{label}: unknown member(s) {extra}")
        if cfg.get("kind") != "inline":
            raise MetadataError(
                f"{where}{label}.kind: only 'inline' is supported, got {cfg.get('kind')!r}"
            )
        shapes = cfg.get("chunk_shapes")
        if not isinstance(shapes, list | tuple):
            raise MetadataError(f"{where}{label}.chunk_shapes: must be a list, got {shapes!r}")
        if len(shapes) != len(shape):
            raise MetadataError(
                f"{where}{label}.chunk_shapes: has {len(shapes)} dimension(s), "
                f"shape has {len(shape)}"
            )
        dims: list[DimSpec] = []
        for d, spec in enumerate(shapes):
            what = f"{label}.chunk_shapes[{d}]"
            if not isinstance(spec, list | tuple):
                dims.append(_positive(spec, what, where))
                continue
            if not spec:
                raise MetadataError(f"{where}{what}: needs at least one edge")
            pairs: list[tuple[int, int]] = []
            for item in spec:
                if isinstance(item, list | tuple):
                    if len(item) != 2:
                        raise MetadataError(
                            f"{where}{what}: a run-length entry is [edge, count], got {item!r}"
                        )
                    pairs.append((_positive(item[0], what, where), _positive(item[1], what, where)))
                else:
                    pairs.append((_positive(item, what, where), 1))
            runs = _merged(pairs)
            total = sum(e * n for e, n in runs)
            if total < shape[d]:
                raise MetadataError(
                    f"{where}{what}: the edges sum to {total}, below the extent {shape[d]}"
                )
            dims.append(runs)
        return cls(tuple(dims))

    @classmethod
    def from_edges(cls, dims: Sequence[int | Sequence[int]]) -> RectilinearGrid:
        """From steps and explicit edge lists (already validated)."""
        return cls(
            tuple(int(d) if isinstance(d, int) else _merged([(int(e), 1) for e in d]) for d in dims)
        )

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` member as zarr-python 3.4 writes it: steps as integers, edges
        run-length encoded where that makes the list shorter."""
        shapes: list[Any] = []
        for spec in self.dims:
            if isinstance(spec, int):
                shapes.append(spec)
            elif len(spec) < sum(n for _, n in spec):
                shapes.append([e if n == 1 else [e, n] for e, n in spec])
            else:
                shapes.append([e for e, _ in spec])
        return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}}

    def core_json(self) -> list[Any]:
        """``chunk_shapes`` for the Rust core (every run as a pair)."""
        return [s if isinstance(s, int) else [[e, n] for e, n in s] for s in self.dims]

    # ---- questions ---------------------------------------------------------------------

    @staticmethod
    def _cumulative(runs: tuple[tuple[int, int], ...]) -> tuple[list[int], list[int]]:
        """Per run: its start offset and its first chunk index."""
        starts, firsts = [0], [0]
        for e, n in runs[:-1]:
            starts.append(starts[-1] + e * n)
            firsts.append(firsts[-1] + n)
        return starts, firsts

    def nchunks(self, d: int, extent: int) -> int:
        """Chunks along dimension ``d`` that hold elements of ``0..extent``."""
        spec = self.dims[d]
        if extent <= 0:
            return 0
        if isinstance(spec, int):
            return -(-extent // spec)
        starts, firsts = self._cumulative(spec)
        i = bisect.bisect_right(starts, extent - 1) - 1
        e, n = spec[i]
        return firsts[i] + min(n, (extent - 1 - starts[i]) // e + 1)

    def grid_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(self.nchunks(d, s) for d, s in enumerate(shape))

    def chunk(self, d: int, c: int) -> tuple[int, int]:
        """Offset and edge of chunk ``c`` along dimension ``d`` (``c`` in the grid)."""
        spec = self.dims[d]
        if isinstance(spec, int):
            return c * spec, spec
        starts, firsts = self._cumulative(spec)
        i = bisect.bisect_right(firsts, c) - 1
        e, _ = spec[i]
        return starts[i] + (c - firsts[i]) * e, e

    def iter_edges(self, d: int, extent: int) -> Iterator[int]:
        """The edges of the chunks holding elements of ``0..extent``."""
        left = self.nchunks(d, extent)
        spec = self.dims[d]
        if isinstance(spec, int):
            yield from (spec for _ in range(left))
            return
        for e, n in spec:
            for _ in range(min(n, left)):
                yield e
            left -= min(n, left)

    def data_sizes(self, d: int, extent: int) -> tuple[int, ...]:
        """The data sizes of dimension ``d``'s chunks, clipped at ``extent``."""
        out: list[int] = []
        offset = 0
        for e in self.iter_edges(d, extent):
            out.append(min(e, extent - offset))
            offset += e
        return tuple(out)

    def distinct_edges(self, d: int) -> tuple[int, ...]:
        spec = self.dims[d]
        return (spec,) if isinstance(spec, int) else tuple(sorted({e for e, _ in spec}))

    def first_chunk_shape(self) -> tuple[int, ...]:
        return tuple(s if isinstance(s, int) else s[0][0] for s in self.dims)

    def resized(self, shape: Sequence[int]) -> RectilinearGrid:
        """The grid after a resize to ``shape``, as zarr-python 3.4 adjusts it: steps stay;
        explicit edges get one new chunk covering the growth past their sum, and are kept as
        they are when the array shrinks."""
        dims: list[DimSpec] = []
        for spec, extent in zip(self.dims, shape, strict=True):
            if isinstance(spec, int):
                dims.append(spec)
                continue
            total = sum(e * n for e, n in spec)
            dims.append(_merged([*spec, (extent - total, 1)]) if extent > total else spec)
        return RectilinearGrid(tuple(dims))


def parse_chunk_key_encoding(value: object, where: str) -> dict[str, Any]:
    """A v3 ``chunk_key_encoding`` -> ``{"name": "default"|"v2", "configuration":
    {"separator": "/"|"."}}``, the separator filled in when left out (zarr-python's ``/`` for
    ``default``, ``.`` for ``v2``).

    Takes the document's form, a bare name, and zarr-python's user form ``{"name": ...,
    "separator": ...}``. The names, separators and defaults are the Rust core's; a malformed
    value is a MetadataError, an encoding zarrox does not have an UnsupportedError, both
    starting with ``where``.
    """
    label = "chunk_key_encoding"
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping):
        raise MetadataError(f"{where}{label}: must be an object or a name, got {value!r}")
    allowed = ("name", "configuration", "must_understand", "separator")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise MetadataError(f"{where}{label}: unknown member(s) {unknown}")
    if value.get("must_understand", True) is not True:
        raise MetadataError(f'{where}{label}: "must_understand" must not be false')
    name = value.get("name")
    if not isinstance(name, str):
        raise MetadataError(f"{where}{label}.name: must be a string, got {name!r}")
    cfg = value.get("configuration", {})
    if not isinstance(cfg, Mapping):
        raise MetadataError(f"{where}{label}.configuration: must be an object, got {cfg!r}")
    cfg = dict(cfg)
    if "separator" not in cfg and "separator" in value:
        cfg["separator"] = value["separator"]
    try:
        text = json.dumps(cfg)
    except (TypeError, ValueError):
        raise MetadataError(f"{where}{label}.configuration: not a JSON object: {cfg!r}") from None
    try:
        # a name with lone surrogates (no encoding's) reaches the core escaped
        name = name.encode("utf-8", "backslashreplace").decode("utf-8")
        return json.loads(_core.chunk_key_encoding(name, text))  # type: ignore[no-any-return]
    except (MetadataError, UnsupportedError) as e:
        raise type(e)(f"{where}{e}") from None


def encode_chunk_key(name: str, separator: str, coords: Sequence[int]) -> str:
    """The store key (relative to the array) of the chunk at grid index ``coords`` under the
    v3 chunk key encoding ``name`` (``default``: ``c`` then the indices, each after
    ``separator``; ``v2``: the indices joined by ``separator``, ``0`` for 0-d arrays), the
    rule of the Rust core's ``ChunkKeyEncoding::encode`` (v2 arrays use ``v2``)."""
    indices = [str(int(c)) for c in coords]
    if name == "v2":
        return separator.join(indices) if indices else "0"
    return "c" + "".join(separator + i for i in indices)
