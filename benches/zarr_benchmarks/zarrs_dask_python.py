#!/usr/bin/env python3
"""dask over zarr-python arrays running zarrs' codec pipeline, configured as the suite's
zarrs_dask_python scripts; the calls are zarr_dask_python.py's."""

from __future__ import annotations

import zarr
import zarrs  # noqa: F401  (the pipeline's module, imported as the suite's scripts do)
from _suite import run
from zarr_dask_python import LIBRARY

if __name__ == "__main__":
    zarr.config.set(
        {
            "threading.num_workers": None,
            "array.write_empty_chunks": False,
            "codec_pipeline": {
                "batch_size": 1,
                "path": "zarrs.ZarrsCodecPipeline",
                "validate_checksums": True,
                "store_empty_chunks": False,
                "chunk_concurrent_minimum": 4,
                "chunk_concurrent_maximum": None,
            },
        }
    )
    run(LIBRARY)
