"""Converting arrays and hierarchies to Zarr v3.

Chunks are copied byte for byte when every codec has a v3 equivalent (zstd,
gzip, blosc; F order as a transpose codec; byte order as the bytes codec), with
the v2 chunk key encoding so keys stay the same; otherwise (zlib, bz2, lzma,
lz4, numcodecs filters) or when shards are asked for, values are re-encoded.
In place, the v3 metadata is built and checked first and written last, and
re-encoded chunks go to v3 keys beside the old ones, so a failure leaves the
source readable.

xarray's ``_ARRAY_DIMENSIONS`` attribute becomes the v3 ``dimension_names`` (where xarray
reads them in v3), so a converted xarray dataset opens as the same dataset.

The legacy formats are always re-encoded: a Zarr v1 array (in place too), and
a hierarchy or array of the 2022 draft v3 layout (to a destination only: its
entry point ``zarr.json`` is where the v3 root goes). Arrays sharded by the draft's
storage transformer stay sharded, with the same shards, unless ``shards`` says
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zarrox.api import create_group, open_node
from zarrox.array import Array
from zarrox.errors import ContainsNodeError, UnsupportedError
from zarrox.group import Group
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, data_type_name
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.metadata.draft_v3 import DraftArrayMetadata, DraftGroupMetadata
from zarrox.metadata.v1 import V1_ATTRS_KEY, V1_META_KEY, ArrayMetadataV1
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.metadata.v2_codecs import complete_codec
from zarrox.nodes.discover import node_exists
from zarrox.nodes.node import (
    V2_ARRAY_KEY,
    V2_ATTRS_KEY,
    V2_GROUP_KEY,
    is_legacy,
    join,
    normalize_path,
    write_node,
)
from zarrox.nodes.place import prepare_node_path
from zarrox.nodes.sharding import sharding_codecs
from zarrox.storage import Store, resolve_store
from zarrox.transfer import ValueBytes

_BLOSC_SHUFFLE = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def _v3_compressor(comp: dict[str, Any] | None, itemsize: int) -> list[dict[str, Any]] | None:
    """The v3 codecs for a v2 compressor with the same bitstream, or None if none."""
    if comp is None:
        return []
    cid = comp.get("id")
    if cid not in ("zstd", "gzip", "blosc"):
        return None
    full = complete_codec(comp, "", "compressor")  # numcodecs' defaults: not the v3 codecs'
    if cid == "zstd":
        config = {"level": full["level"], "checksum": full["checksum"]}
    elif cid == "gzip":
        config = {"level": full["level"]}
    else:
        shuffle = full["shuffle"]
        if shuffle == -1:  # numcodecs' AUTOSHUFFLE
            shuffle = 2 if itemsize == 1 else 1
        config = {
            "cname": full["cname"],
            "clevel": full["clevel"],
            "shuffle": _BLOSC_SHUFFLE[shuffle],
            "typesize": itemsize,
            "blocksize": full["blocksize"],
        }
    return [{"name": cid, "configuration": config}]


def _verbatim_codecs(meta: ArrayMetadataV2) -> list[dict[str, Any]] | None:
    """A v3 chain that decodes the v2 chunks as stored, or None."""
    if meta.filters or meta.dtype.kind not in "biufc":
        return None
    compressor = _v3_compressor(meta.compressor, meta.dtype.itemsize)
    if compressor is None:
        return None
    codecs = meta.order_codecs()
    if meta.dtype.itemsize > 1:
        endian = "big" if meta.dtype.byteorder == ">" else "little"
        codecs.append({"name": "bytes", "configuration": {"endian": endian}})
    else:
        codecs.append({"name": "bytes"})
    return codecs + compressor


def _user_dtype(src: Array) -> Any:
    """The dtype to create the v3 array with."""
    if src.dtype.kind in "OT":
        return str if src.metadata.data_type == "string" else bytes
    return src.dtype


#: the attribute xarray keeps a v2 array's dimension names in (v3 has ``dimension_names``)
XARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"


def _dimension_names(src: Array) -> tuple[dict[str, Any], Any]:
    """(attributes, dimension names) of the v3 array: xarray's ``_ARRAY_DIMENSIONS``
    attribute of a v2 array becomes ``dimension_names``, where xarray looks for them in v3."""
    attributes = dict(src.attrs)
    names = attributes.get(XARRAY_DIMENSIONS)
    if (
        src.dimension_names is None
        and isinstance(names, list)
        and len(names) == src.ndim
        and all(isinstance(n, str) for n in names)
    ):
        del attributes[XARRAY_DIMENSIONS]
        return attributes, tuple(names)
    return attributes, src.dimension_names


def _target(src: Array, path: str, shards: Sequence[int] | None) -> tuple[ArrayMetadataV3, bool]:
    """(v3 metadata of the converted array, whether chunk bytes can be copied as they are)."""
    meta = src.metadata
    fill = meta.fill_value
    attributes, dimension_names = _dimension_names(src)
    common: dict[str, Any] = dict(
        shape=src.shape,
        dtype=_user_dtype(src),
        fill_value=fill,
        attributes=attributes,
        dimension_names=dimension_names,
        path=path,
    )
    if shards is None and is_legacy(meta):
        shards = src.shards  # the draft's sharding transformer: keep the shards
    if isinstance(meta, ArrayMetadataV2) and shards is None:
        codecs = _verbatim_codecs(meta)
        if codecs is not None:
            encoding = {"name": "v2", "separator": meta.dimension_separator}
            created = ArrayMetadataV3.create(
                chunk_shape=src.chunks, codecs=codecs, chunk_key_encoding=encoding, **common
            )
            return created, True
    rect = getattr(meta, "rectilinear", None)
    if shards is None and rect is not None:
        # A rectilinear grid is kept: the chunks, or the shards with their inner chunks.
        if src._sharding_config() is None:
            return ArrayMetadataV3.create(chunk_shape=rect, **common), False
        shards = rect
    if shards is None:
        return ArrayMetadataV3.create(chunk_shape=src.chunks, **common), False
    name = data_type_name(common["dtype"]) if not isinstance(common["dtype"], type) else None
    shard_shape, codecs = sharding_codecs(
        shards if isinstance(shards, dict | RectilinearGrid) else tuple(shards),
        tuple(src.chunks),
        src.dtype,
        name or "string",
        None,
        "auto",
        "auto",
        None,
        tuple(src.shape),
    )
    return ArrayMetadataV3.create(chunk_shape=shard_shape, codecs=codecs, **common), False


def _drop_v2_metadata(store: Store, path: str, v1: bool = False) -> None:
    """Delete the v2 (or, ``v1``, the v1) metadata documents of the node at ``path``."""
    keys = (V1_META_KEY, V1_ATTRS_KEY) if v1 else (V2_ARRAY_KEY, V2_GROUP_KEY, V2_ATTRS_KEY)
    for key in keys:
        store.delete(join(path, key))


def _convert_array(
    src: Array, store: Store, path: str, shards: Any, overwrite: bool, progress: ValueBytes
) -> Array:
    meta, verbatim = _target(src, path, shards)
    in_place = store is src.store and path == src.path
    if in_place:
        if isinstance(src.metadata, ArrayMetadataV3):
            if shards is None:
                progress.skip(src)
                return src
            raise ValueError(f"array '{path}' is already v3: give a destination to re-shard it")
        old_keys = [key for key, _ in src._stored_chunks()]
        dst = Array(store, path, meta)
        if not verbatim:
            progress.copy(src, dst)  # to v3 keys, beside the v2 chunks
        _drop_v2_metadata(store, path, v1=isinstance(src.metadata, ArrayMetadataV1))
        write_node(store, path, meta)
        if not verbatim:
            for key in old_keys:
                store.delete(key)
        if verbatim:
            progress.skip(src)
        return dst
    prepare_node_path(store, path, overwrite, 3)
    write_node(store, path, meta)
    dst = Array(store, path, meta)
    if verbatim:
        for key, coords in src._stored_chunks():
            value = src.store.get(key)
            if value is not None:
                store.set(dst._handle.chunk_key(coords), value)
        progress.skip(src)
    else:
        progress.copy(src, dst)
    return dst


def _convert_node(
    node: Array | Group, store: Store, path: str, shards: Any, overwrite: bool, progress: ValueBytes
) -> Array | Group:
    if isinstance(node, Array):
        return _convert_array(node, store, path, shards, overwrite, progress)
    children = node.members()
    in_place = store is node.store and path == node.path
    if not (in_place and isinstance(node.metadata, GroupMetadataV3)):
        if in_place:
            _drop_v2_metadata(store, path)
        create_group(
            store, path=path, attributes=dict(node.attrs), overwrite=overwrite and not in_place
        )
    for name, child in children:
        _convert_node(child, store, join(path, name), shards, overwrite, progress)
    return open_node(store, path=path, mode="r+")


def convert(
    source: Any,
    dest: Any = None,
    *,
    path: str | None = None,
    dest_path: str | None = None,
    shards: Sequence[int] | Sequence[Sequence[int] | int] | None = None,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Array | Group:
    """Convert the array or hierarchy at ``path`` of ``source`` to Zarr v3.

    With ``dest`` None the conversion is in place. ``shards`` (a shape, or per dimension
    a list of shard edges for a rectilinear shard grid, as zarr-python 3.4's
    ``create_array`` takes it) stores arrays sharded, with the source's chunks as inner
    chunks. A rectilinear chunk (or shard) grid is kept. Values, fill
    values and attributes are kept. ``progress(done, total)`` is told the bytes of values
    converted so far. Returns the converted node.
    """
    src_store = resolve_store(source)
    dst_store = src_store if dest is None else resolve_store(dest)
    path = normalize_path(path)
    dest_path = path if dest_path is None else normalize_path(dest_path)
    node = open_node(src_store, path=path, mode="r")
    if dest is None and isinstance(node.metadata, DraftArrayMetadata | DraftGroupMetadata):
        raise UnsupportedError(
            f"the node at '{path}' is in the 2022 draft v3 layout, which is converted to a "
            "destination, not in place: give dest (zarrox convert SRC DST)"
        )
    if dest is not None and not overwrite and node_exists(dst_store, dest_path):
        raise ContainsNodeError(f"a node already exists at '{dest_path}' in {dst_store!r}")
    arrays = (
        [node]
        if isinstance(node, Array)
        else [a for _, a in node.members(max_depth=None) if isinstance(a, Array)]
    )
    tracker = ValueBytes(progress, sum(a.nbytes for a in arrays))
    return _convert_node(node, dst_store, dest_path, shards, overwrite, tracker)
