"""What ``import zarrox`` costs: the modules it leaves in ``sys.modules`` (numpy and the core,
none of zarr-python, xarray, dask, rich, asyncio or the TensorStore layer), and that what
used to need zarr-python at import still works when zarr-python is imported before zarrox,
after it, or never: zarrox's exceptions are caught as zarr-python's, and zarr-python takes
zarrox stores. Each check runs in a fresh Python process (``sys.modules`` is per process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import zarrox
from zarrox import errors

#: the directory zarrox is imported from here, first on the child's path so that it imports
#: the same zarrox
SOURCE = str(Path(zarrox.__file__).resolve().parents[1])

#: what ``import zarrox`` must not import: other libraries, and the parts of zarrox that
#: import them or are imported when used
HEAVY = (
    "zarr",
    "numcodecs",
    "xarray",
    "dask",
    "distributed",
    "rich",
    "asyncio",
    "concurrent.futures",
    "tensorstore",
    "zarrs",
    "zarrista",
    "pandas",
    "fsspec",
    "obstore",
    "zarrox.tensorstore_spec",
    "zarrox.pipeline",
    "zarrox.xarray",
    "zarrox.verify",
    "zarrox.cli",
    "zarrox.storage.zarr_adapter",
)

#: a snippet that prints, as JSON, the modules of HEAVY (and their submodules) imported
LOADED = (
    "import json as _json, sys as _sys\n"
    f"_heavy = {HEAVY!r}\n"
    "print(_json.dumps(sorted(m for m in _sys.modules\n"
    "    if any(m == h or m.startswith(h + '.') for h in _heavy))))\n"
)


def run_python(code: str, *, loaded: bool = False) -> str:
    """Run ``code`` in a fresh interpreter (a RuntimeWarning is an error: zarrox warns so
    when it could not adapt to zarr-python), followed by :data:`LOADED` if ``loaded``; its
    stdout. Fails on a non-zero exit."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SOURCE, env.get("PYTHONPATH")) if p)
    code = textwrap.dedent(code) + (LOADED if loaded else "")
    proc = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def last_json(out: str) -> object:
    return json.loads(out.strip().splitlines()[-1])


# -- what import zarrox loads -------------------------------------------------------------------


def test_import_zarrox_loads_none_of_the_heavy_modules() -> None:
    loaded = last_json(run_python("import zarrox\n", loaded=True))
    assert loaded == []


def test_import_zarrox_loads_numpy_and_the_core() -> None:
    out = run_python(
        """
        import sys, zarrox
        print(all(m in sys.modules for m in ("numpy", "zarrox._core", "zarrox.errors")))
        """
    )
    assert out.split() == ["True"]


def test_every_public_name_works_and_lazy_names_load_their_layer() -> None:
    """Each name of ``zarrox.__all__`` resolves; the TensorStore layer and the codec
    pipeline are imported when named, as the same objects as their modules'."""
    out = run_python(
        """
        import sys, zarrox
        names = [n for n in zarrox.__all__ if getattr(zarrox, n, None) is None]
        print("missing", names)
        print("spec loaded", "zarrox.tensorstore_spec" in sys.modules)
        ts = zarrox.tensorstore_spec  # the package, as an attribute, as before
        print("same", zarrox.Spec is ts.Spec and zarrox.ArrayView is ts.ArrayView
              and zarrox.d is ts.d)
        print("in dir", {"Spec", "ArrayView", "d", "ZarroxCodecPipeline"} <= set(dir(zarrox)))
        import zarrox.pipeline
        print("pipeline", zarrox.ZarroxCodecPipeline is zarrox.pipeline.ZarroxCodecPipeline)
        try:
            zarrox.no_such_name
        except AttributeError as e:
            print("error", e)
        """
    )
    assert out.splitlines() == [
        "missing []",
        "spec loaded True",
        "same True",
        "in dir True",
        "pipeline True",
        "error module 'zarrox' has no attribute 'no_such_name'",
    ]


def test_reading_and_writing_load_no_heavy_module(tmp_path: Path) -> None:
    """Creating, writing, reading and listing (local, memory and dict stores, zarrox.open)
    import none of them either: they are imported when used."""
    code = f"""
        import numpy as np, zarrox
        a = zarrox.create_array({str(tmp_path / "a.zarr")!r}, shape=(6, 4), chunks=(2, 2),
                                dtype="i4", shards=(4, 4))
        a[:] = np.arange(24).reshape(6, 4)
        b = zarrox.open({str(tmp_path / "a.zarr")!r}, mode="r")
        assert b[5, 3] == 23 and b.info.nbytes == 96
        g = zarrox.group(store={{}})
        g.create_array("x", shape=(3,), dtype="u1")[:] = [1, 2, 3]
        m = zarrox.open_group(zarrox.MemoryStore(), mode="w")
        m.create_array("y", shape=(2,), dtype="f8")[:] = 1.5
        assert list(m.keys()) == ["y"] and g["x"][2] == 3
        try:
            zarrox.open_array({str(tmp_path / "missing")!r}, mode="r")
        except FileNotFoundError:
            pass
        """
    assert last_json(run_python(code, loaded=True)) == []


def test_the_awaitable_api_imports_asyncio_when_awaited() -> None:
    out = run_python(
        """
        import sys, zarrox
        a = zarrox.create_array(zarrox.MemoryStore(), shape=(4,), dtype="i2")
        print("asyncio" in sys.modules)
        import asyncio
        async def main():
            aa = zarrox.AsyncArray(a)
            await aa.setitem(slice(None), 7)
            return await aa.getitem(slice(1, 3))
        print(asyncio.run(main()).tolist())
        """
    )
    assert out.splitlines() == ["False", "[7, 7]"]


def test_a_spec_opens_with_the_tensorstore_layer_loaded_then(tmp_path: Path) -> None:
    out = run_python(
        f"""
        import sys, zarrox
        spec = {{"driver": "zarr3", "kvstore": {{"driver": "file",
                 "path": {str(tmp_path / "s.zarr")!r}}}}}
        print("zarrox.tensorstore_spec" in sys.modules)
        v = zarrox.open(spec, create=True, dtype="int32", shape=[3])
        print(type(v).__name__, "zarrox.tensorstore_spec" in sys.modules)
        print(zarrox.open(zarrox.Spec(spec)).shape)
        """
    )
    assert out.splitlines() == ["False", "ArrayView True", "(3,)"]


# -- exceptions: caught as zarr-python's, whenever zarr-python is imported ----------------------

#: every pairing zarrox.errors documents: zarrox class -> zarr.errors class
PAIRS = {cls.__name__: name for cls, (name, _) in errors._COUNTERPARTS.items()}

#: prints, as JSON: for each pairing that zarr-python has, whether the zarrox class is a
#: subclass, whether an ``except`` of the zarr-python class catches an instance raised
#: (made before the check, maybe before zarr-python was imported: ``made``), and the MRO
CHECK_PAIRS = f"""
import json, sys
def check(made):
    import zarr.errors
    found = {{}}
    for ours, theirs in {PAIRS!r}.items():
        cls, zcls = getattr(zarrox.errors, ours), getattr(zarr.errors, theirs, None)
        if zcls is None:
            continue
        try:
            raise made[ours]
        except zcls:
            caught = True
        except Exception:
            caught = False
        found[ours] = [issubclass(cls, zcls), caught,
                       [f"{{c.__module__}}.{{c.__qualname__}}" for c in cls.__mro__]]
    return found
"""

MAKE = """
made = {n: getattr(zarrox.errors, n)(f"array 'a': {n}") for n in PAIRS}
"""


def _pairs(first: str) -> dict[str, list[object]]:
    """The pairings' check (CHECK_PAIRS) with zarr-python imported ``first`` ("zarr") or
    after zarrox ("zarrox"), the exceptions made before zarr-python is imported."""
    imports = "import zarr\nimport zarrox\n" if first == "zarr" else "import zarrox\n"
    code = (
        imports + f"PAIRS = {PAIRS!r}\n" + MAKE + CHECK_PAIRS + "print(json.dumps(check(made)))\n"
    )
    found = last_json(run_python(code))
    assert isinstance(found, dict)
    return found


def test_the_pairings_are_those_documented() -> None:
    assert PAIRS == {
        "MetadataError": "MetadataValidationError",
        "NodeNotFoundError": "NodeNotFoundError",
        "ArrayNotFoundError": "ArrayNotFoundError",
        "GroupNotFoundError": "GroupNotFoundError",
        "ContainsArrayError": "ContainsArrayError",
        "ContainsGroupError": "ContainsGroupError",
        "UnknownCodecError": "UnknownCodecError",
        "BoundsCheckError": "BoundsCheckError",
        "NegativeStepError": "NegativeStepError",
        "VindexInvalidSelectionError": "VindexInvalidSelectionError",
        "PickleCodecDisabledError": "PickleCodecDisabledError",
    }


def test_errors_are_zarr_pythons_when_zarr_is_imported_first() -> None:
    zarr = pytest.importorskip("zarr")
    found = _pairs("zarr")
    expected = {n for n, t in PAIRS.items() if hasattr(zarr.errors, t)}
    assert set(found) == expected
    assert {n: v[:2] for n, v in found.items()} == {n: [True, True] for n in expected}


def test_errors_become_zarr_pythons_when_zarr_is_imported_after_zarrox() -> None:
    """Even exceptions made before zarr-python was imported are caught as its classes, and
    the classes are the same (their MRO) as where zarr-python came first."""
    pytest.importorskip("zarr")
    after, before = _pairs("zarrox"), _pairs("zarr")
    assert {n: v[:2] for n, v in after.items()} == {n: [True, True] for n in before}
    assert after == before


def test_errors_raised_by_zarrox_are_caught_as_zarr_pythons_imported_after(
    tmp_path: Path,
) -> None:
    pytest.importorskip("zarr")
    out = run_python(
        f"""
        import numpy as np, zarrox
        root = {str(tmp_path / "r.zarr")!r}
        zarrox.create_group(root)
        a = zarrox.create_array(root, name="a", shape=(4,), dtype="i4")
        import zarr.errors
        for what, call in [
            ("ArrayNotFoundError", lambda: zarrox.open_array(root, path="nope", mode="r")),
            ("GroupNotFoundError", lambda: zarrox.open_group(root, path="nope", mode="r")),
            ("ContainsArrayError", lambda: zarrox.create_array(root, name="a", shape=(1,),
                                                                dtype="i1")),
            ("BoundsCheckError", lambda: a.get_orthogonal_selection(([9],))),
            ("NegativeStepError", lambda: a[::-1]),
            ("UnknownCodecError", lambda: zarrox.create_array(
                zarrox.MemoryStore(), shape=(2,), dtype="i1",
                compressors=[{{"name": "no-such-codec"}}])),
        ]:
            try:
                call()
            except getattr(zarr.errors, what) as e:
                print(what, "caught", type(e).__module__)
        """
    )
    assert out.splitlines() == [
        f"{n} caught zarrox.errors"
        for n in (
            "ArrayNotFoundError",
            "GroupNotFoundError",
            "ContainsArrayError",
            "BoundsCheckError",
            "NegativeStepError",
            "UnknownCodecError",
        )
    ]


def test_errors_subclass_the_builtins_while_zarr_is_not_imported() -> None:
    out = run_python(
        """
        import sys, zarrox
        from zarrox import errors as e
        print(issubclass(e.ArrayNotFoundError, FileNotFoundError),
              issubclass(e.ArrayNotFoundError, ValueError),
              issubclass(e.UnknownCodecError, KeyError),
              issubclass(e.BoundsCheckError, IndexError),
              issubclass(e.ContainsArrayError, FileExistsError),
              issubclass(e.MetadataError, ValueError))
        try:
            zarrox.open_array(zarrox.MemoryStore(), mode="r")
        except FileNotFoundError as err:
            print(type(err).__name__)
        print(any(m == "zarr" or m.startswith("zarr.") for m in sys.modules))
        print(all(c.__module__ != "zarr.errors" for c in e.ArrayNotFoundError.__mro__))
        """
    )
    assert out.splitlines() == [
        "True True True True True True",
        "ArrayNotFoundError",
        "False",
        "True",
    ]


# -- zarr-python takes zarrox stores ------------------------------------------------------------


@pytest.mark.parametrize("first", ["zarr", "zarrox"])
def test_zarr_python_takes_zarrox_stores(first: str, tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    imports = "import zarr, zarrox" if first == "zarr" else "import zarrox"
    out = run_python(
        f"""
        {imports}
        import numpy as np
        stores = [zarrox.MemoryStore(), zarrox.LocalStore({str(tmp_path / "l.zarr")!r})]
        for store in stores:
            a = zarrox.create_array(store, shape=(3, 2), dtype="u2")
            a[:] = np.arange(6).reshape(3, 2)
        import zarr
        for store in stores:
            z = zarr.open_array(store, mode="r")
            print(type(z.store).__name__, z[:].sum(), zarr.open(store, mode="r").shape)
        g = zarr.open_group(zarrox.MemoryStore(), mode="w")
        g.create_array("x", shape=(2,), dtype="i1")[:] = 5
        print(sorted(g.array_keys()))
        """
    )
    assert out.splitlines() == ["ZarrStoreView 15 (3, 2)", "ZarrStoreView 15 (3, 2)", "['x']"]


def test_a_dict_written_before_zarr_is_imported_opens_in_zarr_python() -> None:
    pytest.importorskip("zarr")
    out = run_python(
        """
        import sys, numpy as np, zarrox
        d = {}
        a = zarrox.create_array(d, shape=(10, 6), chunks=(4, 3), shards=(8, 6), dtype="i4")
        a[:] = np.arange(60).reshape(10, 6)
        print(type(d["zarr.json"]).__name__, "zarr" in sys.modules)
        import zarr
        z = zarr.open_array(zarr.storage.MemoryStore(d), mode="r+")
        print(bool((z[:] == a[:]).all()), bool((z[3:9, 1:5] == a[3:9, 1:5]).all()))
        z[0, 0] = -1
        a[1, 1] = -2
        print(a[0, 0], z[1, 1], type(d["c/0/0"]).__name__)
        """
    )
    assert out.splitlines() == ["StoredBytes False", "True True", "-1 -2 Buffer"]


# -- the post-import hook ---------------------------------------------------------------------


def test_the_hook_leaves_the_module_its_loader_and_then_steps_aside(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    (tmp_path / "late_module.py").write_text("VALUE = 1\n")
    (tmp_path / "broken_hook_target.py").write_text("VALUE = 2\n")
    out = run_python(
        f"""
        import sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        from zarrox._post_import import when_imported, _FINDER, _waiting
        seen = []
        when_imported("late_module", lambda m: seen.append(("late", m.VALUE)))
        def broken(module):
            raise RuntimeError("no")
        when_imported("broken_hook_target", broken)
        print(_FINDER in sys.meta_path)
        import json  # another module: untouched
        import late_module
        print(seen, type(late_module.__loader__).__name__,
              type(late_module.__spec__.loader).__name__)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import broken_hook_target
        print(broken_hook_target.VALUE, [str(w.message) for w in caught])
        print(sorted(_waiting), _FINDER in sys.meta_path)
        import zarr  # what zarrox itself awaits
        print(sorted(_waiting), _FINDER in sys.meta_path)
        when_imported("late_module", lambda m: seen.append(("now", m.VALUE)))
        print(seen[-1])
        """
    )
    assert out.splitlines() == [
        "True",
        "[('late', 1)] SourceFileLoader SourceFileLoader",
        "2 ['zarrox could not adapt to broken_hook_target (RuntimeError: no)']",
        "['zarr.errors', 'zarr.storage._common'] True",
        "[] False",
        "('now', 1)",
    ]


# -- the command line ----------------------------------------------------------------------------


def test_cli_help_works_and_loads_no_heavy_module() -> None:
    out = run_python(
        """
        import contextlib, io, sys
        from zarrox.cli import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                main(["--help"])
            except SystemExit as e:
                code = e.code
        print(code, buf.getvalue().startswith("usage: zarrox"), "info" in buf.getvalue())
        """,
        loaded=True,
    )
    lines = out.splitlines()
    assert lines[0] == "0 True True"
    assert json.loads(lines[-1]) == ["zarrox.cli"]


def test_cli_help_as_a_command() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SOURCE, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "zarrox.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: zarrox")
    assert "describe an array or group" in proc.stdout


def test_cli_info_loads_no_heavy_module(tmp_path: Path) -> None:
    root = tmp_path / "i.zarr"
    zarrox.create_array(root, shape=(4, 4), chunks=(2, 2), dtype="f4")[:] = 1.0
    out = run_python(
        f"""
        import contextlib, io, sys
        from zarrox.cli import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(["info", {str(root)!r}])
        print(code, "Shape              : (4, 4)" in buf.getvalue())
        """,
        loaded=True,
    )
    lines = out.splitlines()
    assert lines[0] == "0 True"
    assert json.loads(lines[-1]) == ["zarrox.cli"]
