"""numcodecs' ``pickle`` codec, which only Python can run, around the Rust engine.

A v2 array may store its chunks pickled (``"compressor": {"id": "pickle", "protocol": 5}``,
or ``pickle`` as its last filter). Unpickling runs whatever code the stored bytes name, so
a chunk is never unpickled unless the user opts in (zarr-python 3.4 does the same,
advisory GHSA-jqc8-qjfv-5m6r):

- zarrox's own API: ``zarrox.config.set({"array.allow_unsafe_pickle_decode": True})``;
- zarrox as zarr-python's codec pipeline: zarr-python's own setting of that name (and,
  since the pipeline decodes with ``numcodecs.Pickle``, numcodecs' own opt-in,
  ``numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE``, where numcodecs has one).

Writing needs no opt-in (a write that covers a chunk only partly reads it first, and so
needs it). The engine runs the rest of the chain (the bytes serializer, or the vlen-utf8 /
vlen-bytes filter before the pickle codec); this module turns its bytes into the object
numcodecs pickles, as zarr-python hands it over (the chunk as a writable array of the
array's data type, shape and order; the vlen filter's ``bytearray``), and back.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from zarrox.errors import CodecError, PickleCodecDisabledError
from zarrox.storage.base import ServesEngine

#: the configuration key that allows unpickling, in zarrox's and zarr-python's configuration
ALLOW_KEY = "array.allow_unsafe_pickle_decode"


@dataclass(frozen=True)
class PickleStage:
    """The pickle codec as the outermost stage of a v2 array's chain.

    ``pickles``: what numcodecs' ``Pickle.encode`` is given: ``"array"`` (no other filter: the
    chunk as an array of ``dtype``, ``shape`` and ``order``) or ``"bytearray"`` (the output
    of the vlen-utf8 / vlen-bytes filter)."""

    protocol: int
    pickles: Literal["array", "bytearray"]
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    order: Literal["C", "F"]

    def encode(self, raw: Any) -> bytes:
        """The stored bytes of a chunk the engine encoded to ``raw`` (the bytes the codec
        before the pickle codec gives), byte for byte what numcodecs.Pickle writes."""
        data = bytearray(raw)
        obj: Any = data
        if self.pickles == "array":
            obj = np.frombuffer(data, dtype=self.dtype).reshape(self.shape, order=self.order)
        return pickle.dumps(obj, protocol=self.protocol)

    def decode(
        self, stored: Any, where: str, *, unpickle: Callable[[Any], Any] | None = None
    ) -> bytes:
        """The bytes the engine decodes from a stored chunk: the unpickled object's bytes in
        memory order. ``unpickle`` (default: ``pickle.loads``) runs only after the caller
        checked the opt-in (see :func:`check_allowed`); ``where`` names the chunk in errors."""
        obj = (unpickle or pickle.loads)(stored)
        try:
            return memoryview(obj).tobytes(order="A")
        except (TypeError, ValueError) as e:
            raise CodecError(
                f"{where}: the pickle codec decoded a {type(obj).__name__}, not a buffer of "
                f"the chunk's bytes ({e})"
            ) from None


def check_allowed(allowed: Any, where: str, how: str) -> None:
    """Raise :class:`~zarrox.errors.PickleCodecDisabledError` unless ``allowed`` is exactly
    True (a configuration value; an unparsed environment string such as ``"false"`` does
    not count). ``where`` names the array and chunk; ``how`` says how to opt in."""
    if allowed is True:
        return
    raise PickleCodecDisabledError(
        f"{where}: refusing to decode data with the 'pickle' codec, because unpickling data "
        f"from an untrusted source can execute arbitrary code (GHSA-jqc8-qjfv-5m6r). If you "
        f"trust this data, {how}"
    )


#: how to opt in through zarrox's own API
OWN_API_OPT_IN = f'enable it with zarrox.config.set({{"{ALLOW_KEY}": True}}).'

#: how to opt in when zarrox is zarr-python's codec pipeline
PIPELINE_OPT_IN = (
    f'enable it with zarr.config.set({{"{ALLOW_KEY}": True}}) or the environment variable '
    "ZARR_ARRAY__ALLOW_UNSAFE_PICKLE_DECODE=True. numcodecs has its own opt-in, which must be "
    "enabled as well: set numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE = True, or the "
    "environment variable NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE=1 before importing numcodecs."
)


class PickledChunks(ServesEngine):
    """The chunks of an array in ``store`` through its pickle codec, for the engine: a store
    the caller reads and writes (read sessions' requests, write batches' fetches and
    stores), decoding and encoding the pickle stage on the way. Its ``handle`` tells the
    engine so. ``name`` names the array in errors."""

    def __init__(self, store: Any, stage: PickleStage, name: str) -> None:
        from zarrox._core import StoreHandle

        self.store = store
        self.stage = stage
        self.name = name
        self.handle = StoreHandle.caller(f"{store!r} (pickled chunks)")

    def _read(self, key: str, span: Any) -> bytes | None:
        """The chunk under ``key`` unpickled (read whole: ``span`` is None)."""
        stored = self.store.get(key)
        if stored is None:
            return None
        from zarrox.config import config

        where = f"array '{self.name}': chunk '{key}'"
        check_allowed(config.get(ALLOW_KEY), where, OWN_API_OPT_IN)
        return self.stage.decode(bytes(stored), where)

    def _write(self, key: str, value: bytes) -> None:
        self.store.set(key, self.stage.encode(value))

    def _remove(self, key: str) -> None:
        self.store.delete(key)

    def serve(self, session: Any) -> Any:
        """Run a read session to its end: whole chunks, unpickled."""
        from zarrox.storage.bridge import serve_sync

        return serve_sync(session, self._whole_chunk)

    def _whole_chunk(self, request: tuple[int, str, str, Any]) -> bytes | None:
        _, op, key, arg = request
        if op != "get" or arg is not None:
            raise CodecError(
                f"array '{self.name}': chunk '{key}': internal error: a chunk of the "
                f"pickle codec is read whole, not with {op} {arg!r}"
            )
        return self._read(key, None)
