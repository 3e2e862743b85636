"""pytest plugin (``-p listed_tests``): when ``ZARR_SUITE_ONLY`` names a file of test ids (one
per line, in ``compare.py``'s form), run only those tests and deselect the rest.

The ids are matched through the same JUnit names ``compare.py`` reads its ids from, so a test
that the comparison reports is the test this plugin selects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _pytest.junitxml import mangle_test_address
from compare import case_id


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed = os.environ.get("ZARR_SUITE_ONLY")
    if not listed:
        return
    wanted = set(Path(listed).read_text().splitlines())
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        names = mangle_test_address(item.nodeid)
        (keep if case_id(".".join(names[:-1]), names[-1]) in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
