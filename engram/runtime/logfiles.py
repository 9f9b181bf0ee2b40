"""Reading the end of a server's log file for error messages."""

from __future__ import annotations

from pathlib import Path


def tail(path: Path | None, lines: int = 20, max_bytes: int = 16_384) -> str:
    """The last ``lines`` lines of ``path`` (empty when there is no such file)."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - max_bytes))
        text = handle.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def with_tail(message: str, path: Path | None) -> str:
    """``message`` followed by the tail of the log at ``path``, when there is one."""
    end = tail(path)
    return f"{message}\n--- last lines of {path} ---\n{end}" if end else message
