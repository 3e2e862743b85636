"""fuzz/chains.json is what the decoder fuzz targets decode: each chain must be one zarrox
builds, and where an entry spells out the chain the Rust core gets (``core_codecs``), it must
be exactly what zarrox hands the core for the stored ``codecs``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import zarrox

CHAINS = json.loads((Path(__file__).parent.parent / "fuzz" / "chains.json").read_text())
V3 = [e for e in CHAINS["v3"]]


@pytest.mark.parametrize("entry", V3, ids=[e["name"] for e in V3])
def test_each_v3_chain_is_what_zarrox_hands_the_core(entry: dict[str, Any]) -> None:
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=entry["shape"],
        dtype={"string": str}.get(entry["dtype"], entry["dtype"]),
        chunks=entry["shape"],
        codecs=entry["codecs"],
    )
    core = a._core["codecs"]
    if "core_codecs" in entry:
        assert core == entry["core_codecs"]
    else:
        # the stored form is the core form: same codecs, same given members
        assert [c["name"] for c in core] == [c["name"] for c in entry["codecs"]]
