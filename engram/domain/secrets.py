"""The secret guard: find credentials in memory content before anything is stored, redact them, or explain
the refusal without repeating them.

Each detector is a precise pattern for one kind of credential. A finding's span is the secret itself and
nothing around it, so a redaction keeps the context readable (``Authorization: Bearer [REDACTED:…]``,
``postgres://app:[REDACTED:…]@db/prod``, ``api_key = "[REDACTED:…]"``). Kinds are stable names: they
appear in refusals, in ``[REDACTED:<kind>]`` and in metrics.

=============================  =====================================================================
kind                           what is found (the span)
=============================  =====================================================================
``private_key``                ``-----BEGIN … PRIVATE KEY-----`` (PEM, OpenSSH, PGP ``… KEY BLOCK``)
                               through its END line; a truncated key up to the next blank line
``engram_api_key``             our own keys, ``eng_<16 hex>_<43 base64url>``
``aws_access_key``             ``AKIA``/``ASIA`` + 16 upper-case letters or digits
``github_token``               ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + ≥36 alphanumerics;
                               ``github_pat_`` + ≥22
``anthropic_api_key``          ``sk-ant-`` + ≥20 of ``[A-Za-z0-9_-]``
``openai_api_key``             ``sk-`` (or ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``) + ≥20 of
                               ``[A-Za-z0-9_-]`` holding both a letter and a digit
``slack_token``                ``xoxb-``/``xoxa-``/``xoxp-``/``xoxr-``/``xoxs-`` + ≥10, with a digit
``jwt``                        three base64url segments of ≥10, the first starting ``eyJ`` (``{"``)
``bearer_token``               the token after ``Bearer`` (any case): ≥16 of ``[A-Za-z0-9._~+/-]`` that
                               looks random (a digit, or both upper and lower case)
``basic_auth``                 the credentials after ``Authorization: Basic``
``connection_string_password`` ``scheme://user:<password>@host``: the password only
``generic_api_key``            the value of an assignment ``<name> = value`` / ``<name>: value``
                               (also ``"name": "value"``, ``:=``, ``=>``), see below
=============================  =====================================================================

Assignments (``generic_api_key``). The name is any identifier ending in ``api_key``/``apikey``/``api-key``,
``secret``, ``token``, ``password``, ``passwd``, ``pwd`` or ``passphrase``, optionally followed by ``key``/
``_access_key`` (``DB_PASSWORD``, ``client_secret``, ``aws_secret_access_key``, ``auth_token``); ``max_tokens``
and ``tokenizer`` are not names of secrets. The value needs at least 8 characters and no whitespace. An
unquoted value ends at whitespace, a quote, or a ``,``/``;``/``&`` followed by whitespace, the end or the
next ``name=`` (``?token=…&page=2``, ``Password=…;Host=db``); trailing ``.``, ``)``, ``]``, ``}`` are
punctuation, not part of it. A quoted value is taken as a literal. An unquoted value must also look like a
secret rather than a word or a reference, so prose such as ``Password: requirements are in the wiki``
passes: it is not a secret when it is a single-case or title-case word, a ``snake_case``/``UPPER_CASE``
identifier, a dotted reference (``settings.SECRET_KEY``), a call or subscript (``os.environ["TOKEN"]``) or a
path (``pwd: /home/alice``).

Placeholders are never secrets, in assignments, connection strings and bearer tokens: ``<…>``, ``${…}``,
``{{…}}``, ``$UPPER_CASE`` variables, ``%(…)``, runs of ``*``/``x``/``.``/``#``/``-``/``_``, values naming
themselves (``password``, ``secret``, ``changeme``, ``placeholder``, ``redacted``, ``example``, …), values
holding ``your_``/``your-``, ``xxxx``, ``****`` or ``...``, and our own ``[REDACTED:…]`` markers, so
redacted text scans clean.

Overlaps: when several detectors claim overlapping text the longest span wins, then the more specific kind
(the order of the table above), so ``token = "ghp_…"`` is a ``github_token`` and ``Bearer eyJ…`` a ``jwt``.

Deliberately not flagged: UUIDs, commit SHAs and hex digests (no credential prefix, no assignment to a
secret name), ``Bearer of bad news`` (the word after Bearer is short), URLs without a password, unquoted
passphrases that are plain words, and passwords shorter than 8 characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

MIN_ASSIGNED_SECRET = 8


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    start: int
    end: int


Span = tuple[int, int]


@dataclass(frozen=True)
class _Detector:
    kind: str
    pattern: re.Pattern[str]
    span: Callable[[re.Match[str]], Span | None]


# --- what a value must (not) look like -----------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "changeme",
        "change_me",
        "change-me",
        "placeholder",
        "redacted",
        "example",
        "dummy",
        "required",
        "optional",
        "undefined",
        "null",
        "none",
        "notset",
        "not_set",
        "unset",
    }
)
_PLACEHOLDER_HINTS = (
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "your_",
    "your-",
    "xxxx",
    "****",
    "...",
)
_PLACEHOLDER_SHAPES = re.compile(
    r"""<.*>            # <your-api-key>
      | \$\{.*          # ${API_KEY}
      | \{\{.*          # {{ secrets.token }}
      | \$[A-Z_][A-Z0-9_]*   # $API_KEY
      | %\(.*           # %(password)s
      | [*xX.\#_-]+     # ********, xxxxxxxx
    """,
    re.VERBOSE,
)
_REFERENCE = re.compile(
    r"""[A-Za-z_][\w.]*[(\[].*          # a call or subscript: getenv("X"), os.environ["X"]
      | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+  # a dotted name: settings.SECRET_KEY
      | [a-z]+(?:_[a-z]+)+ | [A-Z]+(?:_[A-Z]+)+  # an identifier: my_api_key, MY_API_KEY
      | (?:/|~/|\./|\.\./).*            # a path
    """,
    re.VERBOSE,
)


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        lowered in _PLACEHOLDER_WORDS
        or any(hint in lowered for hint in _PLACEHOLDER_HINTS)
        or _PLACEHOLDER_SHAPES.fullmatch(value) is not None
    )


def _is_plain_word(value: str) -> bool:
    return value.isalpha() and (value.islower() or value.isupper() or value.istitle())


def _looks_random(token: str) -> bool:
    """A digit, or both cases: what 16+ random characters nearly always have and an English word has not."""
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    return any(c.isdigit() for c in token) or (has_upper and has_lower)


# --- spans ---------------------------------------------------------------------------------------------------


def _whole(match: re.Match[str]) -> Span:
    return match.span()


def _whole_if(check: Callable[[str], bool]) -> Callable[[re.Match[str]], Span | None]:
    def span(match: re.Match[str]) -> Span | None:
        return match.span() if check(match.group()) else None

    return span


def _group_unless_placeholder(match: re.Match[str]) -> Span | None:
    return None if _is_placeholder(match.group("secret")) else match.span("secret")


def _bearer_span(match: re.Match[str]) -> Span | None:
    token = match.group("secret").rstrip(".")
    if len(token) < 16 or not _looks_random(token) or _is_placeholder(token):
        return None
    start = match.start("secret")
    return start, start + len(token)


def _assignment_span(match: re.Match[str]) -> Span | None:
    if match.group("quoted") is not None:
        value, start = match.group("quoted"), match.start("quoted")
        return None if _is_placeholder(value) else (start, start + len(value))
    value, start = match.group("bare").rstrip(".)]}"), match.start("bare")
    if (
        len(value) < MIN_ASSIGNED_SECRET
        or _is_placeholder(value)
        or _is_plain_word(value)
        or _REFERENCE.fullmatch(value)
    ):
        return None
    return start, start + len(value)


def _body_has_letter_and_digit(token: str) -> bool:
    body = token.split("-", 1)[1]
    return any(c.isalpha() for c in body) and any(c.isdigit() for c in body)


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


# --- the detectors, most specific first ----------------------------------------------------------------------

_NOT_AFTER = r"(?<![A-Za-z0-9_-])"
_NOT_BEFORE = r"(?![A-Za-z0-9_-])"

_DETECTORS: tuple[_Detector, ...] = (
    _Detector(
        "private_key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*?(?=\n[ \t]*\r?\n|\Z))"
        ),
        _whole,
    ),
    _Detector(
        "engram_api_key", re.compile(rf"{_NOT_AFTER}eng_[0-9a-f]{{16}}_[A-Za-z0-9_-]{{43}}{_NOT_BEFORE}"), _whole
    ),
    _Detector("aws_access_key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), _whole),
    _Detector(
        "github_token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])"),
        _whole,
    ),
    _Detector("anthropic_api_key", re.compile(rf"{_NOT_AFTER}sk-ant-[A-Za-z0-9_-]{{20,}}"), _whole),
    _Detector(
        "openai_api_key",
        re.compile(rf"{_NOT_AFTER}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}}"),
        _whole_if(_body_has_letter_and_digit),
    ),
    _Detector("slack_token", re.compile(rf"{_NOT_AFTER}xox[baprs]-[A-Za-z0-9-]{{10,}}"), _whole_if(_has_digit)),
    _Detector(
        "jwt",
        re.compile(rf"{_NOT_AFTER}eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}{_NOT_BEFORE}"),
        _whole,
    ),
    _Detector(
        "connection_string_password",
        re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s/@]+)@[^\s/@]+"),
        _group_unless_placeholder,
    ),
    _Detector("bearer_token", re.compile(r"\b(?i:bearer)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]+=*)"), _bearer_span),
    _Detector(
        "basic_auth",
        re.compile(r"\b(?i:authorization)[ \t]*:[ \t]*(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"),
        _group_unless_placeholder,
    ),
    _Detector(
        "generic_api_key",
        re.compile(
            r"""(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?
            (?:api[_-]?key|secret|token|password|passwd|pwd|passphrase)(?:[_-]?(?:access[_-]?)?key)?
            ['"]?[ \t]*(?::=|=>|[:=])[ \t]*
            (?:(?P<quote>['"`])(?P<quoted>[^'"`\s]{8,})(?P=quote)
              |(?P<bare>(?:[^\s'"`,;&]|[,;&](?!\s|\Z|[A-Za-z_][\w.-]*=))+))""",
            re.IGNORECASE | re.VERBOSE,
        ),
        _assignment_span,
    ),
)
_PRIORITY = {detector.kind: rank for rank, detector in enumerate(_DETECTORS)}
SECRET_KINDS: tuple[str, ...] = tuple(detector.kind for detector in _DETECTORS)


def _candidates(text: str) -> Iterator[SecretFinding]:
    for detector in _DETECTORS:
        for match in detector.pattern.finditer(text):
            span = detector.span(match)
            if span is not None and span[1] > span[0]:
                yield SecretFinding(detector.kind, *span)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in ``text``: non-overlapping, sorted by start. Longest span first, then the most specific
    kind, claims overlapping text."""
    chosen: list[SecretFinding] = []
    ranked = sorted(_candidates(text), key=lambda f: (f.start - f.end, _PRIORITY[f.kind], f.start))
    for finding in ranked:
        if all(finding.end <= other.start or other.end <= finding.start for other in chosen):
            chosen.append(finding)
    return sorted(chosen, key=lambda f: f.start)


def redact(text: str, findings: Sequence[SecretFinding]) -> str:
    """``text`` with each finding's span replaced by ``[REDACTED:<kind>]``; the text around it is kept as is.
    Findings may come in any order; a span already covered by an earlier one is not redacted twice."""
    parts: list[str] = []
    cursor = 0
    for finding in sorted(findings, key=lambda f: (f.start, f.end)):
        if finding.end <= cursor:
            continue
        parts.append(text[cursor : max(finding.start, cursor)])
        parts.append(f"[REDACTED:{finding.kind}]")
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def refusal_message(findings: Sequence[SecretFinding]) -> str:
    """Why content was refused: names the kinds found (each once, in order of appearance), never the secret."""
    if not findings:
        raise ValueError("refusal_message needs at least one finding")
    kinds = list(dict.fromkeys(f.kind for f in sorted(findings, key=lambda f: f.start)))
    return f"content holds a secret ({', '.join(kinds)}); remove it, or ask an admin to enable redaction"
