"""Dimension units (``"4 nm"``, ``[4, "nm"]``) as TensorStore parses, merges and prints them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from zarrox.tensorstore_spec._json import expect_list, fail, is_int, member

_NUMBER = re.compile(r"([-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?\d+)?)\s*")


@dataclass(frozen=True)
class Unit:
    """A physical unit: ``multiplier`` times ``base_unit`` (``Unit(4.0, "nm")``)."""

    multiplier: float = 1.0
    base_unit: str = ""

    @classmethod
    def parse(cls, text: str) -> Unit:
        """``"4nm"``, ``"4 nm"``, ``"nm"``, ``"2.5e3 s"``, ``""`` -> Unit."""
        text = text.strip()
        m = _NUMBER.match(text)
        if m is None:
            return cls(1.0, text)
        return cls(float(m.group(1)), text[m.end() :])

    def to_string(self) -> str:
        """The string form TensorStore stores in ``attributes.dimension_units``."""
        number = format(self.multiplier, ".6g")
        if not self.base_unit:
            return number
        return self.base_unit if self.multiplier == 1 else f"{number} {self.base_unit}"

    def to_json(self) -> list[float | str]:
        """The ``[multiplier, base_unit]`` form of ``Schema.dimension_units``."""
        return [self.multiplier, self.base_unit]


Units = list[Unit | None]


def parse_unit(value: object, where: str) -> Unit | None:
    """A unit given as a string, ``[multiplier, base_unit]``, a number, a Unit, or None."""
    if value is None or isinstance(value, Unit):
        return value
    if isinstance(value, str):
        return Unit.parse(value)
    if is_int(value) or isinstance(value, float):
        return Unit(float(value), "")  # type: ignore[arg-type]
    multiplier = getattr(value, "multiplier", None)
    base = getattr(value, "base_unit", None)
    if isinstance(multiplier, int | float) and isinstance(base, str):  # tensorstore.Unit
        return Unit(float(multiplier), base)
    if isinstance(value, list | tuple) and len(value) == 2:
        multiplier, base = value
        if (is_int(multiplier) or isinstance(multiplier, float)) and isinstance(base, str):
            return Unit(float(multiplier), base)
    raise fail(where, f'expected a unit such as "4nm", [4, "nm"] or null, got {value!r}')


def parse_units(value: object, where: str, rank: int | None = None) -> Units:
    items = expect_list(value, where, rank)
    return [parse_unit(v, member(where, i)) for i, v in enumerate(items)]


def merge_units(existing: Units | None, new: Units | None, where: str) -> Units | None:
    """Combine two unit constraints; a unit given by both must be the same."""
    if new is None:
        return existing
    if existing is None:
        return list(new)
    if len(existing) != len(new):
        raise fail(where, f"has {len(new)} units, but {len(existing)} were given elsewhere")
    for a, b in zip(existing, new, strict=True):
        if a is not None and b is not None and a != b:
            raise fail(
                where,
                f"cannot merge dimension units {units_to_strings(new)} and "
                f"{units_to_strings(existing)}",
            )
    return [a if a is not None else b for a, b in zip(existing, new, strict=True)]


def units_to_strings(units: Sequence[Unit | None]) -> list[str | None]:
    return [None if u is None else u.to_string() for u in units]
