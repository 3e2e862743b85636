#!/usr/bin/env python3
"""zarr-python with zarrs-python's ``ZarrsCodecPipeline``, configured as the suite's
zarrs_python scripts; the calls are zarr_python.py's."""

from __future__ import annotations

import zarr
import zarrs  # noqa: F401  (the pipeline's module, imported as the suite's scripts do)
from _suite import run
from zarr_python import LIBRARY

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
