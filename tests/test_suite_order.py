"""The suite's own scheduling rule (tests/conftest.py): files marked ``starts_first`` move to the front in the order
of their rank, files of one rank and every other file keep the order they came in (pytest-random-order's shuffle)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import pytest_collection_modifyitems


@dataclass
class Item:
    path: Path
    marks: dict = field(default_factory=dict)

    def get_closest_marker(self, name):
        return self.marks.get(name)


def test_starts_first_files_lead_in_rank_order_and_the_rest_keeps_its_order():
    first = pytest.mark.starts_first.mark
    items = [Item(Path("a.py")), Item(Path("vllm.py"), {"starts_first": pytest.mark.starts_first(rank=3).mark}),
             Item(Path("b.py")), Item(Path("smoke.py"), {"starts_first": first}),
             Item(Path("vllm.py"), {"starts_first": pytest.mark.starts_first(rank=3).mark}),
             Item(Path("e2e.py"), {"starts_first": pytest.mark.starts_first(rank=1).mark}),
             Item(Path("c.py")), Item(Path("smoke.py"), {"starts_first": first})]
    pytest_collection_modifyitems(None, None, items)
    assert [str(it.path) for it in items] == ["smoke.py", "smoke.py", "e2e.py", "vllm.py", "vllm.py",
                                              "a.py", "b.py", "c.py"]


def test_no_marked_file_leaves_the_order_alone():
    items = [Item(Path(n)) for n in ("c.py", "a.py", "b.py")]
    pytest_collection_modifyitems(None, None, items)
    assert [str(it.path) for it in items] == ["c.py", "a.py", "b.py"]
