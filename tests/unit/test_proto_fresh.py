"""The committed generated code must match what `make proto` produces from proto/ now."""

from __future__ import annotations

from pathlib import Path

from grpc_tools import protoc

import engram

ROOT = Path(engram.__file__).resolve().parent.parent


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    sources = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    assert sources, "no .proto files found"
    include = Path(protoc.__file__).parent / "_proto"
    code = protoc.main(
        [
            "protoc",
            f"-I{ROOT / 'proto'}",
            f"-I{include}",
            f"--python_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            f"--pyi_out={tmp_path}",
            *sources,
        ]
    )
    assert code == 0
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py*") if p.is_file())
    assert generated, "protoc produced nothing"
    stale = [
        str(rel)
        for rel in generated
        if not (ROOT / rel).exists() or (ROOT / rel).read_bytes() != (tmp_path / rel).read_bytes()
    ]
    assert stale == [], f"generated code is stale, run `make proto`: {stale}"
