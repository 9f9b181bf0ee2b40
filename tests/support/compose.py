"""Reading docker-compose.yml and the Dockerfile the way their tools do, for tests that have neither engine.

``interpolate`` applies Compose's variable rules (``$$``, ``$VAR``, ``${VAR}``, ``${VAR:-default}``,
``${VAR-default}``, ``${VAR:?error}``, ``${VAR?error}``, ``${VAR:+alt}``, ``${VAR+alt}``) to every string of the
loaded YAML, as ``docker compose`` does before it validates the file; a required variable that is unset raises
``MissingVariable`` naming it. ``load_compose`` interpolates with the variables of an env file (``.env.example``)
and hands the result to the spec-compliant ``compose-spec`` parser. ``final_stage`` reads the instructions of a
Dockerfile's last stage (continuation lines joined, comments dropped).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from compose_spec import PyCompose

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "Dockerfile"

_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


class MissingVariable(ValueError):
    """A ``${VAR:?...}`` or ``${VAR?...}`` whose variable is unset (``:?`` also when it is empty)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"required variable {name} is missing a value: {message}")
        self.name = name


def read_env_file(path: Path = ENV_EXAMPLE) -> dict[str, str]:
    """``KEY=VALUE`` lines of an env file; blank lines and ``#`` comments skipped."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"{path.name}: {line!r} is not KEY=VALUE")
        values[key.strip()] = value.strip()
    return values


def _substitute(text: str, env: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        if match.group("escaped"):
            return "$"
        name = match.group("braced") or match.group("bare")
        op, arg = match.group("op"), match.group("arg") or ""
        value = env.get(name)
        unset_or_empty = value is None or (value == "" and op is not None and op.startswith(":"))
        if op in (":-", "-"):
            return arg if unset_or_empty else str(value)
        if op in (":?", "?"):
            if unset_or_empty:
                raise MissingVariable(name, arg)
            return str(value)
        if op in (":+", "+"):
            return "" if unset_or_empty else arg
        return value or ""

    return _VARIABLE.sub(one, text)


def interpolate(node: Any, env: Mapping[str, str]) -> Any:
    """``node`` (loaded YAML) with every string interpolated from ``env``."""
    if isinstance(node, str):
        return _substitute(node, env)
    if isinstance(node, list):
        return [interpolate(item, env) for item in node]
    if isinstance(node, dict):
        return {key: interpolate(value, env) for key, value in node.items()}
    return node


def raw_compose(text: str | None = None) -> dict[str, Any]:
    """docker-compose.yml as written (anchors resolved, nothing interpolated)."""
    loaded = yaml.safe_load(COMPOSE_FILE.read_text() if text is None else text)
    assert isinstance(loaded, dict)
    return loaded


def load_compose(env: Mapping[str, str] | None = None, text: str | None = None) -> dict[str, Any]:
    """The compose file interpolated with ``env`` (default: .env.example), parsed and validated by compose-spec,
    as a plain dict."""
    resolved = interpolate(raw_compose(text), read_env_file() if env is None else env)
    parsed = PyCompose.from_yaml(yaml.safe_dump(resolved, sort_keys=False))
    parsed.validate()
    return parsed.to_dict()


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, ENV, ...
    arguments: str


def instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    """Every instruction of a Dockerfile in order, continuation lines joined and comments dropped."""
    found: list[Instruction] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending = f"{pending} {stripped}" if pending else stripped
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        keyword, _, arguments = pending.partition(" ")
        found.append(Instruction(keyword.upper(), arguments.strip()))
        pending = ""
    return found


def final_stage(path: Path = DOCKERFILE) -> list[Instruction]:
    """The instructions of the last stage (from its FROM on): what the shipped image is made of."""
    every = instructions(path)
    last_from = max(i for i, instruction in enumerate(every) if instruction.keyword == "FROM")
    return every[last_from:]


def image_environment(path: Path = DOCKERFILE) -> dict[str, str]:
    """The ``ENV`` of the final stage (``KEY=VALUE`` pairs, shell-quoted values unquoted)."""
    env: dict[str, str] = {}
    for instruction in final_stage(path):
        if instruction.keyword == "ENV":
            for pair in shlex.split(instruction.arguments):
                key, sep, value = pair.partition("=")
                if not sep:
                    raise ValueError(f"ENV {instruction.arguments!r}: use the KEY=VALUE form")
                env[key] = value
    return env
