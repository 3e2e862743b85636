"""Data types of every Zarr format (v1, v2, draft v3, v3): the core types and the extension types
zarr-python and tensorstore write.

One class per data type (or family of data types differing only by parameters), each holding
its numpy dtype, its v3 ``data_type`` JSON, its v2 ``dtype`` JSON, its fill-value encodings
for both formats and the descriptor the Rust core consumes (:mod:`.base`); the registry
(:mod:`.registry`) resolves JSON or a numpy dtype to one.

Modules: :mod:`.base` (the base class), :mod:`.floats` (float formats and their JSON),
:mod:`.numeric` (bool, integers, floats, complex), :mod:`.time` (datetime64/timedelta64),
:mod:`.fixed` (fixed-length strings and bytes, raw bytes), :mod:`.struct` (structured types),
:mod:`.variable` (variable-length string and bytes, v2 objects), :mod:`.registry`.

Names as the registry (https://github.com/zarr-developers/zarr-extensions) and the writers spell
them:

- core: ``bool``, ``int8`` .. ``uint64``, ``float16/32/64``, ``complex64/128``, ``r<N>``;
- ml_dtypes types (imported lazily; ``pip install zarrox[ml]``): ``bfloat16``, ``float8_*``,
  ``float4_e2m1fn``, ``float6_*``, ``int2``, ``int4``, ``uint2``, ``uint4``; in v2, those
  TensorStore names (its extension: the name as ``dtype``, see ``DataType.V2_NAMES``);
- complex types: ``complex_float32``/``complex_float64`` (aliases of complex64/complex128),
  ``complex_float16``, ``complex_bfloat16``, ``complex_float8_*``, ``complex_float4_e2m1fn``,
  ``complex_float6_*``; numpy has no such complex types, so all but the two aliases map to a
  structured dtype ``[("real", T), ("imag", T)]``;
- ``numpy.datetime64`` / ``numpy.timedelta64`` (configuration ``unit``, ``scale_factor``);
- ``fixed_length_utf32`` (numpy ``U``), ``null_terminated_bytes`` (numpy ``S``), ``raw_bytes``
  (numpy ``V``), each with configuration ``length_bytes``;
- ``struct`` (fields as objects, fill value an object) and the legacy ``structured`` that
  zarr-python 3.1 writes (fields as ``[name, data_type]`` pairs, fill value base64);
- variable-length ``string`` (numpy StringDType, object before numpy 2) and ``bytes`` (object;
  zarr-python 3.1 spells it ``variable_length_bytes``).
"""

from __future__ import annotations

from zarrox.metadata.dtypes.base import (
    DataType,
    cast_values,
    native_dtype,
    typestr,
    zarr_json_where,
)
from zarrox.metadata.dtypes.fixed import FixedUtf32Type, NullTerminatedBytesType, RawBytesType
from zarrox.metadata.dtypes.floats import FLOAT_FORMATS, FloatFormat
from zarrox.metadata.dtypes.numeric import (
    CORE_INTS,
    SMALL_INTS,
    BoolType,
    ComplexType,
    FloatType,
    IntType,
)
from zarrox.metadata.dtypes.registry import (
    CONFIGURED_TYPES,
    CORE_TYPES,
    SIMPLE_TYPES,
    V2_TYPES,
    data_type_from_numpy,
    from_zarr_python_dtype,
    parse_data_type_json,
    parse_v2_dtype,
    v2_data_type,
    v2_json_class,
    v2_user_dtype,
    vlen_codec_id,
)
from zarrox.metadata.dtypes.struct import StructType
from zarrox.metadata.dtypes.time import TimeType
from zarrox.metadata.dtypes.variable import BytesType, ObjectType, StringType

#: the v3 error prefix under the name metadata/codecs.py imports
_where = zarr_json_where

__all__ = [
    "CONFIGURED_TYPES",
    "CORE_INTS",
    "CORE_TYPES",
    "FLOAT_FORMATS",
    "SIMPLE_TYPES",
    "SMALL_INTS",
    "V2_TYPES",
    "BoolType",
    "BytesType",
    "ComplexType",
    "DataType",
    "FixedUtf32Type",
    "FloatFormat",
    "FloatType",
    "IntType",
    "NullTerminatedBytesType",
    "ObjectType",
    "RawBytesType",
    "StringType",
    "StructType",
    "TimeType",
    "cast_values",
    "data_type_from_numpy",
    "from_zarr_python_dtype",
    "native_dtype",
    "parse_data_type_json",
    "parse_v2_dtype",
    "typestr",
    "v2_data_type",
    "v2_json_class",
    "v2_user_dtype",
    "vlen_codec_id",
    "zarr_json_where",
]
