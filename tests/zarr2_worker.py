"""Runs under zarr-python 2.18 (its own virtualenv, see tests/run.sh) for the v2
interop tests: writes and reads batches of arrays described in a JSON file.

    python zarr2_worker.py write JOBS.json   # each job: store, path, array kwargs, data .npy
    python zarr2_worker.py read JOBS.json    # each job: store, path, out .npy
    python zarr2_worker.py consolidate STORE
    python zarr2_worker.py read-consolidated STORE PATH OUT.npy
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numcodecs
import numpy as np
import zarr


def _codec(config: dict[str, Any] | None) -> Any:
    return None if config is None else numcodecs.get_codec(dict(config))


def write(jobs: list[dict[str, Any]]) -> None:
    for job in jobs:
        kw = dict(job["kwargs"])
        kw["compressor"] = _codec(kw.get("compressor"))
        kw["filters"] = [_codec(f) for f in kw.get("filters") or []] or None
        if kw.get("object_codec"):
            kw["object_codec"] = _codec(kw["object_codec"])
        dtype = kw.pop("dtype")
        dtype = [tuple(f) for f in dtype] if isinstance(dtype, list) else dtype
        z = zarr.open_array(job["store"], mode="w", path=job["path"], dtype=dtype, **kw)
        data = np.load(job["data"], allow_pickle=True)
        region = tuple(slice(0, n) for n in job["region"])
        z[region] = data[region]


def read(jobs: list[dict[str, Any]]) -> None:
    for job in jobs:
        z = zarr.open_array(job["store"], mode="r", path=job["path"])
        np.save(job["out"], z[...], allow_pickle=True)


def main() -> None:
    cmd = sys.argv[1]
    if cmd in ("write", "read"):
        with open(sys.argv[2]) as f:
            jobs = json.load(f)
        (write if cmd == "write" else read)(jobs)
    elif cmd == "consolidate":
        zarr.consolidate_metadata(sys.argv[2])
    elif cmd == "read-consolidated":
        g = zarr.open_consolidated(sys.argv[2], mode="r")
        np.save(sys.argv[4], g[sys.argv[3]][...], allow_pickle=True)
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
