"""The secret guard: what it finds, what it leaves alone, and how it redacts.

Secrets are assembled at run time (``fake``, a seeded generator) so this file holds no literal that a secret
scanner, ours or a code host's, would flag."""

from __future__ import annotations

import base64
import itertools
import json
import random
import string
import uuid

import pytest

from engram.domain.keys import issue_key
from engram.domain.secrets import SECRET_KINDS, SecretFinding, find_secrets, redact, refusal_message

_RNG = random.Random(20261129)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
UPPER_ALNUM = string.ascii_uppercase + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    """``n`` seeded random characters, ending in a letter and a digit so every "looks random" rule holds."""
    return "".join(_RNG.choice(alphabet) for _ in range(n - 2)) + "q7"


def fake(*parts: str) -> str:
    return "".join(parts)


def b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def pem(label: str, lines: int = 3, end: bool = True) -> str:
    body = "\n".join(rand(64, ALNUM + "+/") for _ in range(lines))
    block = fake("-----BEGIN ", label, "-----\n", body)
    return block + fake("\n-----END ", label, "-----") if end else block


AWS = fake("AK", "IA", rand(16, UPPER_ALNUM).upper())
AWS_TEMP = fake("AS", "IA", rand(16, UPPER_ALNUM).upper())
GITHUB_CLASSIC = fake("gh", "p_", rand(36))
GITHUB_OAUTH = fake("gh", "o_", rand(36))
GITHUB_APP = fake("gh", "s_", rand(36))
GITHUB_FINE = fake("github", "_pat_", rand(22), "_", rand(59))
OPENAI_LEGACY = fake("sk", "-", rand(48))
OPENAI_PROJECT = fake("sk", "-proj-", rand(120, URLSAFE))
ANTHROPIC = fake("sk", "-ant-api03-", rand(93, URLSAFE))
SLACK_BOT = fake("xo", "xb-", rand(12, string.digits), "-", rand(13, string.digits), "-", rand(24))
SLACK_USER = fake("xo", "xp-", rand(12, string.digits), "-", rand(12, string.digits), "-", rand(32))
JWT = f"{b64url({'alg': 'HS256', 'typ': 'JWT'})}.{b64url({'sub': 'alice', 'iat': 1764374400})}.{rand(43, URLSAFE)}"
ENGRAM = issue_key().key
RSA_KEY = pem("RSA PRIVATE KEY")
PKCS8_KEY = pem("PRIVATE KEY")
OPENSSH_KEY = pem("OPENSSH PRIVATE KEY")
PGP_KEY = pem("PGP PRIVATE KEY BLOCK")
TRUNCATED_KEY = pem("EC PRIVATE KEY", end=False)
BEARER = rand(32, URLSAFE + ".~+/")
HEX40 = rand(40, "0123456789abcdef")
ASSIGNED = rand(24)

# (text, kinds found in order, the secret text that must not survive redaction)
FOUND: list[tuple[str, list[str], str]] = [
    (f"the aws key {AWS} was in the notes", ["aws_access_key"], AWS),
    (f"export AWS_ACCESS_KEY_ID={AWS_TEMP}", ["aws_access_key"], AWS_TEMP),
    (f'aws_access_key_id: "{AWS}"', ["aws_access_key"], AWS),
    (RSA_KEY, ["private_key"], RSA_KEY),
    (f"here is the key:\n{PKCS8_KEY}\nkeep it safe", ["private_key"], PKCS8_KEY),
    (f"deploy key\n{OPENSSH_KEY}", ["private_key"], OPENSSH_KEY),
    (PGP_KEY, ["private_key"], PGP_KEY),
    (f"pasted half a key: {TRUNCATED_KEY}\n\nsorry, the rest got cut", ["private_key"], TRUNCATED_KEY),
    (f"Authorization: Bearer {BEARER}", ["bearer_token"], BEARER),
    (f"curl -H 'authorization: bearer {HEX40}' https://api.example.com/v1", ["bearer_token"], HEX40),
    (f"BEARER {BEARER} works for the staging api", ["bearer_token"], BEARER),
    (f"Authorization: Bearer {JWT}", ["jwt"], JWT),
    (f"the session cookie was {JWT}.", ["jwt"], JWT),
    ("postgres://app:S3cr3t-pw@db.internal:5432/prod", ["connection_string_password"], "S3cr3t-pw"),
    ("DATABASE_URL=postgresql://engram:hunter2@127.0.0.1/engram", ["connection_string_password"], "hunter2"),
    ("mongodb+srv://svc:Zq8%40xYw@cluster0.example.net/app", ["connection_string_password"], "Zq8%40xYw"),
    ("redis://:r3disPass@cache:6379/0", ["connection_string_password"], "r3disPass"),
    ("amqp://guest:guest-2024@rabbit:5672//", ["connection_string_password"], "guest-2024"),
    (f"token={GITHUB_CLASSIC}", ["github_token"], GITHUB_CLASSIC),
    (f"oauth token {GITHUB_OAUTH} expires soon", ["github_token"], GITHUB_OAUTH),
    (f"app installation token: {GITHUB_APP}", ["github_token"], GITHUB_APP),
    (f"GITHUB_TOKEN={GITHUB_FINE}", ["github_token"], GITHUB_FINE),
    (f"OPENAI_API_KEY={OPENAI_LEGACY}", ["openai_api_key"], OPENAI_LEGACY),
    (f"use {OPENAI_PROJECT} for the eval run", ["openai_api_key"], OPENAI_PROJECT),
    (f'client = Anthropic(api_key="{ANTHROPIC}")', ["anthropic_api_key"], ANTHROPIC),
    (f"slack bot token {SLACK_BOT}", ["slack_token"], SLACK_BOT),
    (f"SLACK_USER_TOKEN='{SLACK_USER}'", ["slack_token"], SLACK_USER),
    (f'api_key = "{ASSIGNED}"', ["generic_api_key"], ASSIGNED),
    (f"API_KEY={ASSIGNED}", ["generic_api_key"], ASSIGNED),
    (f'{{"user": "svc", "password": "{ASSIGNED}"}}', ["generic_api_key"], ASSIGNED),
    ("password: Summer2024!", ["generic_api_key"], "Summer2024!"),
    ("the wifi password=Tr0ub4dor&3 (don't share)", ["generic_api_key"], "Tr0ub4dor&3"),
    (f"client_secret: {ASSIGNED}", ["generic_api_key"], ASSIGNED),
    (f"aws_secret_access_key = {ASSIGNED}", ["generic_api_key"], ASSIGNED),
    (f"https://hooks.example.com/cb?token={ASSIGNED}&page=2", ["generic_api_key"], ASSIGNED),
    (f"'SECRET_KEY' => '{ASSIGNED}',", ["generic_api_key"], ASSIGNED),
    ("Server=db;Password=Pa55word!x;Database=shop", ["generic_api_key"], "Pa55word!x"),
    ("passwd := 9f8e7d6c5b", ["generic_api_key"], "9f8e7d6c5b"),
    (f"my key is {ENGRAM}", ["engram_api_key"], ENGRAM),
    (f"authorization: Bearer {ENGRAM}", ["engram_api_key"], ENGRAM),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", ["basic_auth"], "dXNlcjpwYXNzd29yZA=="),
    (f"{AWS} and then {GITHUB_CLASSIC}", ["aws_access_key", "github_token"], AWS),
    (f"{RSA_KEY}\nand the db: postgres://u:Pw0rd-x@h/db", ["private_key", "connection_string_password"], "Pw0rd-x"),
]

INNOCENT: list[str] = [
    "my password policy requires 12 characters",
    "the token bucket refills every second",
    f"item {uuid.uuid4()} was superseded by {uuid.uuid4()}",
    "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "Bearer of bad news: the release slips a week",
    "bearer tokens are sent in the Authorization header",
    "Bearer authentication-required errors come from the gateway",
    "use Authorization: Bearer $ENGRAM_KEY in curl",
    "postgres://localhost/db",
    "postgres://engram@localhost:5432/engram",
    "postgres://user:password@host/db is the documented shape",
    "connect with postgres://app:${DB_PASSWORD}@db/prod",
    "checksum sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 matches",
    "see https://example.com:8443/docs?page=2#auth and http://[::1]:8080/health",
    "Password: requirements are listed in the wiki",
    "Token: the unit a tokenizer emits",
    'api_key = "<your-api-key>"',
    'password = "********"',
    "API_KEY=${OPENAI_API_KEY}",
    'token = os.environ["GITHUB_TOKEN"]',
    "secret_key = settings.SECRET_KEY",
    "password = get_password()",
    "api_key=YOUR_API_KEY_HERE",
    "secret: xxxxxxxxxxxx",
    "pwd: /home/alice/projects",
    "max_tokens = 4096",
    "tokenizer = sentencepiece",
    "sk-learn is a common misspelling of scikit-learn",
    "the placeholder sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxx is in the docs",
    "AKIA is the prefix of long-term AWS access keys",
    "eyJ is how base64 of a JSON object starts",
    "alice@example.com owns the runbook",
    "git@github.com:engram/engram.git",
    "password=[REDACTED:generic_api_key]",
    "",
]


@pytest.mark.parametrize(("text", "kinds", "secret"), FOUND)
def test_finds_each_kind(text: str, kinds: list[str], secret: str) -> None:
    assert [finding.kind for finding in find_secrets(text)] == kinds


@pytest.mark.parametrize("text", INNOCENT)
def test_leaves_ordinary_text_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(("text", "kinds", "secret"), FOUND)
def test_findings_are_sorted_and_do_not_overlap(text: str, kinds: list[str], secret: str) -> None:
    findings = find_secrets(text)
    assert all(0 <= f.start < f.end <= len(text) for f in findings)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


@pytest.mark.parametrize(("text", "kinds", "secret"), FOUND)
def test_redaction_removes_the_secret_and_keeps_the_rest(text: str, kinds: list[str], secret: str) -> None:
    findings = find_secrets(text)
    redacted = redact(text, findings)
    assert secret not in redacted
    assert redacted.startswith(text[: findings[0].start])
    assert redacted.endswith(text[findings[-1].end :])
    for kind in kinds:
        assert f"[REDACTED:{kind}]" in redacted
    assert find_secrets(redacted) == []  # redacted text passes the guard


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://user:S3cr3t-pw@host/db", "postgres://user:[REDACTED:connection_string_password]@host/db"),
        (f"Authorization: Bearer {BEARER}\nAccept: */*", "Authorization: Bearer [REDACTED:bearer_token]\nAccept: */*"),
        (f'api_key = "{ASSIGNED}" # rotate monthly', 'api_key = "[REDACTED:generic_api_key]" # rotate monthly'),
        (f"first {AWS}, then {GITHUB_CLASSIC}.", "first [REDACTED:aws_access_key], then [REDACTED:github_token]."),
        (f"before\n{RSA_KEY}\nafter", "before\n[REDACTED:private_key]\nafter"),
        ("password: Summer2024!.", "password: [REDACTED:generic_api_key]."),
    ],
)
def test_redaction_is_exact(text: str, expected: str) -> None:
    assert redact(text, find_secrets(text)) == expected


def test_redact_without_findings_returns_the_text() -> None:
    assert redact("nothing to see", []) == "nothing to see"


def test_redact_accepts_findings_in_any_order_and_overlapping() -> None:
    text = "0123456789abcdef"
    findings = [
        SecretFinding("b", 8, 12),
        SecretFinding("a", 2, 6),
        SecretFinding("c", 10, 14),
        SecretFinding("d", 3, 5),
    ]
    assert redact(text, findings) == "01[REDACTED:a]67[REDACTED:b][REDACTED:c]ef"


def test_refusal_names_the_kinds_once_and_never_the_secret() -> None:
    text = f"{RSA_KEY}\nAuthorization: Bearer {BEARER}\nand again Bearer {BEARER}"
    findings = find_secrets(text)
    message = refusal_message(findings)
    assert message == (
        "content holds a secret (private_key, bearer_token); remove it, or ask an admin to enable redaction"
    )
    assert BEARER not in message and "BEGIN" not in message
    with pytest.raises(ValueError):
        refusal_message([])


def test_the_kinds_are_stable() -> None:
    assert set(SECRET_KINDS) == {
        "private_key",
        "engram_api_key",
        "aws_access_key",
        "github_token",
        "anthropic_api_key",
        "openai_api_key",
        "slack_token",
        "jwt",
        "connection_string_password",
        "bearer_token",
        "basic_auth",
        "generic_api_key",
    }


@pytest.mark.parametrize(
    "text",
    [
        "password=" * 20_000,
        "-----BEGIN PRIVATE KEY-----" * 5_000,
        "a://b:" * 20_000,
        "Bearer " * 20_000,
        "eyJ" + "a" * 100_000 + ".",
        "x" * 200_000,
        "token_" * 30_000 + "=",
    ],
)
def test_pathological_input_is_scanned_in_linear_time(text: str) -> None:
    find_secrets(text)  # would hang here on catastrophic backtracking
