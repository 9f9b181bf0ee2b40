"""The README's MCP setup for Claude Code and Cursor: the JSON is valid, and what it starts or reaches exists
(the ``engram mcp`` subcommand, the gateway's ``/mcp`` path). ``tests/e2e/test_mcp.py`` connects with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from engram.cli import main
from services.gateway.mcp_http import PATH

README = Path(__file__).resolve().parents[2] / "README.md"


def mcp_section() -> str:
    return README.read_text().split("## Use Engram from an agent (MCP)", 1)[1].split("\n## ", 1)[0]


def servers() -> list[dict[str, Any]]:
    """The ``engram`` entry of each JSON configuration in the section, in order."""
    blocks = re.findall(r"```json\n(.*?)```", mcp_section(), re.DOTALL)
    return [json.loads(block)["mcpServers"]["engram"] for block in blocks]


def test_the_configurations_parse_and_name_a_real_subcommand_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    stdio, http = servers()
    assert stdio["command"] == "engram" and set(stdio["env"]) == {"ENGRAM_URL", "ENGRAM_API_KEY"}
    with pytest.raises(SystemExit) as done:
        main([*stdio["args"], "--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage: engram mcp")
    assert urlsplit(http["url"]).path == PATH and http["headers"]["Authorization"].startswith("Bearer eng_")


def test_the_claude_code_command_starts_the_same_subcommand() -> None:
    [command] = re.findall(r"```bash\n(.*?)```", mcp_section(), re.DOTALL)
    assert command.startswith("claude mcp add engram ") and command.rstrip().endswith("-- engram mcp")
    assert "ENGRAM_URL=" in command and "ENGRAM_API_KEY=" in command


def test_a_subcommand_that_does_not_exist_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """The negative control of the check above: argparse refuses an unknown subcommand (exit 2)."""
    with pytest.raises(SystemExit) as done:
        main(["no-such-command", "--help"])
    assert done.value.code == 2 and "invalid choice" in capsys.readouterr().err
