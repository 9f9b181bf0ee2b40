"""The arithmetic of bench/floors.py: the rate two cores allow, the closed-loop latency bound and the sums of a
remember's and a recall's parts (no server is started)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import load_script


def _floors() -> ModuleType:
    return load_script(Path("bench/floors.py"))


def test_two_cores_allow_300_a_second_at_two_thirds_of_ten_ms_a_remember() -> None:
    floors = _floors()
    assert floors.max_rate(2000 / 300) == pytest.approx(300.0)
    assert floors.max_rate(10.0, cores=4) == pytest.approx(400.0)


def test_four_clients_on_two_busy_cores_wait_twice_an_operations_cpu() -> None:
    floors = _floors()
    assert floors.closed_loop_latency_bound(25.0) == pytest.approx(50.0)
    assert floors.closed_loop_latency_bound(25.0, clients=8) == pytest.approx(100.0)
    # one client never waits for another: its bound is its own CPU time
    assert floors.closed_loop_latency_bound(25.0, clients=1) == pytest.approx(25.0)


def test_the_sums_take_each_operations_parts_and_count_a_missing_part_as_nothing() -> None:
    floors = _floors()
    parts = {"http_server": 0.6, "http_client": 2.0, "grpc": 0.8, "postgres_tx": 0.7, "writes": 3.0, "nats": 0.3}
    parts |= {"embed": 30.0, "vector": 6.0}
    result = floors.sums(parts)
    # a remember writes the rows its design requires, not the trivial insert
    assert result["remember"]["required writes"] == pytest.approx(3.0)
    assert "transaction" not in result["remember"]
    assert result["remember"]["stack_cpu_ms"] == pytest.approx(4.7)
    assert result["remember"]["total_cpu_ms"] == pytest.approx(6.7)  # the load generator's HTTP client counted
    assert result["remember"]["max_per_second_on_2_cores"] == pytest.approx(298.5)
    trivial = result["remember, one trivial insert (the earlier floor)"]
    assert trivial["stack_cpu_ms"] == pytest.approx(2.4)
    assert trivial["total_cpu_ms"] == pytest.approx(4.4)
    assert trivial["max_per_second_on_2_cores"] == pytest.approx(454.5)
    assert result["semantic recall"]["stack_cpu_ms"] == pytest.approx(37.4)
    assert result["semantic recall"]["mean_latency_bound_ms_4_clients"] == pytest.approx(78.8)
    assert floors.sums({"grpc": 1.0})["remember"]["total_cpu_ms"] == pytest.approx(1.0)


def test_a_parts_floor_is_its_cheapest_row_and_http_keeps_server_and_client_apart() -> None:
    floors = _floors()
    rows = [
        {"part": "http", "cpu_ms": 3.1, "server_cpu_ms": 0.9, "client_cpu_ms": 2.2},
        {"part": "http", "cpu_ms": 2.6, "server_cpu_ms": 0.6, "client_cpu_ms": 2.0},
        {"part": "nats", "cpu_ms": 0.5, "server_cpu_ms": 0.1, "client_cpu_ms": 0.4},
        {"part": "nats", "cpu_ms": 0.7, "server_cpu_ms": 0.2, "client_cpu_ms": 0.5},
    ]
    assert floors.floors_of(rows) == {"http_server": 0.6, "http_client": 2.0, "nats": 0.5}


def test_the_writes_under_rls_and_as_owner_are_separate_parts_and_the_remember_takes_the_rls_one() -> None:
    floors = _floors()
    rows = [
        {"part": "writes", "cpu_ms": 3.4, "server_cpu_ms": 2.3, "client_cpu_ms": 1.1},
        {"part": "writes", "cpu_ms": 3.0, "server_cpu_ms": 2.0, "client_cpu_ms": 1.0},
        {"part": "writes_owner", "cpu_ms": 2.1, "server_cpu_ms": 1.2, "client_cpu_ms": 0.9},
    ]
    parts = floors.floors_of(rows)
    assert parts == {"writes": 3.0, "writes_owner": 2.1}
    assert floors.sums(parts)["remember"]["required writes"] == pytest.approx(3.0)
