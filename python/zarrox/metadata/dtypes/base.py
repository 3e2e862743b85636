"""What every data type shares: the :class:`DataType` base class, error prefixes, base64 and
byte-order helpers.

A data type is one instance of a :class:`DataType` subclass. It holds its numpy dtype, its v3
``data_type`` JSON, its v2 ``dtype`` JSON and its fill-value encodings for both formats (read
from JSON, written to JSON, cast from a user value, the default, the bytes of one element).
Instances made for v3 hold the dtype in native byte order; instances made for v2
(:func:`~zarrox.metadata.dtypes.registry.v2_data_type`) hold it as stored (``>i4``).
"""

from __future__ import annotations

import base64
import binascii
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError
from zarrox.metadata._checks import document_where, is_int, is_json_array
from zarrox.metadata.dtypes.floats import ml_dtype
from zarrox.metadata.dtypes.typestr import TypeStr, not_a_typestr

__all__ = [
    "Category",
    "DataType",
    "b64decode",
    "b64encode",
    "cast_values",
    "little_endian",
    "ml_type_name",
    "native_dtype",
    "typestr",
    "zarr_json_where",
]

Category = Literal[
    "bool",
    "int",
    "small_int",
    "float",
    "complex",
    "raw",
    "raw_bytes",
    "null_terminated_bytes",
    "fixed_length_utf32",
    "datetime",
    "struct",
    "string",
    "bytes",
    "object",
]

#: What a v2 cast returns when the value's type does not fit the data type at all.
NO_CAST: Any = object()


def zarr_json_where(path: str | None) -> str:
    """The prefix of every v3 error message: ``"zarr.json at 'a/b': "`` (empty if no path)."""
    return document_where("zarr.json", path)


def native_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """``dtype`` in native byte order (structured dtypes field by field)."""
    if dtype.kind in "OT":
        return dtype
    try:
        return dtype.newbyteorder("=")
    except (TypeError, ValueError):
        return dtype


def ml_type_name(dt: np.dtype[Any]) -> str | None:
    """The name of an ml_dtypes type (``"bfloat16"``, ``"int4"``...), None for other dtypes."""
    t = dt.type
    return t.__name__ if str(getattr(t, "__module__", "")).startswith("ml_dtypes") else None


def little_endian(dt: np.dtype[Any]) -> np.dtype[Any]:
    """``dt`` in little-endian byte order (unchanged where numpy cannot swap it)."""
    try:
        return dt.newbyteorder("<")
    except (TypeError, ValueError):
        return dt


def cast_values(values: Any, dtype: np.dtype[Any] | Any) -> np.ndarray:
    """``np.asarray(values, dtype)``, except for datetime64/timedelta64 of the same unit and
    scale in another byte order, which are byte-swapped through int64: numpy does not swap
    them when casting generic-unit times (``>m8[2generic]`` to ``<m8[2generic]``)."""
    dt = np.dtype(dtype)
    arr = np.asarray(values)
    src = arr.dtype
    if (
        dt.kind in "mM"
        and src.kind == dt.kind
        and src != dt
        and np.datetime_data(src) == np.datetime_data(dt)
    ):
        ints = arr.view(src.str[0] + "i8").astype(dt.str[0] + "i8")
        return ints.view(dt)
    return np.asarray(arr, dtype=dt)


def typestr(dt: np.dtype[Any]) -> str:
    """``dt.str``, with a generic time unit's scale that numpy leaves out of it
    (``"<m8[2generic]"``, as zarr-python 3.4 writes it)."""
    if dt.kind in "mM":
        unit, scale = np.datetime_data(dt)
        if unit == "generic" and scale != 1:
            return f"{dt.str}[{scale}generic]"
    return dt.str


def b64decode(value: str, where: str, label: str, what: str) -> bytes:
    """Strict base64 -> bytes; invalid input is a MetadataError naming ``what``."""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MetadataError(f"{where}{label}: {value!r} is not valid base64 ({what})") from None


def b64decode_str(value: object, where: str, label: str, what: str) -> bytes:
    """As :func:`b64decode`, rejecting what is not a string (v2's message)."""
    if not isinstance(value, str):
        raise MetadataError(f"{where}{label}: expected a base64 string for {what}, got {value!r}")
    return b64decode(value, where, label, what)


def base64_or_byte_values(value: object, where: str, label: str, what: str) -> bytes | None:
    """The bytes of a fill value given as base64 (a string: :func:`b64decode`) or as an array
    of integers in [0, 255]; None when it is neither."""
    if isinstance(value, str):
        return b64decode(value, where, label, what)
    if is_json_array(value) and all(is_int(b) and 0 <= b <= 255 for b in value):
        return bytes(int(b) for b in value)
    return None


def b64encode(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


@dataclass(frozen=True, eq=False)
class DataType(ABC):
    """One data type (see the module docstring).

    ``name`` is the v3 name as written (``"structured"``, ``"variable_length_bytes"`` and
    ``"complex_float32"`` stay as they are); ``json`` the normalized v3 ``data_type`` member (a
    string for types without configuration, else ``{"name", "configuration"}``; None for the
    v2 layouts v3 has no type for); ``dtype`` the numpy dtype.

    Subclasses implement the fill-value encodings of the formats they exist in; the methods
    here are what their layouts share. A type without a form in one format (v3's ``string``
    and ``bytes`` are v2's object type, which has no v3 form) raises UnsupportedDataTypeError
    there.
    """

    name: str
    json: Any
    dtype: np.dtype[Any]

    # ---- what a subclass describes ---------------------------------------------------------

    @property
    @abstractmethod
    def category(self) -> Category:
        """The family, as codec checks test it (``"int"``, ``"float"``, ``"struct"``...)."""

    @property
    def float_format(self) -> Any:
        """The :class:`~zarrox.metadata.dtypes.floats.FloatFormat` of float and complex types."""
        return None

    @property
    def fields(self) -> tuple[tuple[str, DataType], ...]:
        """``(name, data type)`` of a v3 struct's fields; empty for the other types."""
        return ()

    @property
    def is_variable_length(self) -> bool:
        return False

    @property
    def core_name(self) -> str | None:
        """The Rust core's name for a core type (aliases resolved), else None."""
        return None

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        """``(swap, floats)`` of one element: byte-order components ``[offset, length]`` and
        IEEE-like float components ``[offset, format]``."""
        return [], []

    def packbits_layout(self) -> tuple[int, int] | None:
        """``(bits per component, components)`` for the packbits codec; None if unsupported."""
        return None

    def _no_form(self, zarr_format: str, where: str = "") -> UnsupportedDataTypeError:
        other = "v2's object type" if zarr_format == "v2" else "string or bytes"
        return UnsupportedDataTypeError(
            f"{where}data type {self.name!r} has no {zarr_format} fill value encoding (its "
            f"{zarr_format} form is {other})"
        )

    # ---- derived ---------------------------------------------------------------------------

    @property
    def has_byte_order(self) -> bool:
        """Whether the bytes codec's ``endian`` applies (some component is multi-byte)."""
        return not self.is_variable_length and bool(self.components()[0])

    def core_json(self) -> str | dict[str, Any]:
        """``data_type`` as the Rust core takes it (see
        :class:`~zarrox.metadata.description.ArrayDescription`)."""
        core = self.core_name
        if core is not None:
            return core
        swap, floats = self.components()
        return {"size": self.dtype.itemsize, "swap": swap, "floats": floats}

    # ---- v3 fill values --------------------------------------------------------------------

    def default_fill(self) -> Any:
        """The fill value zarr-python records when none is given."""
        return np.zeros((), dtype=self.dtype)[()]

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        """The v3 JSON fill value -> numpy scalar of :attr:`dtype` (``str``/``bytes`` for the
        variable-length types)."""
        raise self._no_form("v3", where)

    def fill_to_json(self, scalar: Any) -> Any:
        """A fill value as :meth:`parse_fill`/:meth:`cast_fill` return it -> its v3 JSON form,
        as zarr-python 3.1 (or, for the types it lacks, tensorstore) writes it."""
        raise self._no_form("v3")

    def cast_fill(self, value: object, where: str = "") -> Any:
        """A user-given fill value -> what :meth:`parse_fill` returns; ``None`` gives
        :meth:`default_fill`. Accepts the JSON forms, numpy scalars (kept bit-exact when
        already of :attr:`dtype`) and Python values."""
        if value is None:
            return self.default_fill()
        if not self.is_variable_length and isinstance(value, np.generic):
            if native_dtype(value.dtype) == self.dtype:
                return np.asarray(value).astype(self.dtype)[()]
        return self._cast_fill(value, where, "fill_value")

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        raise self._no_form("v3", where)

    def fill_bytes(self, scalar: Any) -> bytes:
        """One element holding ``scalar``, native byte order."""
        dt = self.dtype
        if not (isinstance(scalar, np.generic) and scalar.dtype == dt):
            scalar = self.cast_fill(scalar)
        return np.asarray(scalar, dtype=dt).tobytes()

    # ---- v2 dtype: which forms are this class's, and reading them --------------------------

    #: the kind letters (numpy's ``dtype.kind``) of this class's v2 type strings
    V2_KINDS: ClassVar[str] = ""
    #: whether this class's type strings take a time unit (``"<M8[10s]"``)
    _V2_TAKES_UNIT: ClassVar[bool] = False
    #: the ml_dtypes types of this class that have a v2 form: TensorStore's extension, which
    #: writes the type's name as the ``dtype`` (``"bfloat16"``, ``"int4"``), stored
    #: little-endian, one byte per value for the types narrower than a byte
    V2_NAMES: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def check_v2_json(cls, value: object) -> bool:
        """Whether the v2 ``dtype`` member ``value`` is one of this class's forms (a type
        string of one of its kinds, or one of its :attr:`V2_NAMES`), valid or not:
        :meth:`parse_v2_json` says which."""
        if isinstance(value, str) and value in cls.V2_NAMES:
            return True
        ts = TypeStr.match(value)
        return ts is not None and ts.kind in cls.V2_KINDS

    @classmethod
    def parse_v2_json(cls, value: object, where: str = "", label: str = "dtype") -> np.dtype[Any]:
        """One of this class's v2 ``dtype`` forms -> numpy dtype, byte order as stored.

        Invalid forms, and the forms of other classes, raise MetadataError (or
        UnsupportedDataTypeError for the types zarrox knows but cannot hold);
        ``where`` starts every message (``".zarray at 'a': "``)."""
        if isinstance(value, str) and value in cls.V2_NAMES:
            return ml_dtype(value, where)
        ts = cls._own_typestr(value, where, label)
        if ts.size is None:
            raise MetadataError(f"{where}{label}: {value!r} has no size (e.g. '<i4', '|S5')")
        cls._check_v2_typestr(ts, where, label)
        if ts.order == "|" and cls._v2_has_byte_order(ts.size):
            raise MetadataError(
                f"{where}{label}: {value!r} needs a byte order, '<' or '>' "
                f"(e.g. {'<' + ts.text[1:]!r})"
            )
        # Types without a byte order are written with '|'; '<' and '>' are accepted for them
        # and dropped (numpy does the same).
        try:
            return np.dtype(ts.text)
        except TypeError as e:  # pragma: no cover - the grammar screens the forms numpy takes
            raise MetadataError(f"{where}{label}: invalid data type {value!r}: {e}") from None

    @classmethod
    def _own_typestr(cls, value: object, where: str, label: str) -> TypeStr:
        """``value`` as a type string of this class's kinds (see :meth:`parse_v2_json`)."""
        ts = TypeStr.match(value)
        if ts is None and isinstance(value, str):
            raise not_a_typestr(value, where, label)
        if ts is None or ts.kind not in cls.V2_KINDS:
            raise MetadataError(
                f"{where}{label}: {value!r} is not a v2 dtype of {cls.__name__} (type strings "
                f"of kind {' or '.join(repr(k) for k in cls.V2_KINDS) or 'none'})"
            )
        if ts.unit is not None and not cls._V2_TAKES_UNIT:
            raise MetadataError(f"{where}{label}: {value!r}: only M8/m8 types take a [unit]")
        return ts

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        """This class's rules for a type string's size (and unit); none by default."""
        return None

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        """Whether a type string of ``size`` bytes must say '<' or '>'."""
        return False

    @classmethod
    def check_v2_dtype(cls, dtype: np.dtype[Any]) -> bool:
        """Whether a v2 array of numpy dtype ``dtype`` has this class's data type (an
        ml_dtypes type only by its name, in :attr:`V2_NAMES`)."""
        ml_name = ml_type_name(dtype)
        if ml_name is not None:
            return ml_name in cls.V2_NAMES
        return dtype.kind in cls.V2_KINDS and dtype.fields is None

    @classmethod
    def from_v2_dtype(cls, dtype: np.dtype[Any], v3_json: Any) -> DataType:
        """The data type of a v2 array of numpy dtype ``dtype`` (as stored), whose v3
        ``data_type`` is ``v3_json`` (None where v3 has no such type)."""
        if isinstance(v3_json, str):
            name = v3_json
        else:
            name = (v3_json or {}).get("name", typestr(dtype))
        return cls(name, v3_json, dtype)

    # ---- v2 --------------------------------------------------------------------------------

    def v2_json(self) -> str | list[Any]:
        """The ``.zarray`` ``dtype`` member: numpy's type string (byte order as held), or an
        ml_dtypes type's name (:attr:`V2_NAMES`)."""
        return self.name if self.name in self.V2_NAMES else typestr(self.dtype)

    def v2_core_name(self, where: str = "") -> str:
        """The v3 core data type the Rust core uses for this v2 dtype: the numeric types by
        name (any byte order), the others as raw bits ``r<8 * itemsize>``."""
        return native_dtype(self.dtype).name

    def v2_core_json(self) -> str | dict[str, Any]:
        """``data_type`` as the Rust core takes it for a v2 array: :meth:`v2_core_name`, or
        for an ml_dtypes type (:attr:`V2_NAMES`) its layout as v3 gives it (:meth:`core_json`)."""
        return self.core_json() if self.name in self.V2_NAMES else self.v2_core_name()

    def parse_v2_fill(self, value: object, where: str = "") -> Any:
        """The ``.zarray`` ``fill_value`` -> numpy scalar (None for ``null``)."""
        if value is None:
            return None
        return self._parse_v2_fill(value, where, "fill_value")

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        raise self._no_form("v2", where)

    def v2_fill_json(self, value: Any) -> Any:
        """A fill value as :meth:`parse_v2_fill` returns it -> its JSON form, as zarr-python
        2.18 and 3.1 both write it."""
        if value is None:
            return None
        return self._v2_fill_json(value)

    def _v2_fill_json(self, value: Any) -> Any:
        raise self._no_form("v2")

    def cast_v2_fill(self, value: object, where: str = "") -> Any:
        """A user-given fill value (``create``) -> the form :meth:`parse_v2_fill` returns.

        Takes Python and numpy scalars; the JSON forms too (``"NaN"``; base64 strings are NOT
        decoded: for ``S`` types a ``str`` is encoded as ASCII, as numpy does)."""
        if value is None:
            return None
        label = "fill_value"
        try:
            out = self._cast_v2_fill(value, where, label)
        except MetadataError:
            raise
        except (TypeError, ValueError, UnicodeEncodeError) as e:
            raise MetadataError(
                f"{where}{label}: cannot use {value!r} for data type {self.v2_json()!r}: {e}"
            ) from None
        if out is NO_CAST:
            raise MetadataError(
                f"{where}{label}: cannot use {value!r} for data type {self.v2_json()!r}"
            )
        return out

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        raise self._no_form("v2", where)

    def default_v2_fill(self) -> Any:
        """The fill value zarr-python 3.1 uses when none is given (and for ``null`` when
        reading): zero / false / empty, NaT for ``M8``/``m8``."""
        return np.zeros((), dtype=native_dtype(self.dtype))[()]

    def v2_fill_bytes(self, value: Any) -> bytes:
        """One element holding the v2 fill value, as bytes for the Rust core.

        Numeric types: NATIVE byte order (the core byte-swaps chunks). Raw types (``S``,
        ``U``, ``V``, structured, ``M8``, ``m8``): the bytes in the STORED byte order, as in
        a chunk. ``null`` (None) gives the default (:meth:`default_v2_fill`), as zarr-python
        3.1 reads it."""
        if value is None:
            value = self.default_v2_fill()
        return np.asarray(value, dtype=native_dtype(self.dtype)).tobytes()
