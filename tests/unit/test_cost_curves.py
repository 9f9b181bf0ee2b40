"""The cost curves of bench/latency.py --sizes: the series taken from per-size results and the PNG drawn from
them, on a small synthetic input; and matplotlib stays out of the benchmark until a plot is drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _cost_curves() -> ModuleType:
    return load_script(Path("bench/cost_curves.py"))


def _run(size: int, slow: float, keyword: bool = True) -> dict[str, Any]:
    modes = ["semantic", "hybrid"] + (["keyword"] if keyword else [])
    return {
        "store_size": size,
        "recall": [
            {
                "mode": mode,
                "clients": clients,
                "p50_ms": slow * clients * (n + 1),
                "p95_ms": 2 * slow * clients * (n + 1),
            }
            for n, mode in enumerate(modes)
            for clients in (1, 4)
        ],
        "remember": [
            {"writers": 1, "per_second": 50.0, "p95_ms": 30.0},
            {"writers": 4, "per_second": 100.0 / slow, "p95_ms": 20.0 * slow},
        ],
    }


def test_series_are_sorted_by_size_and_read_at_four_clients_and_writers() -> None:
    cost_curves = _cost_curves()
    series = cost_curves.curves([_run(30_000, 2.0), _run(10_000, 1.0, keyword=False)])
    assert series["store_size"] == [10_000, 30_000]
    assert series["recall"]["semantic"] == {"p50_ms": [4.0, 8.0], "p95_ms": [8.0, 16.0]}
    assert series["recall"]["hybrid"]["p50_ms"] == [8.0, 16.0]
    assert series["recall"]["keyword"]["p50_ms"] == [None, 24.0]  # not measured at 10k
    assert series["remember"] == {"per_second": [100.0, 50.0], "p95_ms": [20.0, 40.0]}


def test_write_saves_the_series_and_a_png(tmp_path: Path) -> None:
    cost_curves = _cost_curves()
    runs = [_run(10_000, 1.0), _run(30_000, 1.5), _run(100_000, 3.0)]
    json_path, png_path = tmp_path / "results" / "curves.json", tmp_path / "img" / "cost-curves.png"
    cost_curves.write(runs, json_path, png_path, title="test", commit="abc1234")
    saved = json.loads(json_path.read_text())
    assert saved["commit"] == "abc1234"
    assert saved["curves"]["store_size"] == [10_000, 30_000, 100_000]
    assert [r["store_size"] for r in saved["runs"]] == [10_000, 30_000, 100_000]
    data = png_path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000  # two panels with lines, not an empty canvas


def test_the_benchmark_imports_without_matplotlib() -> None:
    code = (
        "import sys; sys.path.insert(0, 'bench'); import latency, cost_curves; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
