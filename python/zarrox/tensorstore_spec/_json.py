"""Checking the members of a JSON spec, with errors that name the member.

Every check takes ``where``, the dotted path of the value being checked
(``"metadata.codecs[1].configuration"``), and raises :class:`SpecError` saying what that
member should have been.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrox.errors import SpecError, SpecMismatchError
from zarrox.metadata._checks import is_int, is_json_array


def member(where: str, name: str | int) -> str:
    """The path of member ``name`` (a key, or an index) of the value at ``where``."""
    if isinstance(name, int):
        return f"{where}[{name}]"
    return f"{where}.{name}" if where else name


def fail(where: str, message: str) -> SpecError:
    return SpecError(f"{where or 'spec'}: {message}")


def expected(where: str, want: Any, got: Any) -> SpecMismatchError:
    """A stored member that is not what a spec's ``metadata`` constrains it to."""
    return SpecMismatchError(
        f"{where}: expected {json.dumps(want)} but the stored array has {json.dumps(got)}"
    )


def dumps(doc: Mapping[str, Any]) -> bytes:
    """A metadata document as TensorStore writes it: sorted members, no whitespace."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def as_json(value: Any) -> Any:
    """``value`` with every object that has ``to_json()`` (zarrox and tensorstore specs,
    schemas, chunk layouts, domains) replaced by its JSON, numpy scalars by Python ones."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, Mapping | str):
        return as_json(to_json())
    if isinstance(value, Mapping):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return as_json(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return copy.deepcopy(value)


def expect_object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(where, f"expected a JSON object, got {value!r}")
    return dict(value)


def check_members(obj: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    """Fail on members of ``obj`` that are not in ``allowed`` (TensorStore rejects them)."""
    extra = [k for k in obj if k not in allowed]
    if extra:
        names = ", ".join(repr(k) for k in extra)
        raise fail(where, f"unknown member(s) {names}; expected only {list(allowed)}")


def expect_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise fail(where, f"expected true or false, got {value!r}")
    return bool(value)


def expect_int(value: object, where: str, *, lo: int | None = None, hi: int | None = None) -> int:
    if not is_int(value):
        raise fail(where, f"expected an integer, got {value!r}")
    v = int(value)  # type: ignore[call-overload]
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bounds = f"[{'-inf' if lo is None else lo}, {'+inf' if hi is None else hi}]"
        raise fail(where, f"expected an integer in the range {bounds}, got {v}")
    return v


def expect_str(value: object, where: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str):
        raise fail(where, f"expected a string, got {value!r}")
    if choices is not None and value not in choices:
        raise fail(where, f"expected one of {list(choices)}, got {value!r}")
    return value


def expect_list(value: object, where: str, length: int | None = None) -> list[Any]:
    if not is_json_array(value):
        raise fail(where, f"expected a JSON array, got {value!r}")
    items = list(value)
    if length is not None and len(items) != length:
        raise fail(where, f"expected an array of length {length}, got {len(items)} elements")
    return items


def expect_int_list(
    value: object,
    where: str,
    *,
    length: int | None = None,
    lo: int | None = None,
    hi: int | None = None,
) -> list[int]:
    items = expect_list(value, where, length)
    return [expect_int(v, member(where, i), lo=lo, hi=hi) for i, v in enumerate(items)]
