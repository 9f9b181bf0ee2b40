"""The README documents every setting and sends no reader outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from engram.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def _documented() -> set[str]:
    """The variables named in the first column of the README's configuration table."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for cell in first_cells for name in re.findall(r"`(ENGRAM_[A-Z0-9_]+)`", cell)}


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    documented = _documented()
    missing = sorted(
        f"ENGRAM_{name.upper()}" for name in Settings.model_fields if f"ENGRAM_{name.upper()}" not in documented
    )
    assert not missing, f"settings missing from the README's configuration table: {missing}"


def test_the_readme_table_names_no_setting_that_does_not_exist() -> None:
    known = {f"ENGRAM_{name.upper()}" for name in Settings.model_fields}
    unknown = sorted(_documented() - known)
    assert not unknown, f"the README documents settings engram/config.py does not have: {unknown}"


def test_docs_and_code_stand_alone() -> None:
    """Nothing in the product's docs or code points at the team workspace outside the repository."""
    outside = re.compile(r"\.\./shared|DESIGN §|DESIGN\.md")
    places = [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "engram").rglob("*.py"),
        *(ROOT / "services").rglob("*.py"),
        *(ROOT / "services").rglob("*.md"),
    ]
    offenders = [
        str(p.relative_to(ROOT))
        for p in places
        if p.name != "benchmarks.md" and outside.search(p.read_text(errors="replace"))
    ]
    assert not offenders, f"these send a reader outside the repository: {offenders}"
