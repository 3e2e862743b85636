"""``Schema.chunk_layout``: constraints on the read and write chunk shapes, and TensorStore's
algorithm that turns them (with the domain) into chunk shapes when an array is created.

Write chunks are the stored objects (the zarr chunk grid, or the shards); read chunks are the
units that can be read alone (the inner chunks of a shard). Each shape constraint is *hard*
(must hold) or *soft* (a preference); unconstrained dimensions get a chunk size from the
aspect ratio and the target number of elements (1024 * 1024 unless given).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zarrox.tensorstore_spec._json import (
    as_json,
    check_members,
    expect_int,
    expect_list,
    expect_object,
    fail,
    is_int,
    member,
)

DEFAULT_CHUNK_ELEMENTS = 1024 * 1024
_MAX_INDEX = (1 << 63) - 1

_GRID_MEMBERS = (
    "shape",
    "shape_soft_constraint",
    "aspect_ratio",
    "aspect_ratio_soft_constraint",
    "elements",
    "elements_soft_constraint",
)
_LAYOUT_MEMBERS = (
    "rank",
    "grid_origin",
    "grid_origin_soft_constraint",
    "inner_order",
    "inner_order_soft_constraint",
    "write_chunk",
    "read_chunk",
    "codec_chunk",
    "chunk",
)


@dataclass
class Grid:
    """Constraints on one kind of chunk. ``shape[i]`` 0 is unconstrained, -1 the whole
    extent of the domain; ``aspect_ratio[i]`` 0 is unconstrained."""

    shape: list[int] | None = None
    shape_hard: list[bool] | None = None
    aspect_ratio: list[float] | None = None
    aspect_ratio_hard: list[bool] | None = None
    elements: int | None = None
    elements_hard: bool = False

    @property
    def empty(self) -> bool:
        return self.shape is None and self.aspect_ratio is None and self.elements is None

    def hard_shape(self) -> list[int] | None:
        """The hard-constrained sizes (0 where a dimension is soft or unconstrained)."""
        if self.shape is None or self.shape_hard is None:
            return None
        return [s if h else 0 for s, h in zip(self.shape, self.shape_hard, strict=True)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.shape is not None and self.shape_hard is not None:
            hard = [s if h else None for s, h in zip(self.shape, self.shape_hard, strict=True)]
            soft = [
                None if h else (s or None) for s, h in zip(self.shape, self.shape_hard, strict=True)
            ]
            if any(v for v in hard):
                out["shape"] = hard
            if any(v for v in soft):
                out["shape_soft_constraint"] = soft
        if self.aspect_ratio is not None and self.aspect_ratio_hard is not None:
            pairs = list(zip(self.aspect_ratio, self.aspect_ratio_hard, strict=True))
            if any(a and h for a, h in pairs):
                out["aspect_ratio"] = [a if h and a else None for a, h in pairs]
            if any(a and not h for a, h in pairs):
                out["aspect_ratio_soft_constraint"] = [a if a and not h else None for a, h in pairs]
        if self.elements is not None:
            out["elements" if self.elements_hard else "elements_soft_constraint"] = self.elements
        return out


def _merge_vector(
    old: list[Any] | None,
    old_hard: list[bool] | None,
    new: list[Any],
    new_hard: list[bool],
    where: str,
) -> tuple[list[Any], list[bool]]:
    if old is None or old_hard is None:
        return list(new), list(new_hard)
    if len(old) != len(new):
        raise fail(where, f"has {len(new)} elements, but the rank is {len(old)}")
    values, hard = list(old), list(old_hard)
    for i, (v, h) in enumerate(zip(new, new_hard, strict=True)):
        if not v:
            continue
        if h:
            if hard[i] and values[i] and values[i] != v:
                raise fail(
                    where,
                    f"hard constraint {v} for dimension {i} does not match the existing hard "
                    f"constraint {values[i]}",
                )
            values[i], hard[i] = v, True
        elif not values[i]:
            values[i] = v
    return values, hard


def merge_grid(grid: Grid, other: Grid, where: str) -> Grid:
    out = Grid(
        grid.shape,
        grid.shape_hard,
        grid.aspect_ratio,
        grid.aspect_ratio_hard,
        grid.elements,
        grid.elements_hard,
    )
    if other.shape is not None and other.shape_hard is not None:
        out.shape, out.shape_hard = _merge_vector(
            out.shape, out.shape_hard, other.shape, other.shape_hard, member(where, "shape")
        )
    if other.aspect_ratio is not None and other.aspect_ratio_hard is not None:
        out.aspect_ratio, out.aspect_ratio_hard = _merge_vector(
            out.aspect_ratio,
            out.aspect_ratio_hard,
            other.aspect_ratio,
            other.aspect_ratio_hard,
            member(where, "aspect_ratio"),
        )
    if other.elements is not None:
        if other.elements_hard:
            if out.elements_hard and out.elements != other.elements:
                raise fail(
                    member(where, "elements"),
                    f"{other.elements} does not match the existing hard constraint {out.elements}",
                )
            out.elements, out.elements_hard = other.elements, True
        elif out.elements is None:
            out.elements = other.elements
    return out


@dataclass
class ChunkLayout:
    """TensorStore's ``ChunkLayout`` constraints."""

    rank: int | None = None
    grid_origin: list[int] | None = None
    grid_origin_hard: list[bool] | None = None
    inner_order: list[int] | None = None
    inner_order_hard: bool = False
    write_chunk: Grid = field(default_factory=Grid)
    read_chunk: Grid = field(default_factory=Grid)
    codec_chunk: Grid = field(default_factory=Grid)

    @classmethod
    def from_json(cls, value: object, where: str = "chunk_layout") -> ChunkLayout:
        obj = expect_object(as_json(value), where)
        check_members(obj, _LAYOUT_MEMBERS, where)
        layout = cls()
        if "rank" in obj:
            layout._set_rank(expect_int(obj["rank"], member(where, "rank"), lo=0, hi=32), where)
        for key, hard in (("grid_origin", True), ("grid_origin_soft_constraint", False)):
            if key in obj:
                at = member(where, key)
                items = expect_list(obj[key], at)
                values = [
                    0 if v is None else expect_int(v, member(at, i)) for i, v in enumerate(items)
                ]
                present = [v is not None for v in items]
                layout._set_rank(len(values), at)
                vals, flags = _merge_vector(
                    layout.grid_origin,
                    layout.grid_origin_hard,
                    [v if p else None for v, p in zip(values, present, strict=True)],
                    [hard and p for p in present],
                    at,
                )
                layout.grid_origin, layout.grid_origin_hard = vals, flags
        for key, hard in (("inner_order", True), ("inner_order_soft_constraint", False)):
            if key in obj:
                at = member(where, key)
                order = [
                    expect_int(v, member(at, i)) for i, v in enumerate(expect_list(obj[key], at))
                ]
                if sorted(order) != list(range(len(order))):
                    raise fail(at, f"{order} is not a permutation")
                layout._set_rank(len(order), at)
                if layout.inner_order is None or (hard and not layout.inner_order_hard):
                    layout.inner_order, layout.inner_order_hard = order, hard
        for key in ("chunk", "write_chunk", "read_chunk", "codec_chunk"):
            if key not in obj:
                continue
            grid = _parse_grid(obj[key], member(where, key))
            for size in (grid.shape, grid.aspect_ratio):
                if size is not None:
                    layout._set_rank(len(size), member(where, key))
            targets = ("write_chunk", "read_chunk") if key == "chunk" else (key,)
            for t in targets:
                setattr(layout, t, merge_grid(getattr(layout, t), grid, member(where, key)))
        return layout

    def _set_rank(self, rank: int, where: str) -> None:
        if self.rank is not None and rank != self.rank:
            raise fail(where, f"has rank {rank}, but the chunk layout has rank {self.rank}")
        self.rank = rank

    def merge(self, other: ChunkLayout, where: str = "chunk_layout") -> ChunkLayout:
        out = ChunkLayout(
            self.rank,
            self.grid_origin,
            self.grid_origin_hard,
            self.inner_order,
            self.inner_order_hard,
            self.write_chunk,
            self.read_chunk,
            self.codec_chunk,
        )
        if other.rank is not None:
            out._set_rank(other.rank, where)
        if other.grid_origin is not None and other.grid_origin_hard is not None:
            out.grid_origin, out.grid_origin_hard = _merge_vector(
                out.grid_origin,
                out.grid_origin_hard,
                other.grid_origin,
                other.grid_origin_hard,
                member(where, "grid_origin"),
            )
        if other.inner_order is not None:
            if (
                out.inner_order is not None
                and out.inner_order_hard
                and other.inner_order_hard
                and out.inner_order != other.inner_order
            ):
                raise fail(
                    member(where, "inner_order"),
                    f"{other.inner_order} does not match the existing hard constraint "
                    f"{out.inner_order}",
                )
            if out.inner_order is None or (other.inner_order_hard and not out.inner_order_hard):
                out.inner_order, out.inner_order_hard = other.inner_order, other.inner_order_hard
        for key in ("write_chunk", "read_chunk", "codec_chunk"):
            setattr(
                out, key, merge_grid(getattr(out, key), getattr(other, key), member(where, key))
            )
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.grid_origin is not None and self.grid_origin_hard is not None:
            out["grid_origin"] = [
                v if h else None
                for v, h in zip(self.grid_origin, self.grid_origin_hard, strict=True)
            ]
        if self.inner_order is not None:
            out["inner_order" if self.inner_order_hard else "inner_order_soft_constraint"] = list(
                self.inner_order
            )
        for key in ("write_chunk", "read_chunk", "codec_chunk"):
            grid = getattr(self, key).to_json()
            if grid:
                out[key] = grid
        if not out and self.rank is not None:
            out["rank"] = self.rank
        return out


def _parse_grid(value: object, where: str) -> Grid:
    obj = expect_object(value, where)
    check_members(obj, _GRID_MEMBERS, where)
    grid = Grid()
    for key, hard in (("shape", True), ("shape_soft_constraint", False)):
        if key in obj:
            at = member(where, key)
            items = expect_list(obj[key], at)
            values = [
                0 if v is None else expect_int(v, member(at, i), lo=-1) for i, v in enumerate(items)
            ]
            grid.shape, grid.shape_hard = _merge_vector(
                grid.shape, grid.shape_hard, values, [hard and v != 0 for v in values], at
            )
    for key, hard in (("aspect_ratio", True), ("aspect_ratio_soft_constraint", False)):
        if key in obj:
            at = member(where, key)
            items = expect_list(obj[key], at)
            ratios: list[float] = []
            for i, v in enumerate(items):
                if v is None:
                    ratios.append(0.0)
                elif (is_int(v) or isinstance(v, float)) and v >= 0:
                    ratios.append(float(v))
                else:
                    raise fail(member(at, i), f"expected a non-negative number, got {v!r}")
            grid.aspect_ratio, grid.aspect_ratio_hard = _merge_vector(
                grid.aspect_ratio, grid.aspect_ratio_hard, ratios, [hard] * len(ratios), at
            )
    for key, hard in (("elements", True), ("elements_soft_constraint", False)):
        if key in obj and obj[key] is not None:
            n = expect_int(obj[key], member(where, key), lo=1)
            if grid.elements is None or (hard and not grid.elements_hard):
                grid.elements, grid.elements_hard = n, hard
    return grid


# --------------------------------------------------------------------------------------------
# Choosing chunk shapes
# --------------------------------------------------------------------------------------------


def _choose_from_aspect_ratio(
    aspect_ratio: Sequence[float],
    chunk_shape: list[int],
    target: int,
    domain_shape: Sequence[int],
    map_size: Callable[[int, int], int],
) -> None:
    """Fill the unconstrained (0) entries of ``chunk_shape`` so that the chunk has about
    ``target`` elements with sizes proportional to ``aspect_ratio``: a binary search over the
    scale factor, as TensorStore does (the same double arithmetic, so the same sizes)."""
    rank = len(chunk_shape)
    max_chunk = []
    for i in range(rank):
        size = min(float(target), max(1.0, float(domain_shape[i])))
        max_chunk.append(min(size, 2.0**62))

    def chunk_size(i: int, factor: float) -> int:
        if chunk_shape[i] != 0:
            return chunk_shape[i]
        return map_size(i, max(1, int(min(aspect_ratio[i] * factor, max_chunk[i]))))

    def total(factor: float) -> int:
        n = 1
        for i in range(rank):
            n *= chunk_size(i, factor)
            if n > _MAX_INDEX:
                return _MAX_INDEX
        return n

    min_increment = math.inf
    max_factor = 0.0
    for i in range(rank):
        if chunk_shape[i] != 0:
            continue
        min_increment = min(min_increment, 1.0 / aspect_ratio[i])
        max_factor = max(max_factor, max_chunk[i] / aspect_ratio[i])
    min_increment /= 2
    max_factor *= 2
    min_factor = min_increment
    max_factor_elements = total(max_factor)
    while min_factor + min_increment < max_factor:
        mid = min_factor + (max_factor - min_factor) / 2.0
        mid_elements = total(mid)
        if mid_elements >= target:
            max_factor, max_factor_elements = mid, mid_elements
        if mid_elements <= target:
            min_factor = mid
    factor = max_factor if max_factor_elements == target else min_factor
    for i in range(rank):
        chunk_shape[i] = chunk_size(i, factor)


def _initial_shape(
    grid: Grid, domain_shape: Sequence[int], where: str
) -> tuple[list[int], list[bool]]:
    rank = len(domain_shape)
    if grid.shape is None or grid.shape_hard is None:
        return [0] * rank, [False] * rank
    if len(grid.shape) != rank:
        raise fail(where, f"has rank {len(grid.shape)}, but the domain has rank {rank}")
    shape = list(grid.shape)
    hard = list(grid.shape_hard)
    for i, s in enumerate(shape):
        if s == 0:
            hard[i] = False
        elif s == -1:
            shape[i] = max(1, int(domain_shape[i]))
    return shape, hard


def _complete(
    grid: Grid,
    domain_shape: Sequence[int],
    shape: list[int],
    map_size: Callable[[int, int], int],
    where: str,
) -> None:
    if all(s != 0 for s in shape):
        return
    rank = len(shape)
    ratio = [1.0] * rank
    if grid.aspect_ratio is not None:
        if len(grid.aspect_ratio) != rank:
            raise fail(where, f"aspect_ratio has rank {len(grid.aspect_ratio)}, the domain {rank}")
        ratio = [r if r else 1.0 for r in grid.aspect_ratio]
    target = grid.elements if grid.elements is not None else DEFAULT_CHUNK_ELEMENTS
    _choose_from_aspect_ratio(ratio, shape, target, domain_shape, map_size)


def _nearest_divisor(dividend: int, target: int, max_distance: int = 1000000) -> int:
    if target >= dividend:
        return dividend
    if dividend % target == 0:
        return target
    for offset in range(1, max_distance):
        if target > offset and dividend % (target - offset) == 0:
            return target - offset
        if dividend % (target + offset) == 0:
            return target + offset
    return dividend


def _nearest_multiple(divisor: int, target: int) -> int:
    if target < divisor:
        return divisor
    lower = target // divisor * divisor
    upper = lower + divisor
    return lower if target - lower <= upper - target else upper


def choose_read_write_chunk_shapes(
    read: Grid, write: Grid, domain_shape: Sequence[int], where: str = "chunk_layout"
) -> tuple[list[int], list[int]]:
    """(read chunk shape, write chunk shape) for a new array of ``domain_shape``: every write
    chunk is a whole number of read chunks."""
    write_shape, write_hard = _initial_shape(write, domain_shape, member(where, "write_chunk"))
    read_shape, read_hard = _initial_shape(read, domain_shape, member(where, "read_chunk"))
    for i in range(len(domain_shape)):
        r, w = read_shape[i], write_shape[i]
        if r == 0 or w == 0 or w % r == 0:
            continue
        if read_hard[i] and write_hard[i]:
            raise fail(
                where,
                f"incompatible chunk size constraints for dimension {i}: read size of {r}, "
                f"write size of {w}",
            )
        if read_hard[i]:
            write_shape[i] = _nearest_multiple(r, w)
        else:
            read_shape[i] = _nearest_divisor(w, r)

    def map_read(i: int, size: int) -> int:
        w = write_shape[i]
        return _nearest_divisor(w, size) if w != 0 else size

    _complete(read, domain_shape, read_shape, map_read, member(where, "read_chunk"))

    def map_write(i: int, size: int) -> int:
        return _nearest_multiple(read_shape[i], size)

    _complete(write, domain_shape, write_shape, map_write, member(where, "write_chunk"))
    return read_shape, write_shape


def choose_chunk_shape(layout: ChunkLayout, domain_shape: Sequence[int]) -> list[int]:
    """One chunk shape that serves as both read and write chunk (zarr v2)."""
    combined = merge_grid(layout.read_chunk, layout.write_chunk, "chunk_layout.write_chunk")
    shape, _ = _initial_shape(combined, domain_shape, "chunk_layout")
    _complete(combined, domain_shape, shape, lambda i, s: s, "chunk_layout")
    return shape
