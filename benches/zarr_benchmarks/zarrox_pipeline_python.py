#!/usr/bin/env python3
"""zarr-python with zarrox's codec pipeline (``codec_pipeline.path`` =
``zarrox.ZarroxCodecPipeline``); the calls are zarr_python.py's, as for zarrs' pipeline."""

from __future__ import annotations

import zarr
from _suite import run
from zarr_python import LIBRARY

if __name__ == "__main__":
    zarr.config.set({"codec_pipeline.path": "zarrox.ZarroxCodecPipeline"})
    run(LIBRARY)
