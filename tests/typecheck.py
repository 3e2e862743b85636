"""Type-check zarrox as its users' type checkers see it: mypy on the package (the
``[tool.mypy]`` configuration in pyproject.toml) and on README.md's Python code, each block
a module of its own, except the walk-through's blocks, which run as one (tests/test_readme.py).

Run once by tests/run.sh (on its base Python): ``python tests/typecheck.py``. The README
modules import the installed zarrox, so its ``py.typed`` marker and ``_core.pyi`` stub are
what mypy reads there, as in a user's project.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
# what README's later blocks take from the first ones, as a reader does
PREAMBLE = "import numpy as np\nimport zarrox\n\n"


def readme_modules(text: str) -> dict[str, str]:
    """README's Python blocks as modules: ``readme_<line>.py`` -> code (numpy and zarrox
    imported first), and ``readme_walkthrough.py``."""
    start, end = text.index("<!-- walkthrough -->"), text.index("<!-- /walkthrough -->")
    modules: dict[str, str] = {}
    walkthrough: list[str] = []
    for m in BLOCK.finditer(text):
        if start <= m.start() < end:
            walkthrough.append(m.group(1))
        else:
            line = text.count("\n", 0, m.start()) + 1
            modules[f"readme_{line}.py"] = PREAMBLE + m.group(1)
    modules["readme_walkthrough.py"] = "\n".join(walkthrough)
    return modules


def main() -> int:
    mypy = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    print("mypy: the package", flush=True)
    status = subprocess.run(mypy, cwd=ROOT).returncode
    with tempfile.TemporaryDirectory() as tmp:
        modules = readme_modules((ROOT / "README.md").read_text())
        for name, code in modules.items():
            (Path(tmp) / name).write_text(code)
        print(f"mypy: README.md's Python ({len(modules)} modules)", flush=True)
        # from a directory of their own, so that zarrox is the installed package
        status |= subprocess.run([*mypy, *sorted(modules)], cwd=tmp).returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
