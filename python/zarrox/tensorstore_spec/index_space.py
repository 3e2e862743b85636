"""TensorStore's index space: index domains, index transforms and the operations on them.

An :class:`IndexDomain` is a box of integer coordinates, one interval per dimension, each with
an optional label; a bound is *implicit* when it may change (the upper bounds of a zarr array,
which resizing moves). An :class:`IndexTransform` maps coordinates of its input domain to the
coordinates of an array: each output dimension is a constant, ``offset + stride * input[k]``,
or ``offset + stride * index_array[input]``.

The operations TensorStore users apply to arrays (NumPy-style indexing in domain coordinates,
``translate_to``, ``translate_by``, ``label``, ``stride``, ``transpose``, and the same through
dimension expressions ``d[...]``) each build a new transform; nothing is read until a view
made from it is read. The JSON forms are TensorStore's (``IndexDomain`` and
``IndexTransform``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from zarrox.errors import SpecError
from zarrox.tensorstore_spec._json import (
    check_members,
    expect_int,
    expect_list,
    expect_object,
    expect_str,
    fail,
    is_int,
    member,
)

#: TensorStore's bound for "infinite" indices: finite indices lie in (-INF, INF).
INF = (1 << 62) - 1


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


# --------------------------------------------------------------------------------------------
# Domains
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dim:
    """One dimension of a domain: ``[inclusive_min, inclusive_max]``, each bound possibly
    infinite (``-INF``/``INF``) and possibly implicit, and a label (``""``: none)."""

    inclusive_min: int
    inclusive_max: int
    implicit_lower: bool = False
    implicit_upper: bool = False
    label: str = ""

    @property
    def exclusive_max(self) -> int:
        return self.inclusive_max + 1

    @property
    def finite(self) -> bool:
        return self.inclusive_min != -INF and self.inclusive_max != INF

    @property
    def size(self) -> int:
        if not self.finite:
            raise SpecError(f"dimension {self} is unbounded: it has no size")
        return max(0, self.inclusive_max - self.inclusive_min + 1)

    @property
    def constraint(self) -> tuple[int, int]:
        """The interval an index must lie in: implicit bounds do not constrain."""
        return (
            -INF if self.implicit_lower else self.inclusive_min,
            INF if self.implicit_upper else self.inclusive_max,
        )

    def __repr__(self) -> str:
        lo = "(-inf" if self.inclusive_min == -INF else f"[{self.inclusive_min}"
        hi = "+inf)" if self.inclusive_max == INF else f"{self.exclusive_max})"
        text = f"{lo}{'*' if self.implicit_lower else ''}, {hi[:-1]}"
        text += f"{'*' if self.implicit_upper else ''}{hi[-1]}"
        return f"{self.label!r}: {text}".replace("'", '"') if self.label else text


def _bound_json(value: int, implicit: bool, infinite: int, text: str) -> Any:
    v: Any = text if value == infinite else value
    return [v] if implicit else v


def _parse_bound(value: object, where: str, infinite: tuple[int, str]) -> tuple[int, bool]:
    implicit = isinstance(value, list)
    if implicit:
        items = expect_list(value, where, 1)
        value = items[0]
    if value == infinite[1]:
        return infinite[0], implicit
    v = expect_int(value, where, lo=-INF + 1, hi=INF - 1)
    return v, implicit


def _check_labels(labels: Sequence[str], where: str) -> None:
    seen = [x for x in labels if x]
    if len(set(seen)) != len(seen):
        raise fail(where, f"dimension labels {list(labels)} are not unique")


class IndexDomain:
    """A box of integer coordinates with optional labels (TensorStore's ``IndexDomain``)."""

    def __init__(self, dims: Sequence[Dim]) -> None:
        self.dims = tuple(dims)
        _check_labels([d.label for d in self.dims], "labels")

    @classmethod
    def from_shape(
        cls, shape: Sequence[int], *, implicit_upper: bool = False, labels: Sequence[str] = ()
    ) -> IndexDomain:
        names = list(labels) or [""] * len(shape)
        return cls(
            [Dim(0, int(n) - 1, False, implicit_upper, names[i]) for i, n in enumerate(shape)]
        )

    @staticmethod
    def labels_of(names: Sequence[str | None] | None, rank: int) -> list[str]:
        """Zarr dimension names as domain labels (``""`` for none) when the names given are
        unique, else no labels."""
        labels = [n or "" for n in (names or [None] * rank)]
        used = [n for n in labels if n]
        return labels if len(set(used)) == len(used) else []

    # ---- JSON ---------------------------------------------------------------------------

    @classmethod
    def from_json(cls, value: object, where: str = "domain", *, prefix: str = "") -> IndexDomain:
        """Parse an ``IndexDomain`` (``prefix=""``) or the input-domain members of an
        ``IndexTransform`` (``prefix="input_"``)."""
        obj = expect_object(value, where)
        keys = [f"{prefix}{k}" for k in _DOMAIN_KEYS]
        if not any(k in obj for k in keys):
            raise fail(where, f"expected at least one of the members {keys}")
        rank = None
        if f"{prefix}rank" in obj:
            rank = expect_int(obj[f"{prefix}rank"], member(where, f"{prefix}rank"), lo=0, hi=32)
        uppers = [k for k in ("shape", "inclusive_max", "exclusive_max") if prefix + k in obj]
        if len(uppers) > 1:
            raise fail(where, f"give at most one of {[prefix + k for k in uppers]}")

        def take(name: str) -> list[Any] | None:
            nonlocal rank
            key = prefix + name
            if key not in obj:
                return None
            items = expect_list(obj[key], member(where, key))
            if rank is None:
                rank = len(items)
            elif len(items) != rank:
                raise fail(member(where, key), f"has {len(items)} elements, the rank is {rank}")
            return items

        lower = take("inclusive_min")
        upper_kind = uppers[0] if uppers else None
        upper = take(upper_kind) if upper_kind else None
        labels = take("labels")
        assert rank is not None
        lows: list[tuple[int, bool]]
        if lower is not None:
            lows = [
                _parse_bound(v, member(member(where, prefix + "inclusive_min"), i), (-INF, "-inf"))
                for i, v in enumerate(lower)
            ]
        elif upper_kind == "shape":
            lows = [(0, False)] * rank
        else:
            lows = [(-INF, True)] * rank
        highs: list[tuple[int, bool]] = []
        for i in range(rank):
            if upper is None or upper_kind is None:
                highs.append((INF, True))
                continue
            at = member(member(where, prefix + upper_kind), i)
            if upper_kind == "shape":
                size, implicit = _parse_bound(upper[i], at, (INF, "+inf"))
                if size < 0:
                    raise fail(at, f"a size must not be negative, got {size}")
                if lows[i][0] == -INF:
                    raise fail(at, "a size needs a finite lower bound")
                highs.append((lows[i][0] + size - 1 if size != INF else INF, implicit))
            elif upper_kind == "exclusive_max":
                v, implicit = _parse_bound(upper[i], at, (INF + 1, "+inf"))
                highs.append((v - 1 if v != INF + 1 else INF, implicit))
            else:
                highs.append(_parse_bound(upper[i], at, (INF, "+inf")))
        names = [""] * rank
        if labels is not None:
            names = [
                expect_str(v, member(member(where, prefix + "labels"), i))
                for i, v in enumerate(labels)
            ]
            _check_labels(names, member(where, prefix + "labels"))
        dims = []
        for i in range(rank):
            (lo, ilo), (hi, ihi) = lows[i], highs[i]
            if hi < lo - 1:
                raise fail(where, f"dimension {i}: upper bound {hi + 1} is below lower bound {lo}")
            dims.append(Dim(lo, hi, ilo, ihi, names[i]))
        return cls(dims)

    def to_json(self, prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        if not all(d.implicit_lower and d.inclusive_min == -INF for d in self.dims):
            out[prefix + "inclusive_min"] = [
                _bound_json(d.inclusive_min, d.implicit_lower, -INF, "-inf") for d in self.dims
            ]
        if not all(d.implicit_upper and d.inclusive_max == INF for d in self.dims):
            out[prefix + "exclusive_max"] = [
                _bound_json(d.exclusive_max, d.implicit_upper, INF + 1, "+inf") for d in self.dims
            ]
        if any(d.label for d in self.dims):
            out[prefix + "labels"] = [d.label for d in self.dims]
        if not out:
            out[prefix + "rank"] = self.rank
        return out

    # ---- properties ---------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return len(self.dims)

    ndim = rank

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(d.label for d in self.dims)

    @property
    def inclusive_min(self) -> tuple[int, ...]:
        return tuple(d.inclusive_min for d in self.dims)

    origin = inclusive_min

    @property
    def exclusive_max(self) -> tuple[int, ...]:
        return tuple(d.exclusive_max for d in self.dims)

    @property
    def inclusive_max(self) -> tuple[int, ...]:
        return tuple(d.inclusive_max for d in self.dims)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.dims)

    @property
    def implicit_lower_bounds(self) -> tuple[bool, ...]:
        return tuple(d.implicit_lower for d in self.dims)

    @property
    def implicit_upper_bounds(self) -> tuple[bool, ...]:
        return tuple(d.implicit_upper for d in self.dims)

    @property
    def finite(self) -> bool:
        return all(d.finite for d in self.dims)

    def __getitem__(self, i: int | str) -> Dim:
        if isinstance(i, str):
            return self.dims[self.labels.index(i)]
        return self.dims[i]

    def __len__(self) -> int:
        return self.rank

    def __iter__(self) -> Any:
        return iter(self.dims)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexDomain) and other.dims == self.dims

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "{ " + ", ".join(repr(d) for d in self.dims) + " }"


_DOMAIN_KEYS = ("rank", "inclusive_min", "shape", "inclusive_max", "exclusive_max", "labels")


def merge_domains(a: IndexDomain | None, b: IndexDomain | None, where: str) -> IndexDomain | None:
    """The domain both ``a`` and ``b`` describe (TensorStore's ``MergeIndexDomains``): an
    infinite implicit bound takes the other's; any other pair of bounds must be equal, and
    labels too where both have one."""
    if a is None:
        return b
    if b is None:
        return a
    if a.rank != b.rank:
        raise fail(where, f"rank {a.rank} of {a} does not match rank {b.rank} of {b}")
    dims = []
    for i, (x, y) in enumerate(zip(a.dims, b.dims, strict=True)):
        if x.label and y.label and x.label != y.label:
            raise fail(where, f"cannot merge {a} with {b}: dimension {i} labels do not match")

        def bound(
            xv: int, xi: bool, yv: int, yi: bool, inf: int, what: str, i: int = i
        ) -> tuple[int, bool]:
            if xi and xv == inf:
                return yv, yi
            if yi and yv == inf:
                return xv, xi
            if xv != yv:
                raise fail(
                    where, f"cannot merge {a} with {b}: dimension {i} {what} bounds do not match"
                )
            return xv, xi and yi

        lo, ilo = bound(
            x.inclusive_min, x.implicit_lower, y.inclusive_min, y.implicit_lower, -INF, "lower"
        )
        hi, ihi = bound(
            x.inclusive_max, x.implicit_upper, y.inclusive_max, y.implicit_upper, INF, "upper"
        )
        dims.append(Dim(lo, hi, ilo, ihi, x.label or y.label))
    return IndexDomain(dims)


# --------------------------------------------------------------------------------------------
# Transforms
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputMap:
    """How one output (array) coordinate is computed from the input coordinates: ``offset``
    (constant), ``offset + stride * input[input_dimension]``, or ``offset + stride *
    index_array[input - origin]`` (``index_array`` has the input rank; a dimension of size 1
    broadcasts)."""

    offset: int = 0
    stride: int = 1
    input_dimension: int | None = None
    index_array: np.ndarray | None = None

    @property
    def is_constant(self) -> bool:
        return self.input_dimension is None and self.index_array is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.offset:
            out["offset"] = self.offset
        if self.is_constant:
            return out
        if self.stride != 1:
            out["stride"] = self.stride
        if self.input_dimension is not None:
            out["input_dimension"] = self.input_dimension
        else:
            assert self.index_array is not None
            out["index_array"] = self.index_array.tolist()
        return out


def _parse_output_map(value: object, where: str, domain: IndexDomain) -> OutputMap:
    obj = expect_object(value, where)
    check_members(obj, ("offset", "stride", "input_dimension", "index_array"), where)
    offset = expect_int(obj.get("offset", 0), member(where, "offset"), lo=-INF + 1, hi=INF - 1)
    if "input_dimension" in obj and "index_array" in obj:
        raise fail(where, 'give at most one of "input_dimension" and "index_array"')
    if "stride" in obj and "input_dimension" not in obj and "index_array" not in obj:
        raise fail(where, '"stride" needs "input_dimension" or "index_array"')
    stride = expect_int(obj.get("stride", 1), member(where, "stride"), lo=-INF + 1, hi=INF - 1)
    if "input_dimension" in obj:
        dim = expect_int(
            obj["input_dimension"], member(where, "input_dimension"), lo=0, hi=domain.rank - 1
        )
        return OutputMap(offset, stride, dim)
    if "index_array" in obj:
        at = member(where, "index_array")
        try:
            arr = np.asarray(obj["index_array"])
        except ValueError:
            raise fail(at, "expected a nested array of integers") from None
        if arr.dtype == object or (arr.size and arr.dtype.kind not in "iu"):
            raise fail(at, "expected a nested array of integers")
        arr = arr.astype(np.int64).reshape(arr.shape)
        if arr.ndim != domain.rank:
            raise fail(at, f"has rank {arr.ndim}, the input rank is {domain.rank}")
        shape: tuple[int, ...] = arr.shape
        for i, (n, d) in enumerate(zip(shape, domain.dims, strict=True)):
            if n != 1 and (not d.finite or n != d.size):
                raise fail(at, f"dimension {i} has size {n}, the input domain has {d}")
        return OutputMap(offset, stride, None, arr)
    return OutputMap(offset)


class IndexTransform:
    """A map from an input domain to array coordinates (TensorStore's ``IndexTransform``)."""

    def __init__(self, domain: IndexDomain, output: Sequence[OutputMap] | None = None) -> None:
        self.domain = domain
        if output is None:
            output = [OutputMap(0, 1, i) for i in range(domain.rank)]
        self.output = tuple(output)

    @classmethod
    def identity(cls, domain: IndexDomain) -> IndexTransform:
        return cls(domain)

    @classmethod
    def from_json(cls, value: object, where: str = "transform") -> IndexTransform:
        obj = expect_object(value, where)
        allowed = tuple(f"input_{k}" for k in _DOMAIN_KEYS) + ("output",)
        check_members(obj, allowed, where)
        domain = IndexDomain.from_json(
            {k: v for k, v in obj.items() if k != "output"}, where, prefix="input_"
        )
        if "output" not in obj:
            return cls(domain)
        items = expect_list(obj["output"], member(where, "output"))
        maps = [
            _parse_output_map(v, member(member(where, "output"), i), domain)
            for i, v in enumerate(items)
        ]
        return cls(domain, maps)

    def to_json(self) -> dict[str, Any]:
        out = self.domain.to_json(prefix="input_")
        if not self.is_identity_maps:
            out["output"] = [m.to_json() for m in self.output]
        return out

    @property
    def is_identity_maps(self) -> bool:
        return len(self.output) == self.input_rank and all(
            m.input_dimension == i and m.offset == 0 and m.stride == 1
            for i, m in enumerate(self.output)
        )

    @property
    def input_rank(self) -> int:
        return self.domain.rank

    @property
    def output_rank(self) -> int:
        return len(self.output)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexTransform) and other.to_json() == self.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IndexTransform({self.to_json()!r})"

    # ---- composition --------------------------------------------------------------------

    def compose(self, inner: IndexTransform) -> IndexTransform:
        """``self`` applied after ``inner``: ``inner``'s outputs are ``self``'s inputs."""
        if inner.output_rank != self.input_rank:
            raise SpecError(
                f"cannot compose: the inner transform has output rank {inner.output_rank}, "
                f"the outer one input rank {self.input_rank}"
            )
        maps = []
        for m in self.output:
            if m.is_constant:
                maps.append(m)
            elif m.input_dimension is not None:
                im = inner.output[m.input_dimension]
                if im.is_constant:
                    maps.append(OutputMap(m.offset + m.stride * im.offset))
                elif im.input_dimension is not None:
                    offset = m.offset + m.stride * im.offset
                    maps.append(OutputMap(offset, m.stride * im.stride, im.input_dimension))
                else:
                    assert im.index_array is not None
                    maps.append(
                        OutputMap(
                            m.offset + m.stride * im.offset,
                            m.stride * im.stride,
                            None,
                            im.index_array,
                        )
                    )
            else:
                assert m.index_array is not None
                maps.append(OutputMap(m.offset, m.stride, None, self._gather(m.index_array, inner)))
        return IndexTransform(inner.domain, maps)

    def _gather(self, arr: np.ndarray, inner: IndexTransform) -> np.ndarray:
        """``arr`` (indexed by this transform's input positions) evaluated at every input
        position of ``inner``."""
        grids = inner.input_grids()
        index = []
        for k, m in enumerate(inner.output):
            if arr.shape[k] == 1:
                index.append(np.zeros((1,) * inner.input_rank, np.int64))
                continue
            origin = self.domain.dims[k].inclusive_min
            index.append(inner.evaluate(m, grids) - origin)
        return arr[tuple(index)] if index else arr

    def input_grids(self) -> list[np.ndarray]:
        """For each input dimension, its coordinates shaped to broadcast over the domain."""
        rank = self.input_rank
        grids = []
        for k, d in enumerate(self.domain.dims):
            shape = [1] * rank
            shape[k] = d.size
            coords = np.arange(d.inclusive_min, d.inclusive_max + 1, dtype=np.int64)
            grids.append(coords.reshape(shape))
        return grids

    @staticmethod
    def evaluate(m: OutputMap, grids: list[np.ndarray]) -> np.ndarray:
        """The output coordinates of map ``m`` at every input position (broadcastable)."""
        rank = len(grids)
        if m.is_constant:
            return np.full((1,) * rank, m.offset, np.int64)
        if m.input_dimension is not None:
            return m.offset + m.stride * grids[m.input_dimension]
        assert m.index_array is not None
        return m.offset + m.stride * m.index_array


def permutation(t: IndexTransform) -> list[int] | None:
    """For each input dimension, the output dimension it maps to with a unit stride, when the
    transform is such a one-to-one map (a permutation plus translations); else None."""
    if t.input_rank != t.output_rank:
        return None
    perm: list[int | None] = [None] * t.input_rank
    for j, m in enumerate(t.output):
        if m.input_dimension is None or m.stride != 1 or perm[m.input_dimension] is not None:
            return None
        perm[m.input_dimension] = j
    return perm  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Operations: each builds the transform from a new domain to the old one, then composes
# --------------------------------------------------------------------------------------------


def _affine_domain(d: Dim, stride: int) -> Dim:
    """The dimension of indices ``i`` with ``stride * i`` in ``d`` (``GetAffineTransformDomain``
    with offset 0)."""
    lo, hi = d.inclusive_min, d.inclusive_max
    if stride > 0:
        new_lo = -INF if lo == -INF else _ceil_div(lo, stride)
        new_hi = INF if hi == INF else hi // stride
        return Dim(new_lo, new_hi, d.implicit_lower, d.implicit_upper, d.label)
    s = -stride
    new_lo = -INF if hi == INF else _ceil_div(-hi, s)
    new_hi = INF if lo == -INF else (-lo) // s
    return Dim(new_lo, new_hi, d.implicit_upper, d.implicit_lower, d.label)


def _strided_slice(d: Dim, start: int | None, stop: int | None, step: int) -> tuple[Dim, int]:
    """TensorStore's half-open strided slice of ``d``: the new dimension and the offset with
    ``old = offset + step * new``."""
    lo_c, hi_c = d.constraint
    if step == 0:
        raise IndexError("slice step must not be zero")
    ilo, ihi = d.implicit_lower, d.implicit_upper
    if start is None:
        start = d.inclusive_min if step > 0 else d.inclusive_max
    else:
        ilo = False
    if stop is None:
        inclusive_stop = d.inclusive_max if step > 0 else d.inclusive_min
    else:
        ihi = False
        inclusive_stop = stop - 1 if step > 0 else stop + 1
    if abs(step) != 1 and abs(start) == INF:
        raise IndexError(f"slicing with step {step} needs a finite start index")
    if step > 0:
        amin, amax = start, inclusive_stop
    else:
        amin, amax = inclusive_stop, start
        ilo, ihi = ihi, ilo
    if amax < amin - 1:
        raise IndexError(f"slice [{start}:{stop}:{step}] of {d} has a negative size")
    if amax >= amin and (amin < lo_c or amax > hi_c):
        raise IndexError(f"slice interval [{amin}, {amax + 1}) is not contained within {d}")
    new_start = int(start / step) if abs(start) != INF else start // step  # C++ truncation
    if abs(inclusive_stop) == INF:
        new_hi = INF
    else:
        new_hi = new_start + _ceil_div(amax - amin + 1, abs(step)) - 1
    new = Dim(new_start, new_hi, ilo, ihi, d.label)
    return new, start - new_start * step


def _check_index(d: Dim, index: int, dim: int) -> None:
    lo, hi = d.constraint
    if not lo <= index <= hi:
        raise IndexError(f"index {index} is outside the bounds {d} of dimension {dim}")


def _new_axis() -> Dim:
    return Dim(0, 0, True, True, "")


def _reorder(transform: IndexTransform, perm: Sequence[int]) -> IndexTransform:
    """New input dimension ``i`` is old input dimension ``perm[i]``."""
    dims = [transform.domain.dims[p] for p in perm]
    where = {p: i for i, p in enumerate(perm)}
    inner = [OutputMap(0, 1, where[k]) for k in range(transform.input_rank)]
    return transform.compose(IndexTransform(IndexDomain(dims), inner))


def _is_array_index(term: object) -> bool:
    return isinstance(term, list | np.ndarray) or (
        isinstance(term, tuple) and not isinstance(term, str)
    )


def apply_numpy_index(transform: IndexTransform, selection: Any) -> IndexTransform:
    """``view[selection]`` in TensorStore's NumPy-style indexing, in domain coordinates:
    integers (not wrapped: ``-1`` is the coordinate -1), slices with steps, ``...`` and
    ``None`` (a new dimension of size 1); dimension expressions (:data:`d`) are applied."""
    if isinstance(selection, DimExpression):
        return selection.apply(transform)
    terms = selection if isinstance(selection, tuple) else (selection,)
    return _index_dims(transform, terms, list(range(transform.input_rank)), allow_newaxis=True)


def _index_dims(
    transform: IndexTransform,
    terms: Sequence[Any],
    selected: list[int],
    *,
    allow_newaxis: bool,
) -> IndexTransform:
    """Apply NumPy-style index ``terms`` to the ``selected`` input dimensions, in order;
    unselected dimensions keep their place."""
    for t in terms:
        if _is_array_index(t) or isinstance(t, bool | np.bool_):
            raise IndexError(
                f"index {t!r}: index arrays and masks are not supported by zarrox views; "
                "read through the array's oindex/vindex"
            )
        if not (t is None or t is Ellipsis or isinstance(t, slice) or is_int(t)):
            raise IndexError(f"unsupported index {t!r}")
    if sum(t is Ellipsis for t in terms) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consuming = [t for t in terms if t is not None and t is not Ellipsis]
    if len(consuming) > len(selected):
        raise IndexError(
            f"too many indices: {len(consuming)} given for {len(selected)} dimension(s)"
        )
    if Ellipsis in terms:
        i = next(i for i, t in enumerate(terms) if t is Ellipsis)
        fill = [slice(None)] * (len(selected) - len(consuming))
        terms = [*terms[:i], *fill, *terms[i + 1 :]]
    else:
        terms = [*terms, *[slice(None)] * (len(selected) - len(consuming))]
    old = transform.domain.dims
    # Each selected dimension becomes a new dimension (a slice) or goes (an integer); new
    # axes are inserted where they appear (full indexing only, where ``selected`` is every
    # dimension in order); the other dimensions keep their place.
    replaced: dict[int, tuple[Dim, OutputMap] | int] = {}
    order: list[int | None] = []  # old dimension, or None for a new axis, in new order
    pos = 0
    for t in terms:
        if t is None:
            if not allow_newaxis:
                raise IndexError("newaxis is not supported in a dimension expression")
            order.append(None)
            continue
        k = selected[pos]
        pos += 1
        d = old[k]
        if isinstance(t, slice):
            step = 1 if t.step is None else int(t.step)
            new, offset = _strided_slice(
                d,
                None if t.start is None else int(t.start),
                None if t.stop is None else int(t.stop),
                step,
            )
            replaced[k] = (new, OutputMap(offset, step))
        else:
            index = int(t)
            _check_index(d, index, k)
            replaced[k] = index
        order.append(k)
    if not allow_newaxis:
        order = list(range(len(old)))
    dims: list[Dim] = []
    inner_maps: dict[int, OutputMap] = {}
    for j in order:
        if j is None:
            dims.append(_new_axis())
        elif j not in replaced:
            inner_maps[j] = OutputMap(0, 1, len(dims))
            dims.append(old[j])
        elif isinstance(r := replaced[j], int):
            inner_maps[j] = OutputMap(r)
        else:
            inner_maps[j] = OutputMap(r[1].offset, r[1].stride, len(dims))
            dims.append(r[0])
    inner = IndexTransform(IndexDomain(dims), [inner_maps[k] for k in range(len(old))])
    return transform.compose(inner)


def _per_dim(values: Any, n: int, what: str) -> list[Any]:
    vals = list(values) if isinstance(values, list | tuple | np.ndarray) else [values]
    if len(vals) == 1 and n != 1:
        vals = vals * n
    if len(vals) != n:
        raise IndexError(f"{what}: {len(vals)} value(s) given for {n} dimension(s)")
    return vals


def translate(
    transform: IndexTransform, dims: list[int], values: Any, *, to: bool, backward: bool = False
) -> IndexTransform:
    vals = _per_dim(values, len(dims), "translate_to" if to else "translate_by")
    old = transform.domain.dims
    new_dims = list(old)
    inner = [OutputMap(0, 1, k) for k in range(len(old))]
    for k, v in zip(dims, vals, strict=True):
        if v is None:
            continue
        d = old[k]
        if to:
            if d.inclusive_min == -INF:
                raise IndexError(f"translate_to: dimension {k} {d} is not bounded below")
            delta = int(v) - d.inclusive_min
        else:
            delta = -int(v) if backward else int(v)
        new_dims[k] = replace(
            d,
            inclusive_min=d.inclusive_min if d.inclusive_min == -INF else d.inclusive_min + delta,
            inclusive_max=d.inclusive_max if d.inclusive_max == INF else d.inclusive_max + delta,
        )
        inner[k] = OutputMap(-delta, 1, k)
    return transform.compose(IndexTransform(IndexDomain(new_dims), inner))


def label(transform: IndexTransform, dims: list[int], names: Any) -> IndexTransform:
    vals = _per_dim([names] if isinstance(names, str) else names, len(dims), "label")
    new_dims = list(transform.domain.dims)
    for k, v in zip(dims, vals, strict=True):
        if not isinstance(v, str):
            raise IndexError(f"label: expected a string, got {v!r}")
        new_dims[k] = replace(new_dims[k], label=v)
    try:
        domain = IndexDomain(new_dims)
    except SpecError as e:
        raise IndexError(str(e)) from None
    return IndexTransform(domain, transform.output)


def stride(transform: IndexTransform, dims: list[int], strides: Any) -> IndexTransform:
    vals = _per_dim(strides, len(dims), "stride")
    new_dims = list(transform.domain.dims)
    inner = [OutputMap(0, 1, k) for k in range(len(new_dims))]
    for k, s in zip(dims, vals, strict=True):
        s = int(s)
        if s == 0:
            raise IndexError("stride must not be zero")
        new_dims[k] = _affine_domain(new_dims[k], s)
        inner[k] = OutputMap(0, s, k)
    return transform.compose(IndexTransform(IndexDomain(new_dims), inner))


def move_dims(transform: IndexTransform, dims: list[int], targets: Any) -> IndexTransform:
    """Move the selected dimensions to ``targets`` (TensorStore's ``transpose[...]``)."""
    rank = transform.input_rank
    if isinstance(targets, slice):
        tgt = list(range(rank))[targets]
    else:
        tgt = _per_dim(targets, len(dims), "transpose")
    tgt = [int(t) + rank if int(t) < 0 else int(t) for t in tgt]
    if len(tgt) != len(dims) or len(set(tgt)) != len(tgt) or any(not 0 <= t < rank for t in tgt):
        raise IndexError(f"transpose: invalid target dimensions {tgt} for rank {rank}")
    perm: list[int | None] = [None] * rank
    for k, t in zip(dims, tgt, strict=True):
        perm[t] = k
    rest = iter(k for k in range(rank) if k not in dims)
    order = [p if p is not None else next(rest) for p in perm]
    return _reorder(transform, order)


def transpose(transform: IndexTransform, axes: Sequence[int] | None = None) -> IndexTransform:
    rank = transform.input_rank
    order = list(range(rank))[::-1] if axes is None else [int(a) % rank for a in axes]
    if sorted(order) != list(range(rank)):
        raise IndexError(f"transpose: {list(axes or [])} is not a permutation of the dimensions")
    return _reorder(transform, order)


# --------------------------------------------------------------------------------------------
# Dimension expressions: d["x", 0].translate_to[5], d[1][2:8:2], ...
# --------------------------------------------------------------------------------------------


class Subscript:
    """``x.op[values]``: applies an operation with its arguments."""

    def __init__(self, apply: Callable[[Any], Any]) -> None:
        self._apply = apply

    def __getitem__(self, values: Any) -> Any:
        return self._apply(values)


class TransformOps:
    """The operations written ``x.op[values]`` that views and dimension expressions share."""

    def _subscript(self, op: str) -> Subscript:
        raise NotImplementedError

    @property
    def translate_to(self) -> Subscript:
        return self._subscript("translate_to")

    @property
    def translate_by(self) -> Subscript:
        return self._subscript("translate_by")

    @property
    def translate_backward_by(self) -> Subscript:
        return self._subscript("translate_backward_by")

    @property
    def label(self) -> Subscript:
        return self._subscript("label")


class DimExpression(TransformOps):
    """Selected dimensions and the operations to apply to them (TensorStore's ``ts.d``):
    ``view[d["x"].translate_to[0]]``, ``view[d[0, 1].transpose[1, 0]]``,
    ``view[d["y"][2:10:2]]``, ``view[d[0].stride[4]]``, ``view[d[:].label["a", "b"]]``.

    Dimensions are selected by index (negative counts from the end), by label, by a slice of
    indices, or ``...`` (all)."""

    def __init__(self, selection: tuple[Any, ...], ops: tuple[tuple[str, Any], ...] = ()) -> None:
        self._selection = selection
        self._ops = ops

    def _then(self, op: str, values: Any) -> DimExpression:
        return DimExpression(self._selection, (*self._ops, (op, values)))

    def _subscript(self, op: str) -> Subscript:
        return Subscript(lambda values: self._then(op, values))

    @property
    def stride(self) -> Subscript:
        return self._subscript("stride")

    @property
    def transpose(self) -> Subscript:
        return self._subscript("transpose")

    def __getitem__(self, index: Any) -> DimExpression:
        return self._then("index", index)

    def resolve(self, domain: IndexDomain) -> list[int]:
        """The selected dimension indices in ``domain``."""
        rank = domain.rank
        out: list[int] = []
        for s in self._selection:
            if s is Ellipsis:
                out.extend(range(rank))
            elif isinstance(s, slice):
                out.extend(range(rank)[s])
            elif isinstance(s, str):
                if s not in domain.labels:
                    raise IndexError(f"no dimension is labelled {s!r} in {domain}")
                out.append(domain.labels.index(s))
            elif is_int(s):
                k = int(s)
                if not -rank <= k < rank:
                    raise IndexError(f"dimension {k} is out of range for rank {rank}")
                out.append(k % rank)
            else:
                raise IndexError(f"cannot select a dimension with {s!r}")
        if len(set(out)) != len(out):
            raise IndexError(f"dimension {self._selection!r} is selected more than once")
        return out

    def apply(self, transform: IndexTransform) -> IndexTransform:
        dims = self.resolve(transform.domain)
        for op, values in self._ops:
            transform, dims = _DIM_OPS[op](transform, dims, values)
        return transform

    def __repr__(self) -> str:
        sel = ",".join(repr(s) for s in self._selection)
        ops = "".join(f".{op}[{v!r}]" if op != "index" else f"[{v!r}]" for op, v in self._ops)
        return f"d[{sel}]{ops}"


def _op_index(t: IndexTransform, dims: list[int], index: Any) -> tuple[IndexTransform, list[int]]:
    terms = index if isinstance(index, tuple) else (index,)
    new = _index_dims(t, terms, dims, allow_newaxis=False)
    consuming = [x for x in terms if x is not Ellipsis]
    removed = {k for k, x in zip(dims, consuming, strict=False) if is_int(x)}
    kept = [k for k in dims if k not in removed]
    # the kept dimensions stay selected, at their new positions
    return new, [k - sum(1 for r in removed if r < k) for k in kept]


def _op_simple(
    fn: Callable[..., IndexTransform], **kw: Any
) -> Callable[[IndexTransform, list[int], Any], tuple[IndexTransform, list[int]]]:
    def op(t: IndexTransform, dims: list[int], values: Any) -> tuple[IndexTransform, list[int]]:
        return fn(t, dims, values, **kw), dims

    return op


def _op_transpose(
    t: IndexTransform, dims: list[int], targets: Any
) -> tuple[IndexTransform, list[int]]:
    rank = t.input_rank
    if isinstance(targets, slice):
        tgt = list(range(rank))[targets]
    else:
        tgt = [int(x) % rank for x in _per_dim(targets, len(dims), "transpose")]
    return move_dims(t, dims, targets), tgt


_DIM_OPS: dict[str, Callable[[IndexTransform, list[int], Any], tuple[IndexTransform, list[int]]]]
_DIM_OPS = {
    "translate_to": _op_simple(translate, to=True),
    "translate_by": _op_simple(translate, to=False),
    "translate_backward_by": _op_simple(translate, to=False, backward=True),
    "label": _op_simple(label),
    "stride": _op_simple(stride),
    "transpose": _op_transpose,
    "index": _op_index,
}


class _DimSelector:
    """``d[...]``: starts a dimension expression."""

    def __getitem__(self, selection: Any) -> DimExpression:
        sel = selection if isinstance(selection, tuple) else (selection,)
        return DimExpression(sel)

    def __repr__(self) -> str:
        return "zarrox.d"


#: Selects dimensions for an operation, as TensorStore's ``ts.d``.
d = _DimSelector()
