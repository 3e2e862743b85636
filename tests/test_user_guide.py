"""zarr-python's user guide, run unchanged with ``import zarrox as zarr``.

tests/fixtures/zarr_user_guide/ holds the user-guide pages of zarr-python 3.1.6 (docs/
user-guide/*.md at tag v3.1.6, commit 25ee087e8f40, MIT license beside them: the zarr sdist has
no docs/ to take them from). Each page's executable blocks (```python exec="true"
session="..."```) run in order, one session per subprocess, as zarr-python's own
tests/test_docs.py runs them, but with every ``zarr`` and ``zarr.<module>`` import answered by
``zarrox`` and ``zarrox.<module>``. A block that raises is recorded and the session goes on.

Blocks that need what zarrox documents as out of scope are listed in ``OUT_OF_SCOPE`` with the
reason, and must fail (so that the list stays true); every other block must run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parent / "fixtures" / "zarr_user_guide"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.M | re.S)

_INTERNAL_DTYPES = (
    "zarr-python's data type classes (zarr.core.dtype): zarrox takes them as dtype= but keeps "
    "its own data type model (zarrox.metadata.dtypes)"
)
_CACHE_STORE = "zarr-python's experimental CacheStore (zarr.experimental), a Python store wrapper"
_NETWORK = "reads a public bucket on AWS: the tests have no network"

#: (page, session, index of the block in the session) -> why it does not run with zarrox
OUT_OF_SCOPE: dict[tuple[str, str, int], str] = {
    ("consolidated_metadata.md", "consolidated_metadata", 4): (
        "zarr-python's ConsolidatedMetadata object (.metadata.consolidated_metadata.metadata): "
        "zarrox keeps consolidated metadata as the stored JSON"
    ),
    **{("data_types.md", "data_types", i): _INTERNAL_DTYPES for i in range(4, 11)},
    **{("experimental.md", "experimental", i): _CACHE_STORE for i in range(7)},
    ("experimental.md", "experimental-memory-cache", 0): _CACHE_STORE,
    ("experimental.md", "experimental-local-cache", 0): _CACHE_STORE,
    ("experimental.md", "experimental-final", 0): _CACHE_STORE,
    ("groups.md", "groups", 9): (
        "zarr.core.group.GroupMetadata, a zarr-python internal module (zarrox.create_hierarchy "
        "takes it, and zarrox.metadata.GroupMetadataV3)"
    ),
    ("storage.md", "storage", 1): _NETWORK,
    ("storage.md", "storage", 5): _NETWORK + " (and zarr-python's FsspecStore class)",
    ("storage.md", "storage", 6): _NETWORK + " (fsspec's s3fs)",
    ("storage.md", "storage", 9): _NETWORK + " (obstore's S3Store)",
}

# Runs in the child: zarr is zarrox; each block is executed and its outcome reported.
RUNNER = r"""
import importlib, importlib.abc, importlib.util, json, sys, traceback, warnings
warnings.simplefilter("ignore")
import zarrox

class _Existing(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module
    def create_module(self, spec):
        return self.module
    def exec_module(self, module):
        pass

class _ZarrIsZarrox(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "zarr" and not name.startswith("zarr."):
            return None
        try:
            module = importlib.import_module("zarrox" + name[len("zarr"):])
        except ImportError:
            return None
        return importlib.util.spec_from_loader(name, _Existing(module))

# zarrox imported zarr-python's errors module (zarr.errors bases): forget zarr-python
for name in [m for m in sys.modules if m == "zarr" or m.startswith("zarr.")]:
    del sys.modules[name]
sys.meta_path.insert(0, _ZarrIsZarrox())
import zarr
assert zarr is zarrox

blocks = json.loads(sys.stdin.read())
namespace = {"__name__": "__main__"}
results = []
for i, code in enumerate(blocks):
    try:
        exec(compile(code, f"<block {i}>", "exec"), namespace)
    except BaseException as e:
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        results.append({"ok": False, "error": last})
    else:
        results.append({"ok": True, "error": None})
print("RESULTS " + json.dumps(results))
"""


def sessions() -> list[tuple[str, str, list[str]]]:
    """(page, session, blocks) of every executable session of the guide, in page order."""
    out = []
    for page in sorted(GUIDE.glob("*.md")):
        found: dict[str, list[str]] = {}
        for m in FENCE.finditer(page.read_text()):
            options = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            if options.get("exec") == "true":
                found.setdefault(options.get("session", "_default"), []).append(m.group(2))
        out.extend((page.name, name, blocks) for name, blocks in found.items())
    return out


def run_session(blocks: list[str], cwd: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(blocks),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, f"the session did not finish: {proc.stderr[-2000:]}"
    return json.loads(lines[-1][len("RESULTS ") :])  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("page", "session", "blocks"),
    [pytest.param(p, s, b, id=f"{p}:{s}") for p, s, b in sessions()],
)
def test_user_guide_session(page: str, session: str, blocks: list[str], tmp_path: Path) -> None:
    results = run_session(blocks, tmp_path)
    assert len(results) == len(blocks)
    failed, passed_but_listed = [], []
    for i, result in enumerate(results):
        reason = OUT_OF_SCOPE.get((page, session, i))
        if not result["ok"] and reason is None:
            failed.append(f"block {i}: {result['error']}\n{blocks[i]}")
        if result["ok"] and reason is not None:
            passed_but_listed.append(f"block {i} runs now: take it out of OUT_OF_SCOPE")
    assert not failed, "\n\n".join(failed)
    assert not passed_but_listed, "\n".join(passed_but_listed)


def test_the_guide_is_there() -> None:
    found = sessions()
    assert len(found) >= 10
    assert sum(len(b) for _, _, b in found) >= 100
    assert (GUIDE / "LICENSE.txt").read_text().startswith("The MIT License")
    for key in OUT_OF_SCOPE:
        assert any(key[:2] == (p, s) and key[2] < len(b) for p, s, b in found), key
