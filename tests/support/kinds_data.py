"""The labelled memories of bench/data/kinds (see its README): parsed, and split into a tuning part and a test
part by a fixed hash of the text, so the split never depends on the order of the file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

MEMORIES = Path(__file__).resolve().parents[2] / "bench" / "data" / "kinds" / "memories.txt"
CHATTER = "chatter"
TUNE_PERCENT = 60  # the hash puts about this share of the items in the tuning part


@dataclass(frozen=True)
class Labelled:
    text: str
    label: str  # a built-in kind, or "chatter"

    @property
    def split(self) -> str:
        bucket = int.from_bytes(hashlib.sha256(self.text.encode()).digest()[:4], "big") % 100
        return "tune" if bucket < TUNE_PERCENT else "test"


def load(split: str | None = None, path: Path = MEMORIES) -> list[Labelled]:
    """Every labelled memory of the file, in file order; only one split's when ``split`` is "tune" or "test"."""
    items: list[Labelled] = []
    label: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            label = line[3:].strip()
        elif line.strip() and not line.startswith("#"):
            if label is None:
                raise ValueError(f"{path}: a memory before the first '## <label>' line: {line!r}")
            items.append(Labelled(line.strip().replace("\\n", "\n"), label))
    return [item for item in items if split is None or item.split == split]
