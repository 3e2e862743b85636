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
``IndexTransform``). Domains, transforms and their operations are the Rust core's
(``rust/selection/index_space.rs``); this module adds dimension expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zarrox._core import INDEX_INF as INF
from zarrox._core import Dim, IndexDomain, IndexTransform, OutputMap
from zarrox.tensorstore_spec._json import is_int

merge_domains = IndexDomain.merge


def apply_numpy_index(transform: IndexTransform, selection: Any) -> IndexTransform:
    """``view[selection]`` in TensorStore's NumPy-style indexing, in domain coordinates:
    integers (not wrapped: ``-1`` is the coordinate -1), slices with steps, ``...`` and
    ``None`` (a new dimension of size 1); dimension expressions (:data:`d`) are applied."""
    if isinstance(selection, DimExpression):
        return selection.apply(transform)
    terms = selection if isinstance(selection, tuple) else (selection,)
    return transform.index(terms, list(range(transform.input_rank)), True)[0]


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
    ints = [None if v is None else (-int(v) if backward else int(v)) for v in vals]
    return transform.translate(dims, ints, to)


def label(transform: IndexTransform, dims: list[int], names: Any) -> IndexTransform:
    vals = _per_dim([names] if isinstance(names, str) else names, len(dims), "label")
    for v in vals:
        if not isinstance(v, str):
            raise IndexError(f"label: expected a string, got {v!r}")
    return transform.label(dims, vals)


def stride(transform: IndexTransform, dims: list[int], strides: Any) -> IndexTransform:
    return transform.stride(dims, [int(s) for s in _per_dim(strides, len(dims), "stride")])


def _targets(rank: int, dims: list[int], targets: Any) -> list[int]:
    if isinstance(targets, slice):
        return list(range(rank))[targets]
    return [int(t) for t in _per_dim(targets, len(dims), "transpose")]


def transpose(transform: IndexTransform, axes: Sequence[int] | None = None) -> IndexTransform:
    rank = transform.input_rank
    order = list(range(rank))[::-1] if axes is None else [int(a) % rank for a in axes]
    return transform.reorder(order)


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
    """The index applied to the selected dimensions, which stay selected where they remain."""
    return t.index(index if isinstance(index, tuple) else (index,), dims, False)


def _op_simple(
    fn: Callable[..., IndexTransform], **kw: Any
) -> Callable[[IndexTransform, list[int], Any], tuple[IndexTransform, list[int]]]:
    def op(t: IndexTransform, dims: list[int], values: Any) -> tuple[IndexTransform, list[int]]:
        return fn(t, dims, values, **kw), dims

    return op


def _op_transpose(
    t: IndexTransform, dims: list[int], targets: Any
) -> tuple[IndexTransform, list[int]]:
    """The selected dimensions moved to ``targets`` (TensorStore's ``transpose[...]``)."""
    return t.move_dims(dims, _targets(t.input_rank, dims, targets))


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


__all__ = [
    "INF",
    "Dim",
    "DimExpression",
    "IndexDomain",
    "IndexTransform",
    "OutputMap",
    "apply_numpy_index",
    "d",
    "merge_domains",
]
