"""Cost curves of bench/latency.py --sizes: recall p50/p95 per mode and remember throughput and p95 against
the store's size, as a JSON series and a PNG plot. Pure apart from the file writes; matplotlib is imported only
when a plot is drawn (it is a development dependency, not one of the product's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODES = ("semantic", "hybrid", "keyword")


def curves(runs: list[dict[str, Any]], clients: int = 4, writers: int = 4) -> dict[str, Any]:
    """The series to plot from one measurement per store size (each a bench/latency.py result with its
    ``store_size``), sorted by size: recall p50/p95 per mode at ``clients`` clients, remember per second and p95
    with ``writers`` writers. A mode or level a run did not measure is None at that size."""
    ordered = sorted(runs, key=lambda r: int(r["store_size"]))
    recall: dict[str, dict[str, list[float | None]]] = {}
    for mode in MODES:
        found = [
            next((r for r in run["recall"] if r["mode"] == mode and r["clients"] == clients), None) for run in ordered
        ]
        recall[mode] = {
            "p50_ms": [r["p50_ms"] if r else None for r in found],
            "p95_ms": [r["p95_ms"] if r else None for r in found],
        }
    writes = [next((w for w in run["remember"] if w["writers"] == writers), None) for run in ordered]
    return {
        "store_size": [int(r["store_size"]) for r in ordered],
        "recall_clients": clients,
        "recall": recall,
        "remember_writers": writers,
        "remember": {
            "per_second": [w["per_second"] if w else None for w in writes],
            "p95_ms": [w["p95_ms"] if w else None for w in writes],
        },
    }


def plot(series: dict[str, Any], path: Path, title: str = "") -> None:
    """Two panels against the store's size: recall p50 (solid) and p95 (dashed) per mode; remember per second
    (solid, left axis) and its p95 (dashed, right axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = series["store_size"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for mode, colour in zip(MODES, ("tab:blue", "tab:orange", "tab:green"), strict=True):
        points = series["recall"][mode]
        left.plot(sizes, points["p50_ms"], "o-", color=colour, label=f"{mode} p50")
        left.plot(sizes, points["p95_ms"], "s--", color=colour, label=f"{mode} p95")
    left.set_title(f"recall at {series['recall_clients']} clients")
    left.set_xlabel("memories in the store")
    left.set_ylabel("ms")
    left.set_ylim(bottom=0)
    left.legend(fontsize=8)
    right.plot(sizes, series["remember"]["per_second"], "o-", color="tab:purple", label="remember / s")
    right.set_title(f"remember with {series['remember_writers']} writers")
    right.set_xlabel("memories in the store")
    right.set_ylabel("acknowledged per second")
    right.set_ylim(bottom=0)
    latency = right.twinx()
    latency.plot(sizes, series["remember"]["p95_ms"], "s--", color="tab:red", label="p95 ms")
    latency.set_ylabel("p95 ms")
    latency.set_ylim(bottom=0)
    right.legend(
        right.get_legend_handles_labels()[0] + latency.get_legend_handles_labels()[0],
        right.get_legend_handles_labels()[1] + latency.get_legend_handles_labels()[1],
        fontsize=8,
        loc="lower left",
    )
    for axis in (left, right):
        axis.ticklabel_format(axis="x", style="plain")
        axis.grid(alpha=0.3)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(runs: list[dict[str, Any]], json_path: Path, png_path: Path, title: str = "", **meta: Any) -> dict[str, Any]:
    """The series as JSON (with ``meta`` and every run in full) and the plot; returns the series."""
    series = curves(runs)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({**meta, "curves": series, "runs": runs}, indent=2) + "\n")
    plot(series, png_path, title)
    return series
