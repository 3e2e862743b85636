"""The grammar of v2 type strings (numpy's ``dtype.str`` with an explicit byte order:
``"<f8"``, ``"|S12"``, ``"<M8[10s]"``, ``"|O"``) that every data type's v2 parser shares."""

from __future__ import annotations

import re
from dataclasses import dataclass

from zarrox.errors import MetadataError

__all__ = ["TypeStr", "not_a_typestr"]

_TYPESTR_RE = re.compile(r"([<>|])([biufcmMSUVO])([0-9]*)(?:\[([0-9]*)([A-Za-zμ]+)\])?")


@dataclass(frozen=True)
class TypeStr:
    """A type string's parts: ``order`` ``"<"``, ``">"`` or ``"|"``; ``kind`` numpy's kind
    letter; ``size`` in bytes (None when absent); a time unit's ``scale`` digits and
    ``unit`` (None when there is no ``[...]``)."""

    text: str
    order: str
    kind: str
    size: int | None
    scale: str | None
    unit: str | None

    @classmethod
    def match(cls, value: object) -> TypeStr | None:
        """The parts of ``value``, or None if it is not a type string."""
        if not isinstance(value, str):
            return None
        m = _TYPESTR_RE.fullmatch(value)
        if m is None:
            return None
        order, kind, size, scale, unit = m.groups()
        return cls(value, order, kind, int(size) if size else None, scale, unit)


def not_a_typestr(value: str, where: str, label: str) -> MetadataError:
    """The error for a string that is no type string."""
    return MetadataError(
        f"{where}{label}: {value!r} is not a numpy type string with an explicit byte order "
        '(e.g. "<f8", ">i4", "|b1", "|S12", "<M8[ns]") or a list of fields'
    )
