"""Rectilinear chunk grids (the ``rectilinear`` chunk grid extension of Zarr v3), and the v3
``chunk_key_encoding`` (:func:`parse_chunk_key_encoding`, whose names, separators and defaults
are the Rust core's, ``rust/grid.rs``).

A rectilinear dimension is declared by one integer (a step repeated over the axis, as a regular
grid) or by explicit edge lengths, written as integers and ``[edge, count]`` run-length pairs.
:class:`RectilinearGrid` is the core's grid (``grid::DimGrid``, bound in
``rust/python/grid.rs``): it parses and writes the ``zarr.json`` form and keeps the edges as
runs, so a dimension of many equal chunks never expands; its answers (chunk counts, offsets,
data sizes, how a resize grows the edges) are zarr-python 3.4's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from zarrox import _core
from zarrox._core import RectilinearGrid
from zarrox.errors import MetadataError, UnsupportedError

__all__ = ["RectilinearGrid", "encode_chunk_key", "parse_chunk_key_encoding"]


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
