"""The running stack's record (``stack.json``) holds the database owner's URL: only its owner may read it
(security review finding 9)."""

from __future__ import annotations

import stat
from pathlib import Path

from engram.runtime.stack import STACK_FILE, _write_stack_file


def test_the_stack_file_is_private_even_when_one_was_left_behind(tmp_path: Path) -> None:
    (tmp_path / STACK_FILE).write_text("{}")
    (tmp_path / STACK_FILE).chmod(0o644)  # a file from an earlier run, readable by everyone
    env = {"ENGRAM_INGEST_ADDR": "127.0.0.1:1", "ENGRAM_RECALL_ADDR": "127.0.0.1:2"}
    _write_stack_file(tmp_path, "http://127.0.0.1:8080", "postgresql://postgres@127.0.0.1/x", "nats://n", env, {})
    assert stat.S_IMODE((tmp_path / STACK_FILE).stat().st_mode) == 0o600
    assert '"database_url": "postgresql://postgres@127.0.0.1/x"' in (tmp_path / STACK_FILE).read_text()
