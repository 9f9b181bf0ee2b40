"""bench/remember_ab.py's choice of sides (two checkouts at one store size, or one checkout at two) and its
reading of pg_stat_statements (no server is started)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import load_script


def _bench() -> ModuleType:
    return load_script(Path("bench/remember_ab.py"))


def test_two_checkouts_share_the_store_size() -> None:
    bench = _bench()
    a, b = Path("/tmp/a"), Path("/tmp/b")
    assert bench.sides([a, b], 5000, None) == ([a, b], [5000, 5000])


def test_one_checkout_is_measured_at_each_of_two_sizes() -> None:
    bench = _bench()
    a, b = Path("/tmp/a"), Path("/tmp/b")
    assert bench.sides([a], 0, "6000,100000") == ([a, a], [6000, 100000])
    assert bench.sides([a, b], 0, "6000,100000") == ([a, b], [6000, 100000])


@pytest.mark.parametrize(("checkouts", "sizes"), [(1, None), (3, None), (1, "6000"), (1, "1,2,3"), (3, "1,2")])
def test_sides_refuses_what_it_cannot_alternate(checkouts: int, sizes: str | None) -> None:
    bench = _bench()
    with pytest.raises(ValueError):
        bench.sides([Path(f"/tmp/{n}") for n in range(checkouts)], 0, sizes)


def test_statement_times_are_per_remember_and_leave_out_rare_statements() -> None:
    bench = _bench()
    rows = [
        {"query": "INSERT INTO memory_items\n   VALUES ($1)", "calls": 400, "total_exec_time": 600.0},
        {"query": "SELECT pg_stat_statements_reset()", "calls": 400, "total_exec_time": 40.0},
        {"query": "VACUUM memory_items", "calls": 1, "total_exec_time": 900.0},
    ]
    assert bench.statement_times(rows, 400) == {"INSERT INTO memory_items VALUES ($1)": 1.5}
