"""Read hostile chunks through the Python API under an address-space limit, and count what
happens: the experiment RELIABILITY.md reports (``--inputs 32000 --limit-gib 4``).

For every chain of chains.json (groups v3, numcodecs, vlen), mutations of its seed chunks
(fuzz/seeds/) are stored as the one chunk of an array with that chain and read back in a
child process whose address space is limited (RLIMIT_AS), first one element (the chunk is
decoded whole, then one element copied out), then all of it (decoded straight into the output
where the chain allows). Mutations: random bytes,
truncations, bit flips, appended bytes, size fields overwritten with large values (2^31,
2^32 - 1, 2^34 as 32- and 64-bit little-endian integers), the chunk repeated, and zstd
frames / blosc headers claiming large sizes. A child that dies (an allocation the limit
refuses, aborting the process) is restarted after the input that killed it.

    .venv/bin/python fuzz/hostile_chunks.py --inputs 32000 --limit-gib 4
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
CHAINS = json.loads((HERE / "chains.json").read_text())
GROUPS = {"v3": "decode_v3", "numcodecs": "decode_numcodecs", "vlen": "decode_vlen"}
BIG = [2**31, 2**32 - 1, 2**34, 2**63]

CHILD = r"""
import json, resource, sys
import numpy as np
import zarrox

chains, inputs, start, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
chains = json.load(open(chains))
arrays = {}
store = zarrox.MemoryStore()
zarrox.config.set({"threading.max_workers": 2})
for name, entry in chains.items():
    dtype = {"string": str}.get(entry["dtype"], entry["dtype"])
    arrays[name] = zarrox.create_array(
        store, name=name, shape=entry["shape"], dtype=dtype, chunks=entry["shape"],
        codecs=entry["codecs"],
    )
    arrays[name][...]  # warm up
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
with open(inputs, "rb") as f:
    items = f.read().split(b"\n@@\n")
for i in range(start, len(items)):
    name, _, data = items[i].partition(b"\n")
    name = name.decode()
    key = name + "/c/" + "/".join("0" for _ in chains[name]["shape"])
    store.set(key, data)
    a = arrays[name]
    try:
        a[(0,) * a.ndim]  # one element: the chunk is decoded whole, then one copied out
        a[...]  # the whole chunk: decoded straight into the output where the chain allows
        outcome = "ok"
    except Exception as e:
        outcome = type(e).__name__
    print(i, outcome, flush=True)
"""


def mutations(chunk: bytes, rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        mode = rng.randrange(9)
        b = bytearray(chunk)
        if mode == 0:
            out.append(rng.randbytes(rng.randrange(0, 600)))
        elif mode == 1:
            out.append(chunk[: rng.randrange(len(chunk) + 1)])
        elif mode == 2:
            for _ in range(rng.randrange(1, 6)):
                if b:
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            out.append(bytes(b))
        elif mode == 3:
            out.append(chunk + rng.randbytes(rng.randrange(1, 64)))
        elif mode in (4, 5):
            width = 4 if mode == 4 else 8
            value = rng.choice(BIG) % (1 << (8 * width))
            at = rng.randrange(max(len(b) - width, 0) + 1)
            b[at : at + width] = value.to_bytes(width, "little")
            out.append(bytes(b))
        elif mode == 6:
            out.append(chunk * rng.randrange(2, 5))
        elif mode == 7:
            size = rng.choice(BIG)
            out.append(b"\x28\xb5\x2f\xfd\xe0" + size.to_bytes(8, "little") + b"\x01\x00\x00")
        else:
            size = rng.choice(BIG) % 2**32
            header = bytes([2, 1, rng.randrange(8), rng.choice([1, 2, 4, 8])])
            out.append(header + b"".join(v.to_bytes(4, "little") for v in (size, 1 << 16, 16)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=32000)
    parser.add_argument("--limit-gib", type=float, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    chains: dict[str, dict] = {}
    seeds: dict[str, list[bytes]] = {}
    for group, target in GROUPS.items():
        for i, entry in enumerate(CHAINS[group]):
            name = f"{group}-{entry['name']}"
            chains[name] = entry
            found = sorted((HERE / "seeds" / target).glob(f"{i:02d}-*"))
            skip = 2 if group == "vlen" else 1  # the selector bytes of the fuzz targets
            seeds[name] = [p.read_bytes()[skip:] for p in found]
    per_chain = max(1, args.inputs // len(chains))
    items: list[tuple[str, bytes]] = []
    for name in chains:
        for k in range(per_chain):
            base = seeds[name][k % len(seeds[name])]
            items.extend((name, m) for m in mutations(base, rng, 1))
    with tempfile.TemporaryDirectory() as tmp:
        chains_file = Path(tmp) / "chains.json"
        chains_file.write_text(json.dumps(chains))
        inputs_file = Path(tmp) / "inputs"
        inputs_file.write_bytes(b"\n@@\n".join(n.encode() + b"\n" + d for n, d in items))
        counts: Counter[str] = Counter()
        deaths: Counter[str] = Counter()
        start = 0
        limit = int(args.limit_gib * 2**30)
        env = {**os.environ, "MALLOC_ARENA_MAX": "2"}
        while start < len(items):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    str(chains_file),
                    str(inputs_file),
                    str(start),
                    str(limit),
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            done = [line.split() for line in proc.stdout.splitlines() if line]
            for _, outcome in done:
                counts[outcome] += 1
            start += len(done)
            if proc.returncode != 0:
                died = items[start][0]
                deaths[died] += 1
                counts[f"process died ({proc.returncode})"] += 1
                start += 1
    print(
        f"{len(items)} inputs ({per_chain} per chain, {len(chains)} chains), "
        f"address space limited to {args.limit_gib} GiB"
    )
    for outcome, n in counts.most_common():
        print(f"  {n:6d}  {outcome}")
    for name, n in deaths.most_common():
        print(f"  died on {name}: {n}")


if __name__ == "__main__":
    main()
