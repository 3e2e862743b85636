"""Read-all / read-chunks / write-all benchmark: zarrox (own API, and as zarr-python's codec
pipeline) against zarr-python, zarr-python + zarrs, tensorstore.

One run generates a compressible 3-D uint16 dataset (smooth field + small noise), writes a
reference copy with zarrox, then measures for every implementation, each in a fresh
subprocess:

* ``read``:  open + read the whole zarrox-written array in one call (page cache warmed by
  one untimed read first; every read is compared with the source);
* ``read-chunks``: open + read the same array chunk by chunk (for ``--codec sharded``, inner
  chunk by inner chunk) in a Python loop, one ``a[z0:z1, y0:y1, x0:x1]`` call per chunk
  (tensorstore: ``t[...].read().result()``), timed as one total; every block is compared;
* ``write``: create + write the whole array into a new directory (the previous repeat's
  copy is deleted first, untimed; the last copy is read back and compared, by the writer
  itself and by zarrox, and its codec chain is checked against the intended one).

``--codec sharded`` stores 128^3 shards (``--shards``) of 32^3 inner chunks, each zstd
level 1, with the shard index (bytes + crc32c) at the end of the shard.

It prints medians, throughput (uncompressed MB/s, 1 MB = 1e6 bytes), time ratios to
zarrox and to the fastest implementation that is not zarrox (neither its own API nor its
codec pipeline), and the peak RSS growth of each worker.
Each case runs in ``--rounds`` fresh workers, interleaved round-robin with the others, so a
noisy phase of the host is shared rather than charged to one implementation. The exit
status is 1 when any case failed (error or wrong data); the table then says which.

    .venv/bin/python benches/bench_read_write.py [--size 256] [--chunks 32]
        [--codec {raw,zstd,blosc,blosc-zstd,sharded}] [--shards 128] [--repeat 5] [--rounds 3]
        [--impls zarrox,pipeline,zarr,zarrs,tensorstore] [--ops read,read-chunks,write]
        [--tmpdir DIR] [--keep]

``benches/run_all.py`` runs this, ``bench_indexing.py`` and the decode floor on every dataset
in one command.

Internally the same file is the worker:
``python benches/bench_read_write.py --worker IMPL --op {read,read-chunks,write} ...``.
The helpers here (dataset, layouts, implementations, worker spawning, scheduling, ratios,
tables) are shared with ``bench_indexing.py``, ``bench_pipeline.py`` and ``run_all.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import itertools
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np


def _has_fused_pipeline() -> bool:
    """zarr-python >= 3.3 ships the opt-in ``FusedCodecPipeline`` (Python >= 3.12)."""
    try:
        major, minor = (int(p) for p in version("zarr").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (3, 3)


IMPLS: dict[str, str] = {
    "zarrox": "zarrox",
    "pipeline": "zarr-python+zarrox",
    "zarr": "zarr-python",
    "zarrs": "zarr-python+zarrs",
    "tensorstore": "tensorstore",
}
if _has_fused_pipeline():
    IMPLS["fused"] = "zarr-python fused"
#: zarrox's own API and zarr-python on zarrox's codec pipeline: never the "best other".
ZARROX_IMPLS = ("zarrox", "pipeline")
#: zarr-python's ``codec_pipeline.path`` and the pipeline class it must then run, per impl.
ZARR_PIPELINES: dict[str, tuple[str | None, str]] = {
    "zarr": (None, "BatchedCodecPipeline"),
    "zarrs": ("zarrs.ZarrsCodecPipeline", "ZarrsCodecPipeline"),
    "pipeline": ("zarrox.ZarroxCodecPipeline", "ZarroxCodecPipeline"),
    # zarr-python 3.3+'s own synchronous, bulk codec pipeline (opt-in)
    "fused": ("zarr.core.codec_pipeline.FusedCodecPipeline", "FusedCodecPipeline"),
}
OPS = ("read", "read-chunks", "write")
CODECS = ("raw", "zstd", "blosc", "blosc-zstd", "sharded")
#: The datasets run_all.py measures unless told otherwise (issue 21's targets are on these).
DEFAULT_CODECS = ("raw", "zstd", "blosc", "sharded")
RESULT_TAG = "BENCH_RESULT "
MB = 1e6
MIB = 1024 * 1024


# --------------------------------------------------------------------------- dataset


def codec_chain(codec: str) -> list[dict[str, Any]]:
    """The array-to-bytes + bytes-to-bytes chain (unsharded) for ``codec``."""
    chain: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if codec == "zstd":
        chain.append({"name": "zstd", "configuration": {"level": 1, "checksum": False}})
    elif codec in ("blosc", "blosc-zstd"):
        # blosc-zstd is zarr-python's BloscCodec() default: zstd level 5, byte shuffle.
        cname, clevel, shuffle = (
            ("blosclz", 9, "bitshuffle") if codec == "blosc" else ("zstd", 5, "shuffle")
        )
        chain.append(
            {
                "name": "blosc",
                "configuration": {
                    "cname": cname,
                    "clevel": clevel,
                    "shuffle": shuffle,
                    "typesize": 2,
                    "blocksize": 0,
                },
            }
        )
    elif codec != "raw":
        raise ValueError(f"unknown codec {codec!r}")
    return chain


@dataclass(frozen=True)
class Layout:
    """How the array is stored. ``chunks`` is the read/encode unit: the chunk shape, or the
    inner chunk shape when ``shards`` (the shape of one stored object) is set."""

    codec: str
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None = None

    @property
    def inner_chain(self) -> list[dict[str, Any]]:
        return codec_chain("zstd" if self.codec == "sharded" else self.codec)

    @property
    def grid(self) -> tuple[int, ...]:
        """The chunk-grid shape in the metadata (one stored object)."""
        return self.shards or self.chunks

    def codecs(self) -> list[dict[str, Any]]:
        """The full Zarr v3 ``codecs`` of the array metadata."""
        if self.shards is None:
            return self.inner_chain
        return [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(self.chunks),
                    "codecs": self.inner_chain,
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                    "index_location": "end",
                },
            }
        ]

    def describe(self) -> str:
        inner = " -> ".join(c["name"] for c in self.inner_chain)
        if self.shards is None:
            return f"chunks {self.chunks}, codec {self.codec} ({inner})"
        return (
            f"shards {self.shards} of inner chunks {self.chunks}, codec sharded"
            f" (sharding_indexed[{inner}], index bytes -> crc32c at the end)"
        )


def make_layout(codec: str, chunks: str | None = None, shards: str | None = None) -> Layout:
    """The layout of ``codec`` (one of ``CODECS``); ``chunks`` (default 32)
    and ``shards`` (sharded only, default 128) are "N" or "Z,Y,X"."""
    sharded = codec == "sharded"
    if shards and not sharded:
        raise SystemExit("--shards needs --codec sharded")
    chunk_shape = parse_shape(chunks or "32", 3)
    if not sharded:
        return Layout(codec, chunk_shape)
    shard_shape = parse_shape(shards or "128", 3)
    if any(s % c for s, c in zip(shard_shape, chunk_shape, strict=True)):
        raise SystemExit(f"shards {shard_shape} must be a multiple of chunks {chunk_shape}")
    return Layout(codec, chunk_shape, shard_shape)


def layout_from_args(args: argparse.Namespace) -> Layout:
    """``--codec``/``--chunks``/``--shards`` -> Layout."""
    return make_layout(args.codec, args.chunks, getattr(args, "shards", None))


def layout_argv(layout: Layout) -> list[str]:
    """Worker command-line arguments that reproduce ``layout`` via ``layout_from_args``."""
    argv = ["--codec", layout.codec, "--chunks", ",".join(map(str, layout.chunks))]
    if layout.shards is not None:
        argv += ["--shards", ",".join(map(str, layout.shards))]
    return argv


def codec_names(codecs: list[dict[str, Any]]) -> list[Any]:
    """Codec names, nested for sharding (inner chain, index chain): a layout fingerprint that
    ignores how each implementation spells defaults in the metadata."""
    out: list[Any] = []
    for c in codecs:
        out.append(c["name"])
        conf = c.get("configuration") or {}
        if c["name"] == "sharding_indexed":
            out.append(
                [
                    conf.get("chunk_shape"),
                    codec_names(conf.get("codecs", [])),
                    codec_names(conf.get("index_codecs", [])),
                    conf.get("index_location", "end"),
                ]
            )
    return out


def check_layout(path: Path, layout: Layout, what: str) -> None:
    """Raise AssertionError unless the array at ``path`` is stored as ``layout`` says."""
    meta = json.loads((path / "zarr.json").read_text())
    grid = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    got, want = codec_names(meta["codecs"]), codec_names(layout.codecs())
    if grid != layout.grid or got != want:
        raise AssertionError(f"{what}: stored as grid {grid} {got}, expected {layout.grid} {want}")


def make_data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """A smooth field (low-frequency waves, values ~200..1800 like a 12-bit detector) plus
    Gaussian noise (sigma 2), as uint16: zstd-1 compresses it ~1.5x, blosc bitshuffle ~2.2x."""
    rng = np.random.default_rng(seed)
    z, y, x = (np.linspace(0.0, 1.0, n, dtype=np.float32) for n in shape)
    fz = np.sin(2 * np.pi * 1.3 * z + 0.4)[:, None, None]
    fy = np.cos(2 * np.pi * 2.1 * y + 1.1)[None, :, None]
    fx = np.sin(2 * np.pi * 0.7 * x)[None, None, :]
    gy = y[None, :, None]
    out = np.empty(shape, dtype=np.uint16)
    slab = max(1, (1 << 22) // max(1, shape[1] * shape[2]))
    for i in range(0, shape[0], slab):
        j = min(shape[0], i + slab)
        smooth = 1000.0 + 800.0 * (fz[i:j] * fy + 0.5 * fx * fy + 0.75 * gy * fz[i:j])
        smooth += rng.normal(0.0, 2.0, size=smooth.shape).astype(np.float32)
        out[i:j] = np.clip(np.rint(smooth), 0, 65535).astype(np.uint16)
    return out


#: Elements per comparison block in ``check_equal``: its temporaries (a bool array of this
#: many elements) stay far below the peak RSS figures the workers report.
CHECK_BLOCK = 1 << 16


def blocks(shape: Sequence[int], limit: int = CHECK_BLOCK) -> Iterator[tuple[slice, ...]]:
    """Selections (tuples of slices) that tile an array of ``shape`` in C order with blocks
    of at most ``limit`` elements (at least one)."""
    inner, axis = 1, len(shape)
    while axis > 0 and inner * shape[axis - 1] <= limit:
        axis -= 1
        inner *= shape[axis]
    if axis == 0:
        yield tuple(slice(None) for _ in shape)
        return
    split = axis - 1  # the axis cut into steps; the axes before it go one index at a time
    step = max(1, limit // inner)
    for lead in itertools.product(*(range(n) for n in shape[:split])):
        for s in range(0, shape[split], step):
            yield (
                *(slice(i, i + 1) for i in lead),
                slice(s, s + step),
                *(slice(None) for _ in shape[axis:]),
            )


def check_equal(got: Any, want: Any, what: str) -> None:
    """Raise AssertionError unless ``got`` equals ``want`` in shape, dtype and values. Compared
    in blocks of ``CHECK_BLOCK`` elements, so the check adds almost nothing to the peak RSS of
    the operation it verifies. 0-d results (one element) compare as 0-d arrays."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        raise AssertionError(
            f"{what}: got {got.dtype}{got.shape}, expected {want.dtype}{want.shape}"
        )
    if want.ndim == 0:
        if got != want:
            raise AssertionError(f"{what}: got {got}, expected {want}")
        return
    for sel in blocks(want.shape):
        if not np.array_equal(got[sel], want[sel]):
            bad = np.argwhere(got[sel] != want[sel])[0]
            at = tuple(int(b) + (s.start or 0) for b, s in zip(bad, sel, strict=True))
            raise AssertionError(f"{what}: data differ from the source, first at {at}")


def chunk_selections(shape: Sequence[int], chunks: Sequence[int]) -> list[tuple[slice, ...]]:
    """One tuple of slices per chunk position, C order (edge chunks clipped to ``shape``)."""
    ranges = [range(0, n, c) for n, c in zip(shape, chunks, strict=True)]
    return [
        tuple(slice(o, min(o + c, n)) for o, c, n in zip(origin, chunks, shape, strict=True))
        for origin in itertools.product(*ranges)
    ]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- implementations


@dataclass
class Impl:
    """One implementation's calls. ``get(handle, selection)`` is ``a[selection]`` as a numpy
    array (tensorstore: ``t[selection].read().result()``); ``vget`` the same for ``vindex``."""

    open: Callable[[Path], Any]
    get: Callable[[Any, Any], Any]
    vget: Callable[[Any, Any], Any]
    write: Callable[[Path, np.ndarray], None]

    def read(self, path: Path) -> Any:
        return self.get(self.open(path), Ellipsis)


def tensorstore_spec(path: Path) -> dict[str, Any]:
    # file_io_sync off: tensorstore fsyncs each write by default; the others do not.
    context: dict[str, Any] = {"file_io_sync": False}
    usable = len(os.sched_getaffinity(0))
    if usable < (os.cpu_count() or usable):
        # a pinned worker: tensorstore sizes its data-copy pool from the machine's CPUs
        context["data_copy_concurrency"] = {"limit": usable}
    return {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(path)},
        "context": context,
    }


def create_kwargs(layout: Layout) -> dict[str, Any]:
    """The ``create_array`` arguments (zarrox's and zarr-python's) that store ``layout``."""
    chain = layout.inner_chain
    return {
        "chunks": layout.chunks,
        "shards": layout.shards,
        "serializer": chain[0],
        "compressors": chain[1:] or None,
        "filters": None,
        "fill_value": 0,
    }


def zarr3_metadata(layout: Layout, data: np.ndarray) -> dict[str, Any]:
    """tensorstore's ``zarr3`` metadata for ``data`` stored as ``layout``."""
    return {
        "shape": list(data.shape),
        "data_type": str(data.dtype),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(layout.grid)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": layout.codecs(),
    }


def use_zarr_pipeline(impl: str) -> Callable[[Any], Any]:
    """Configure zarr-python for ``impl`` (its own codec pipeline, or strictly, with no silent
    fallback, zarrs's or zarrox's) and return the check that an array runs that pipeline."""
    import zarr

    pipeline_path, pipeline_class = ZARR_PIPELINES[impl]
    if pipeline_path is not None:
        importlib.import_module(pipeline_path.rpartition(".")[0])  # registers the pipeline
        zarr.config.set({"codec_pipeline.path": pipeline_path, "codec_pipeline.strict": True})

    def checked(a: Any) -> Any:
        kind = type(a._async_array.codec_pipeline).__name__
        if kind != pipeline_class:
            raise AssertionError(f"zarr-python runs {kind}, not {pipeline_class}")
        return a

    return checked


def make_impl(impl: str, layout: Layout) -> Impl:
    """Import one implementation (inside the worker only) and return its calls. Every writer
    produces the metadata of ``layout``: zarrox and zarr-python through the same
    ``create_array(chunks=, shards=, serializer=, compressors=)`` arguments, tensorstore from
    the equivalent zarr3 metadata."""
    kwargs = create_kwargs(layout)
    if impl == "zarrox":
        import zarrox

        def write(path: Path, data: np.ndarray) -> None:
            a = zarrox.create_array(str(path), shape=data.shape, dtype=data.dtype, **kwargs)
            a[...] = data

        return Impl(
            open=lambda path: zarrox.open_array(str(path), mode="r"),
            get=lambda a, sel: a[sel],
            vget=lambda a, sel: a.vindex[sel],
            write=write,
        )
    if impl in ZARR_PIPELINES:
        # every array zarr-python opens or creates is checked to run the intended pipeline
        import zarr

        checked = use_zarr_pipeline(impl)

        def write(path: Path, data: np.ndarray) -> None:
            a = zarr.create_array(store=str(path), shape=data.shape, dtype=data.dtype, **kwargs)
            checked(a)[...] = data

        return Impl(
            open=lambda path: checked(zarr.open_array(store=str(path), mode="r")),
            get=lambda a, sel: a[sel],
            vget=lambda a, sel: a.vindex[sel],
            write=write,
        )
    if impl == "tensorstore":
        import tensorstore as ts

        def write(path: Path, data: np.ndarray) -> None:
            spec = {**tensorstore_spec(path), "metadata": zarr3_metadata(layout, data)}
            t = ts.open(spec, create=True, open=False).result()
            t.write(data).result()

        return Impl(
            open=lambda path: ts.open(tensorstore_spec(path), read=True).result(),
            get=lambda t, sel: t[sel].read().result(),
            vget=lambda t, sel: t.vindex[sel].read().result(),
            write=write,
        )
    raise ValueError(f"unknown implementation {impl!r}")


# --------------------------------------------------------------------------- worker


def _proc_status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> int:
    """Reset the peak-RSS mark to the current RSS where Linux allows it; return the mark."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """Peak RSS of this process. VmHWM first: getrusage's ru_maxrss is inherited from the
    parent across fork + exec on Linux, so in a small worker it can report the driver's peak."""
    hwm = _proc_status_kib("VmHWM")
    if hwm is not None:
        return hwm * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def timed_reads(
    impl: Impl, where: Any, sels: Sequence[Any], src: np.ndarray, repeat: int, name: str
) -> list[float]:
    """Seconds per pass of open ``where`` + one ``get`` per selection: an untimed warm-up pass
    (page cache, connections, the implementation itself), then ``repeat`` timed ones; every
    block read is compared with the source, outside the timed span."""

    def read_all() -> list[Any]:
        a = impl.open(where)
        return [impl.get(a, sel) for sel in sels]

    def verify(blocks: list[Any], what: str) -> None:
        for sel, block in zip(sels, blocks, strict=True):
            check_equal(block, src[sel], f"{what} {sel}")

    verify(read_all(), f"{name} warm-up")
    times: list[float] = []
    for rep in range(repeat):
        t0 = time.perf_counter()
        blocks = read_all()
        times.append(time.perf_counter() - t0)
        verify(blocks, f"{name} #{rep}")
        del blocks
    return times


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    layout = layout_from_args(args)
    src = np.load(args.src)
    impl = make_impl(args.worker, layout)
    # High-water mark after imports and the source load; the growth over it counts the
    # operation's own buffers (for reads, the output arrays too).
    baseline = reset_peak_rss()
    times: list[float] = []
    result: dict[str, Any] = {"impl": args.worker, "op": args.op, "calls": 1}
    if args.op in ("read", "read-chunks"):
        sels = [Ellipsis] if args.op == "read" else chunk_selections(src.shape, layout.chunks)
        name = f"{args.worker} {args.op}"
        times = timed_reads(impl, Path(args.dataset), sels, src, args.repeat, name)
        result["rss_peak_delta"] = peak_rss_bytes() - baseline
        result["calls"] = len(sels)
    else:
        out_dir = Path(args.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        warm = out_dir / "warmup"
        impl.write(warm, src)  # untimed warm-up
        shutil.rmtree(warm)
        last = out_dir / "copy"
        for _ in range(args.repeat):
            if last.exists():
                shutil.rmtree(last)
            os.sync()  # flush the previous copy's dirty pages outside the timed region
            t0 = time.perf_counter()
            impl.write(last, src)
            times.append(time.perf_counter() - t0)
        result["rss_peak_delta"] = peak_rss_bytes() - baseline
        check_equal(impl.read(last), src, f"{args.worker} read-back of its own write")
        check_layout(last, layout, f"{args.worker} written copy")
        result["copy"] = str(last)
        result["stored_bytes"] = dir_size(last)
    result["times"] = times
    return result


# --------------------------------------------------------------------------- driver helpers
# (shared with bench_indexing.py)


def parse_shape(text: str, ndim: int) -> tuple[int, ...]:
    parts = [int(p) for p in text.replace("x", ",").split(",") if p]
    if len(parts) == 1:
        parts = parts * ndim
    if len(parts) != ndim or any(p <= 0 for p in parts):
        raise SystemExit(f"expected N or {ndim} positive integers, got {text!r}")
    return tuple(parts)


def parse_choices(text: str, allowed: Sequence[str], what: str) -> list[str]:
    picked = [i for i in text.split(",") if i]
    for i in picked:
        if i not in allowed:
            raise SystemExit(f"unknown {what} {i!r}; choose from {','.join(allowed)}")
    return picked


@dataclass
class Case:
    impl: str
    op: str
    times: list[float] = field(default_factory=list)
    rss_delta: int | None = None
    stored_bytes: int | None = None
    calls: int | None = None
    error: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def merge(self, res: dict[str, Any]) -> None:
        """Fold one worker's result into the case."""
        self.times.extend(res["times"])
        self.rss_delta = max(self.rss_delta or 0, res["rss_peak_delta"])
        self.calls = res.get("calls", self.calls)


class WorkerError(RuntimeError):
    pass


def worker_env() -> dict[str, str]:
    """The environment of a worker: ours, with numpy's BLAS on one thread. OpenBLAS starts
    a thread per core at ``import numpy`` that spins for a while (~50 ms of CPU in the
    first half second), which on 2 cores takes time from whichever implementation is being
    timed; none of the cases calls BLAS. A setting the caller made wins."""
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    return env


#: The CPUs workers run on (``--cpus N``: the first N this process may use); None: all.
_worker_cpus: list[int] | None = None


def set_worker_cpus(n: int | None) -> list[int] | None:
    """Pin every worker spawned from now on to the first ``n`` CPUs this process may use
    (``None`` or 0: no pinning); returns those CPUs. Each implementation then sizes its
    thread pool from what it sees: zarrox, zarrs (rayon) and Python read the affinity
    mask, and tensorstore's data-copy concurrency is set to the same count (it would
    otherwise start a thread per CPU of the machine)."""
    global _worker_cpus
    allowed = sorted(os.sched_getaffinity(0))
    if n is not None and not 0 <= n <= len(allowed):
        raise ValueError(f"--cpus {n}: this process may use {len(allowed)} CPUs")
    _worker_cpus = allowed[:n] if n else None
    return _worker_cpus


def cpus_text() -> str:
    """How many CPUs the workers run on (and which, when pinned)."""
    if _worker_cpus is None:
        return f"{len(os.sched_getaffinity(0))} CPUs"
    return f"{len(_worker_cpus)} CPUs (workers pinned to {_worker_cpus})"


def _pin() -> None:
    """In a worker before it starts (``preexec_fn``): its affinity mask."""
    if _worker_cpus is not None:
        os.sched_setaffinity(0, _worker_cpus)


def spawn_worker(script: str, argv: list[str]) -> dict[str, Any]:
    """Run ``script`` (in worker mode, via ``argv``) in a fresh interpreter, pinned to the
    CPUs ``set_worker_cpus`` chose, and return the result dict it printed; WorkerError
    with the last stderr line when it failed."""
    os.sync()
    proc = subprocess.run(
        [sys.executable, os.path.abspath(script), *argv],
        capture_output=True,
        text=True,
        env=worker_env(),
        preexec_fn=_pin if _worker_cpus is not None else None,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if proc.returncode != 0 or not lines:
        # the exception line of the traceback (its message may run over several lines)
        found = re.findall(r"^[A-Za-z_][\w.]*(?:Error|Exception)\b.*$", proc.stderr, re.M)
        tail = found[-1] if found else (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise WorkerError(f"exit {proc.returncode}: {' '.join(tail.split())[:160]}")
    return json.loads(lines[-1][len(RESULT_TAG) :])


def run_rounds(
    cases: dict[tuple[str, str], Case],
    ops: Sequence[str],
    impls: Sequence[str],
    rounds: int,
    run_one: Callable[[Case], None],
    fmt: Callable[[Case], str] = lambda c: f"{c.median * 1e3:.1f} ms",
) -> None:
    """Run ``run_one`` ``rounds`` times per case, round-robin over the implementations with a
    rotating order (a slow phase of a noisy host is shared); a failed case is not retried.
    ``run_one`` merges its results into the case or sets ``case.error``."""
    impls = list(impls)
    for op in ops:
        for rnd in range(rounds):
            for impl in impls[rnd % len(impls) :] + impls[: rnd % len(impls)]:
                case = cases[(op, impl)]
                if case.error is None:
                    try:
                        run_one(case)
                    except WorkerError as e:
                        case.error = str(e)
                    status = case.error or f"median so far {fmt(case)}"
                    print(f"  {op:<11} round {rnd + 1} {IMPLS[impl]:<18} {status}", file=sys.stderr)


def reference_and_best(cases: Sequence[Case]) -> tuple[Case | None, Case | None]:
    """(the zarrox case, the fastest case that is not zarrox in any form) among the
    successful ``cases`` of one op."""
    ok = [c for c in cases if c.error is None and c.times]
    ref = next((c for c in ok if c.impl == "zarrox"), None)
    others = [c for c in ok if c.impl not in ZARROX_IMPLS]
    return ref, min(others, key=lambda c: c.median) if others else None


def ratio_cells(c: Case, ref: Case | None, best: Case | None) -> tuple[str, str]:
    """``t/zarrox`` and ``t/best-other`` (time ratios, >1 = slower)."""
    return (
        f"{c.median / ref.median:.2f}x" if ref else "n/a",
        f"{c.median / best.median:.2f}x" if best else "n/a",
    )


def pkg_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def host_line() -> str:
    import zarrox

    return (
        f"host: {os.cpu_count()} cores, workers on {cpus_text()}; Python"
        f" {platform.python_version()}, numpy "
        f"{np.__version__}; zarrox {zarrox.__version__}, zarr {pkg_version('zarr')}, "
        f"zarrs {pkg_version('zarrs')}, tensorstore {pkg_version('tensorstore')}"
    )


@contextlib.contextmanager
def scratch_dir(args: argparse.Namespace) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="zarrox-bench-", dir=args.tmpdir))
    try:
        yield work
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A generated source, saved as ``work/source.npy``, and its reference copy
    ``work/reference.zarr`` written (and verified) with zarrox: what every worker reads."""

    work: Path
    layout: Layout
    src: np.ndarray
    stored_bytes: int

    @property
    def source(self) -> Path:
        return self.work / "source.npy"

    @property
    def reference(self) -> Path:
        return self.work / "reference.zarr"

    def describe(self) -> str:
        return (
            f"dataset: {self.src.shape} {self.src.dtype} = {self.src.nbytes / MIB:.1f} MiB,"
            f" {self.layout.describe()}, {self.stored_bytes / MIB:.1f} MiB on disk"
            f" (ratio {self.src.nbytes / self.stored_bytes:.2f})"
        )

    def worker_argv(self, impl: str, op: str, repeat: int) -> list[str]:
        """The worker-mode arguments (shared by both benchmarks' workers) for one case."""
        return [
            "--worker",
            impl,
            "--op",
            op,
            "--src",
            str(self.source),
            "--dataset",
            str(self.reference),
            "--repeat",
            str(repeat),
            *layout_argv(self.layout),
        ]


def make_dataset(work: Path, shape: tuple[int, ...], layout: Layout, seed: int) -> Dataset:
    """Generate the source in ``work`` (created if needed) and write the reference copy with
    zarrox; both are checked (its stored layout, its read-back)."""
    work.mkdir(parents=True, exist_ok=True)
    src = make_data(shape, seed)
    ds = Dataset(work, layout, src, 0)
    np.save(ds.source, src)
    zx = make_impl("zarrox", layout)
    zx.write(ds.reference, src)
    check_layout(ds.reference, layout, "zarrox reference")
    check_equal(zx.read(ds.reference), src, "zarrox reference read-back")
    return Dataset(work, layout, src, dir_size(ds.reference))


def add_common_args(p: argparse.ArgumentParser, ops: Sequence[str]) -> None:
    """The dataset, scheduling and selection options the benchmarks share."""
    p.add_argument("--size", default="256", help="edge N (N^3) or Z,Y,X; default 256")
    p.add_argument("--codec", choices=CODECS, default="zstd")
    p.add_argument(
        "--chunks", default=None, help="chunk edge or Z,Y,X (inner chunks when sharded); default 32"
    )
    p.add_argument(
        "--shards", default=None, help="shard edge or Z,Y,X for --codec sharded; default 128"
    )
    p.add_argument("--repeat", type=int, default=5, help="timed repeats per worker; default 5")
    p.add_argument(
        "--rounds", type=int, default=3, help="fresh workers per case, interleaved; default 3"
    )
    p.add_argument("--impls", default=",".join(IMPLS), help="comma list of " + ",".join(IMPLS))
    p.add_argument("--ops", default=",".join(ops), help="comma list of " + ",".join(ops))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tmpdir", default=None, help="parent of the scratch directory")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument(
        "--cpus", type=int, default=None, help="pin workers to the first N CPUs; default all"
    )


def add_worker_args(p: argparse.ArgumentParser, ops: Sequence[str]) -> None:
    """The worker-mode options (internal; ``Dataset.worker_argv`` spells them)."""
    p.add_argument("--worker", choices=tuple(IMPLS), help=argparse.SUPPRESS)
    p.add_argument("--op", choices=ops, help=argparse.SUPPRESS)
    p.add_argument("--src", help=argparse.SUPPRESS)
    p.add_argument("--dataset", help=argparse.SUPPRESS)


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Column:
    title: str
    width: int  # text tables only
    left: bool = False


def render_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    notes: Sequence[str] = (),
    markdown: bool = False,
) -> str:
    """A fixed-width text table (or a Markdown one) followed by note lines. A row with fewer
    cells than ``columns`` ends in free text (a failure message), which runs on past the
    regular cells before it (Markdown: in the next cell). In text, two spaces separate a
    left-aligned column from a right-aligned one before it."""
    if markdown:
        lines = [
            "| " + " | ".join(c.title for c in columns) + " |",
            "|" + "|".join(" --- " if c.left else " ---: " for c in columns) + "|",
        ]
        for row in rows:
            cells = [cell.replace("|", "\\|") for cell in row]
            lines.append("| " + " | ".join(cells + [""] * (len(columns) - len(row))) + " |")
        return "\n".join(lines + [f"\n{note}" for note in notes])

    gaps = ["  " if c.left and i and not columns[i - 1].left else "" for i, c in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return "".join(
            gap + (f"{text:<{c.width}}" if c.left else f"{text:>{c.width}}")
            for c, gap, text in zip(columns, gaps, cells, strict=False)
        )

    head = line([c.title for c in columns])
    lines = [head, "-" * len(head)]
    for row in rows:
        short = len(row) < len(columns)
        lines.append(line(row[:-1]) + row[-1] if short else line(row))
    return "\n".join(lines + list(notes))


def format_table(cases: list[Case], nbytes: int, markdown: bool = False) -> str:
    columns = [
        Column("op", 12, left=True),
        Column("implementation", 19, left=True),
        Column("median ms", 10),
        Column("min ms", 9),
        Column("MB/s", 8),
        Column("us/call", 9),
        Column("t/zarrox", 10),
        Column("t/best-other", 14),
        Column("peak RSS +MiB", 15),
    ]
    rows: list[list[str]] = []
    notes: list[str] = []
    calls: dict[str, int] = {}
    for op in OPS:
        op_cases = [c for c in cases if c.op == op]
        ref, best = reference_and_best(op_cases)
        if best is not None:
            notes.append(f"{op} {IMPLS[best.impl]}")
        for c in op_cases:
            name = IMPLS[c.impl]
            if c.error is not None:
                rows.append([op, name, f"FAILED  {c.error[:90]}"])
                continue
            r_ref, r_best = ratio_cells(c, ref, best)
            rss = f"{c.rss_delta / MIB:.0f}" if c.rss_delta is not None else "?"
            per_call = f"{c.median / c.calls * 1e6:.0f}" if (c.calls or 1) > 1 else "-"
            if (c.calls or 1) > 1:
                calls[op] = c.calls or 1
            rows.append(
                [
                    op,
                    name,
                    f"{c.median * 1e3:.1f}",
                    f"{min(c.times) * 1e3:.1f}",
                    f"{nbytes / MB / c.median:.0f}",
                    per_call,
                    r_ref,
                    r_best,
                    rss,
                ]
            )
    if notes:
        notes = ["best-other = fastest implementation that is not zarrox: " + ", ".join(notes)]
    if calls:
        notes.append(
            "us/call = median / calls per sample: "
            + ", ".join(f"{op} {n} calls" for op, n in calls.items())
        )
    sizes = [f"{IMPLS[c.impl]} {c.stored_bytes / MIB:.1f}" for c in cases if c.stored_bytes]
    if sizes:
        notes.append("written copy sizes (MiB): " + ", ".join(sizes))
    return render_table(columns, rows, notes, markdown)


def failure_lines(cases: Sequence[Case], ignore: Sequence[str] = ()) -> list[str]:
    """One ``FAILED op impl: error`` line per failed case (errors in ``ignore`` excepted)."""
    return [
        f"FAILED {c.op} {IMPLS[c.impl]}: {c.error}"
        for c in cases
        if c.error is not None and c.error not in ignore
    ]


# --------------------------------------------------------------------------- driver


def method_text(rounds: int, repeat: int) -> str:
    return "\n".join(
        [
            f"method: per implementation and op, {rounds} fresh worker process(es), run"
            f" round-robin, each with {repeat} timed repeats;",
            f"  median (and min) of the {rounds * repeat} samples reported.",
            "  read = open + read all of the zarrox-written copy in one a[...] call;",
            "  read-chunks = open + one a[z0:z1, y0:y1, x0:x1] call per chunk (inner chunk when"
            " sharded), in a Python loop;",
            "  write = create + write all into a new directory"
            " (os.sync() before each repeat, untimed; tensorstore with file_io_sync=false).",
            "  Page cache NOT dropped: every dataset is read once, untimed, before timing (warm).",
            "  Workers run with OPENBLAS_NUM_THREADS=1 (numpy's idle BLAS threads would spin"
            " on the cores being timed).",
            "  Every read is asserted equal to the source; every written copy is read back by its"
            " writer and by zarrox,",
            "  and its stored codec chain checked. Ratios are time ratios (>1 = slower than the"
            " reference).",
            "  peak RSS + = growth of the worker's peak RSS (VmHWM) over its level after imports"
            " and loading the source",
            "  (reads include the output arrays).",
        ]
    )


def measure(
    ds: Dataset, impls: Sequence[str], ops: Sequence[str], rounds: int, repeat: int
) -> list[Case]:
    """Run every (op, impl) case on ``ds`` in ``rounds`` fresh workers (this script in worker
    mode), round-robin; return the cases, failed ones with their ``error`` set."""

    def run_one(case: Case) -> None:
        out_dir = ds.work / f"written-{case.impl}"
        argv = [*ds.worker_argv(case.impl, case.op, repeat), "--out-dir", str(out_dir)]
        res = spawn_worker(__file__, argv)
        case.merge(res)
        if case.op == "write":
            case.stored_bytes = res["stored_bytes"]
            try:  # interop: zarrox must read every implementation's copy
                zx = make_impl("zarrox", ds.layout)
                check_equal(zx.read(Path(res["copy"])), ds.src, f"zarrox reading {case.impl}")
            except Exception as e:  # report, keep going
                case.error = f"its written copy fails the zarrox check: {type(e).__name__}: {e}"

    cases = {(op, impl): Case(impl, op) for op in ops for impl in impls}
    run_rounds(cases, ops, impls, rounds, run_one)
    return list(cases.values())


@contextlib.contextmanager
def driver_setup(
    args: argparse.Namespace, all_ops: Sequence[str]
) -> Iterator[tuple[Dataset, list[str], list[str]]]:
    """A benchmark driver's start: read the common options, make the dataset in a scratch
    directory, print its description and the host; yield (dataset, impls, ops)."""
    shape = parse_shape(args.size, 3)
    layout = layout_from_args(args)
    impls = parse_choices(args.impls, tuple(IMPLS), "implementation")
    ops = parse_choices(args.ops, all_ops, "op")
    set_worker_cpus(args.cpus)
    with scratch_dir(args) as work:
        ds = make_dataset(work, shape, layout, args.seed)
        print(ds.describe())
        print(host_line())
        yield ds, impls, ops


def finish(table: str, failed: Sequence[str]) -> int:
    """A benchmark driver's end: print the table and the failures; the exit status."""
    print(flush=True)
    print(table)
    for line in failed:
        print(line)
    return 1 if failed else 0


def dispatch(
    args: argparse.Namespace,
    worker: Callable[[argparse.Namespace], dict[str, Any]],
    driver: Callable[[argparse.Namespace], int],
) -> int:
    """Worker mode (``--worker``): run ``worker`` and print its result for ``spawn_worker``;
    otherwise run ``driver``. Returns the exit status."""
    if args.worker:
        print(RESULT_TAG + json.dumps(worker(args)), flush=True)
        return 0
    return driver(args)


def run_driver(args: argparse.Namespace) -> int:
    with driver_setup(args, OPS) as (ds, impls, ops):
        print(method_text(args.rounds, args.repeat), flush=True)
        cases = measure(ds, impls, ops, args.rounds, args.repeat)
        return finish(format_table(cases, ds.src.nbytes), failure_lines(cases))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, OPS)
    add_worker_args(p, OPS)
    p.add_argument("--out-dir", help=argparse.SUPPRESS)  # worker mode (internal)
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rounds < 1:
        p.error("--repeat and --rounds must be >= 1")
    return dispatch(args, run_worker, run_driver)


if __name__ == "__main__":
    sys.exit(main())
