"""The description of an array that the Python layer hands to the Rust core.

Every metadata model (Zarr v3 :class:`~zarrox.metadata.v3.ArrayMetadataV3`, v2
:class:`~zarrox.metadata.v2.ArrayMetadataV2`, v1 :class:`~zarrox.metadata.v1.ArrayMetadataV1`
and the 2022 draft v3 layout :class:`~zarrox.metadata.draft_v3.DraftArrayMetadata`) gives
its array as one :class:`ArrayDescription` (``to_core_json()``), built by
:func:`describe_array`; ``_core.ArrayHandle`` takes it as JSON, with the fill value as one
element's bytes beside it (``fill_bytes()``). It says what the Rust core needs to find,
decode and encode chunks, nothing a document says for people (attributes, dimension names)
and nothing the Python layer runs itself (the ``pickle`` codec).

Whatever the format, the description is the one form: a v2 ``order: "F"`` is a ``transpose``
codec, v2 filters and compressors are ``numcodecs.<id>`` codecs around a ``bytes`` codec,
the draft v3 sharding storage transformer is a ``sharding_indexed`` codec.
"""

# no ``from __future__ import annotations``: TypedDict reads ``NotRequired`` from evaluated
# annotations (``ArrayDescription.__optional_keys__``)
from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypedDict

from zarrox.metadata.chunk_grid import RectilinearGrid

__all__ = ["ArrayDescription", "KeyEncodingDescription", "describe_array"]


class KeyEncodingDescription(TypedDict):
    """How a chunk's grid index becomes its store key (read by ``ChunkKeyEncoding::from_json``,
    ``rust/grid.rs``).

    - ``name``: ``"default"`` (v3: ``c`` then the indices, each after the separator), ``"v2"``
      (v2 and v1, and v3's ``v2`` encoding: the indices joined by the separator, ``0`` for a 0-d
      array) or ``"draft_v3"`` (the 2022 draft layout: ``c`` then the indices joined by the
      separator).
    - ``separator``: ``"/"`` or ``"."``.
    - ``zero_d_key``: ``draft_v3`` only: the key of a 0-d array's chunk, ``"c"`` or ``"c0"``.
    """

    name: Literal["default", "v2", "draft_v3"]
    separator: str
    zero_d_key: NotRequired[Literal["c", "c0"]]


class ArrayDescription(TypedDict):
    """An array as the Rust core takes it: the JSON object ``_core.ArrayHandle`` parses
    into ``struct CoreMetadata`` (``rust/array.rs``). Members other than these are not
    read.

    - ``shape``: The array's shape: a list of non-negative integers (``[]`` for a 0-d array).
    - ``chunk_shape``: A regular grid's chunk shape: a list of positive integers, one per
      dimension of ``shape`` (for a sharded array, the shape of a shard). Absent with
      ``chunk_shapes``.
    - ``chunk_shapes``: A rectilinear grid (v3's ``rectilinear`` chunk grid extension), instead
      of ``chunk_shape``: per dimension a step (an integer) or the chunks' edges as
      ``[edge, count]`` runs (:meth:`~zarrox.metadata.chunk_grid.RectilinearGrid.core_json`);
      read by ``ChunkGrid::rectilinear`` (``rust/grid.rs``), which builds a codec chain per
      chunk shape.
    - ``data_type``: The data type of one element (read by ``DataType::from_json``,
      ``rust/dtype.rs``): a core name (``"bool"``, ``"int8"`` .. ``"uint64"``, ``"float16"``,
      ``"float32"``, ``"float64"``, ``"complex64"``, ``"complex128"``, ``"r<N>"``; v3's aliases
      ``complex_float32`` and ``complex_float64`` give ``"complex64"`` and ``"complex128"``),
      ``"string"`` or ``"bytes"`` for the variable-length types, or, for every other fixed-size
      type, ``{"size": N, "swap": [[offset, length], ...], "floats": [[offset, format], ...]}``:
      ``swap`` lists the components of one element that byte order applies to, ``floats`` the
      IEEE-like float components (format ``"float16"``, ``"bfloat16"``, ``"float32"`` or
      ``"float64"``; 8-bit and smaller floats are not listed) for NaN-aware comparisons
      (:meth:`~zarrox.metadata.dtypes.DataType.core_json`).
    - ``codecs``: The codec chain of one chunk (read by ``CodecChain::from_json``,
      ``rust/codec/mod.rs``): a list of ``{"name", "configuration"}`` objects, every
      configuration complete (defaults filled in, nested chains too), no ``must_understand``,
      the codecs a v3 document may ignore left out: the ``"core"`` form of
      :func:`~zarrox.metadata.codecs.normalize_codecs`. v2 filters and compressors are
      ``numcodecs.<id>`` codecs with numcodecs' configuration less its ``id``.
    - ``chunk_key_encoding``: A :class:`KeyEncodingDescription`.
    """

    shape: list[int]
    chunk_shape: NotRequired[list[int]]
    chunk_shapes: NotRequired[list[Any]]
    data_type: str | dict[str, Any]
    codecs: list[dict[str, Any]]
    chunk_key_encoding: KeyEncodingDescription


def describe_array(
    *,
    shape: Sequence[int],
    chunks: Sequence[int] | RectilinearGrid,
    data_type: str | dict[str, Any],
    codecs: list[dict[str, Any]],
    key_encoding: KeyEncodingDescription,
) -> ArrayDescription:
    """The :class:`ArrayDescription` of an array: its ``shape``, its chunk grid (a regular
    grid's chunk shape, or a :class:`~zarrox.metadata.chunk_grid.RectilinearGrid`), its
    ``data_type`` and ``codecs`` in the core's forms, and its chunk key encoding.
    """
    description: ArrayDescription = {
        "shape": [int(s) for s in shape],
        "data_type": data_type,
        "codecs": codecs,
        "chunk_key_encoding": key_encoding,
    }
    if isinstance(chunks, RectilinearGrid):
        # chunks differ in shape: the core takes the grid and builds a chain per shape
        description["chunk_shapes"] = chunks.core_json()
    else:
        description["chunk_shape"] = [int(c) for c in chunks]
    return description
