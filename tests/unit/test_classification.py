"""The rule-based classifier: kind, retention, sensitivity, placement, and the helpers around them."""

from __future__ import annotations

import math

import pytest

from engram.domain.classification import (
    DEFAULT_KIND_CONFIDENCE,
    MAX_CONFIDENCE,
    PlacementRule,
    clamp_confidence,
    classify,
    is_chatter,
    narrow_visibility,
    parse_placement_rules,
)
from engram.errors import ValidationFailed

KIND_EXAMPLES: list[tuple[str, str]] = [
    ("Deploys must never happen on Fridays.", "invariant"),
    ("The ledger must always balance to zero.", "invariant"),
    ("Invariant: every item belongs to exactly one tenant.", "invariant"),
    ("Under no circumstances may an agent activate its own proposal.", "invariant"),
    ("Audit rows must not be updated or deleted.", "invariant"),
    ("We decided to move the outbox relay into the ingest service.", "decision"),
    ("Decision: recall uses hybrid mode by default.", "decision"),
    ("After the review we chose Postgres over MySQL.", "decision"),
    ("The team agreed to freeze the public API until March.", "decision"),
    ("We're going with HNSW for the vector index.", "decision"),
    ("We always write an ADR for decisions that were hard.", "doctrine"),
    ("Our policy is to rotate API keys every 90 days.", "doctrine"),
    ("Principle: the database is the source of truth.", "doctrine"),
    ("As a rule, migrations are not edited once applied.", "doctrine"),
    ("I prefer dark mode in every editor.", "preference"),
    ("Bob prefers dark roast coffee.", "preference"),
    ("I’d rather get one long summary than many pings.", "preference"),  # a curly apostrophe
    ("My favourite shell is fish.", "preference"),
    ("Please always use metric units in reports.", "preference"),
    ("Step 1: clone the repo. Step 2: run make test.", "procedure"),
    ("First, drain the node, then upgrade the kubelet.", "procedure"),
    ("To deploy, run make release and tag the commit.", "procedure"),
    ("1. Stop the embedder\n2. Run the backfill\n3. Start it again", "procedure"),
    ("How to rotate a key: revoke it, then issue a new one.", "procedure"),
    ("I noticed the embedder lags behind after midnight.", "observation"),
    ("It seems the cache is cold after every release.", "observation"),
    ("Recall latency looks like it doubled since Tuesday.", "observation"),
    ("We observed 3% packet loss on the east link.", "observation"),
    ("Paris is the capital of France.", "fact"),
    ("The gateway listens on port 8080.", "fact"),
    ("Alice leads the platform team.", "fact"),
]


@pytest.mark.parametrize(("content", "kind"), KIND_EXAMPLES)
def test_kind_from_cues(content: str, kind: str) -> None:
    result = classify(content)
    assert result.kind == kind
    assert result.classifier == "rules"
    if kind == "fact":
        assert result.taxonomy_confidence == DEFAULT_KIND_CONFIDENCE
        assert result.reasons[0] == "no kind cue; default fact"
    else:
        assert result.taxonomy_confidence > DEFAULT_KIND_CONFIDENCE
        assert result.reasons[0].startswith("kind cue '")


def test_at_least_three_examples_per_kind() -> None:
    kinds = [kind for _, kind in KIND_EXAMPLES]
    for kind in ("invariant", "decision", "doctrine", "preference", "procedure", "observation", "fact"):
        assert kinds.count(kind) >= 3, kind


def test_reasons_name_the_cue() -> None:
    assert classify("We decided to ship on Monday.").reasons[0] == "kind cue 'we decided'"
    assert classify("MY FAVORITE editor is vim").reasons[0] == "kind cue 'my favorite'"


def test_a_stronger_cue_wins_and_ambiguity_lowers_confidence() -> None:
    both = classify("We decided that deploys must never happen on Fridays.")
    assert both.kind == "invariant"  # equal strength: invariant precedes decision
    assert both.taxonomy_confidence == pytest.approx(0.75)
    assert "also a decision cue 'we decided'" in both.reasons
    weak_and_strong = classify("Today we decided to use Postgres for the ledger.")
    assert weak_and_strong.kind == "decision"
    assert classify("Today the build was green.").taxonomy_confidence == pytest.approx(0.6)


def test_cues_are_whole_words() -> None:
    assert classify("The tokenizer must nevertheless be fast.").kind == "fact"  # "must nevertheless"
    assert classify("Invariants live in the domain package.").kind == "invariant"
    assert classify("I'd like the report by Friday.").kind == "fact"  # "I'd like" is a request, not "I like"


NOISE = [
    "ok",
    "OK.",
    "Okay!",
    "okkk",
    "done",
    "Done ✅",
    "thanks",
    "Thank you!",
    "thank you very much",
    "thx",
    "ty",
    "lol",
    "LOL!!!",
    "hahaha",
    "sure",
    "Sure.",
    "yes",
    "No.",
    "nope",
    "👍",
    "👍🏽",
    "👍👍",
    "🙏",
    "sounds good",
    "Sounds good, thanks!",
    "got it",
    "Got it 👍",
    "ok thanks",
    "ok, ok",
    "cool cool",
    "+1",
    "will do",
    "...",
    "",
]
REAL_SENTENCES = [
    "ok, the deploy key lives in vault",
    "thanks to the new index, recall takes 40 ms",
    "done: the migration to pgvector 0.8 finished",
    "yes, the staging database is on port 5433",
    "No, the embedder runs on CPU only",
    "sure enough, the disk was full",
    "got it working by pinning numpy below 2",
    "lol the cron job deletes its own logs",
    "sounds good to the security team as long as keys rotate",
    "thank you notes go to the #kudos channel",
    "👍 means approved in the release channel",
]


@pytest.mark.parametrize("content", NOISE)
def test_a_whole_message_of_chatter_is_noise(content: str) -> None:
    result = classify(content)
    assert is_chatter(content)
    assert result.retention == "noise"
    assert result.retention_confidence == pytest.approx(0.9)
    assert "retention: the whole message is chatter" in result.reasons


@pytest.mark.parametrize("content", REAL_SENTENCES)
def test_the_same_words_inside_a_sentence_are_kept(content: str) -> None:
    assert not is_chatter(content)
    assert classify(content).retention == "retain"


@pytest.mark.parametrize(
    ("content", "cue"),
    [
        ("brb", "brb"),
        ("I'm going to lunch", "off to lunch"),
        ("running the tests now", "doing something now"),
        ("We're deploying the hotfix right now.", "doing something now"),
        ("in a meeting, back in 20", "back in …"),
        ("afk", "afk"),
        ("heading out for the day", "heading out"),
        ("currently debugging the flaky test", "currently …ing"),
        ("give me a minute", "give me a minute"),
        ("Stepping away from the keyboard", "stepping out"),
        ("on a call with the vendor", "in a meeting"),
    ],
)
def test_transient(content: str, cue: str) -> None:
    result = classify(content)
    assert result.retention == "transient"
    assert f"transient cue '{cue}'" in result.reasons


@pytest.mark.parametrize(
    "content",
    [
        "Testing is now mandatory for every pull request.",
        "The meeting notes are in the wiki.",
        "Lunch is served at noon on Fridays.",
        "Running migrations twice is safe.",
    ],
)
def test_not_transient(content: str) -> None:
    assert classify(content).retention == "retain"


@pytest.mark.parametrize(
    ("content", "hedge"),
    [
        ("maybe the cache is stale", "maybe"),
        ("I think the embedder leaks memory", "I think"),
        ("Not sure the backup ran last night", "not sure"),
        ("possibly a DNS issue", "possibly"),
        ("the queue might be full", "might"),
        ("Perhaps Alice owns the runbook", "perhaps"),
        ("It's probably the firewall", "probably"),
        ("I guess we could shard by tenant", "I guess"),
    ],
)
def test_hedged_content_is_uncertain(content: str, hedge: str) -> None:
    result = classify(content)
    assert result.retention == "uncertain"
    assert result.retention_confidence == pytest.approx(0.7)
    assert f"hedge '{hedge}'" in result.reasons


def test_a_hedge_keeps_the_kind() -> None:
    result = classify("I think we decided to use Postgres.")
    assert (result.kind, result.retention) == ("decision", "uncertain")


def test_retain_confidence_is_higher_with_a_kind_cue() -> None:
    assert classify("We decided to use Postgres.").retention_confidence == pytest.approx(0.7)
    assert classify("Postgres holds the ledger.").retention_confidence == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("content", "sensitivity", "why"),
    [
        ("Reach Alice at alice.smith@example.com", "personal", "e-mail address"),
        ("Bob's phone is +44 20 7946 0958", "personal", "phone number"),
        ("call me on (415) 555-2671 after six", "personal", "phone number"),
        ("mobile: 0171 496 0000", "personal", "phone number"),
        ("She lives at 221 Baker Street, London", "personal", "street address"),
        ("Send it to my home address please", "personal", "home address"),
        ("Carol was diagnosed with diabetes last year", "personal", "health"),
        ("Alice is allergic to peanuts, so team lunches are nut-free.", "personal", "health"),
        ("Dan's salary is 95k before the bonus", "personal", "salary"),
        ("Her date of birth is 1990-04-01", "personal", "date of birth"),
        ("SSN 078-05-1120", "personal", "national id"),
        ('api_key = "Zt8pQ2vX9mL4kR7wN3bY"', "secret", "generic_api_key"),
        ("postgres://app:S3cr3t-pw@db/prod", "secret", "connection_string_password"),
    ],
)
def test_sensitive_content_suggests_private(content: str, sensitivity: str, why: str) -> None:
    result = classify(content)
    assert result.sensitivity == sensitivity
    assert result.suggested_visibility == "private"
    assert any(why in reason for reason in result.reasons if reason.startswith("sensitivity:"))


@pytest.mark.parametrize(
    "content",
    [
        "git@github.com:engram/engram.git is the remote",
        "version 1.2.3 is deployed on 10.0.0.1:8080",
        "released on 2024-01-15 at 14:30",
        "the token bucket refills every second",
        "item 123e4567-e89b-12d3-a456-426614174000 was merged",
        "Our phone rota is in the wiki",
        "Raise an exception when the budget is exceeded",
        "my password policy requires 12 characters",
        "3 Way handshakes are fine",
    ],
)
def test_ordinary_content_is_normal(content: str) -> None:
    result = classify(content)
    assert result.sensitivity == "normal"
    assert result.suggested_visibility is None


RULES = [
    PlacementRule("infra", "deploys", ("deploy", "kubernetes")),
    PlacementRule("infra", None, ("database",)),
    PlacementRule("people", "alice", ("alice",)),
    PlacementRule("payments", "cards", ("credit card",)),
]


@pytest.mark.parametrize(
    ("content", "wing", "room"),
    [
        ("The deploy runs at noon.", "infra", "deploys"),
        ("KUBERNETES upgrades happen monthly.", "infra", "deploys"),
        ("Alice owns the database.", "infra", None),  # the first matching rule wins, not the first phrase in the text
        ("Alice likes tea.", "people", "alice"),
        ("Never log a credit\n  card number.", "payments", "cards"),
        ("Redeploying is idempotent.", None, None),  # whole words only
        ("Alicetown has a data centre.", None, None),
        ("Nothing matches here.", None, None),
    ],
)
def test_placement_first_rule_wins(content: str, wing: str | None, room: str | None) -> None:
    result = classify(content, RULES)
    assert (result.wing, result.room) == (wing, room)
    if wing is not None:
        assert any(reason.startswith("placement rule ") for reason in result.reasons)


def test_no_rules_no_placement() -> None:
    result = classify("The deploy runs at noon.")
    assert (result.wing, result.room) == (None, None)


def test_placement_reason_names_the_rule_and_phrase() -> None:
    assert classify("Alice owns the database.", RULES).reasons[-1] == "placement rule 1 (infra) matched 'database'"


def test_parse_placement_rules_accepts_and_trims() -> None:
    assert parse_placement_rules(None) == []
    assert parse_placement_rules([]) == []
    rules = parse_placement_rules(
        [
            {"wing": " infra ", "room": "deploys", "any_of": ["deploy", " kubernetes ", "deploy", "credit   card"]},
            {"wing": "people", "any_of": ["alice"]},
            {"wing": "ops", "room": None, "any_of": ["pager"]},
        ]
    )
    assert rules == [
        PlacementRule("infra", "deploys", ("deploy", "kubernetes", "credit card")),
        PlacementRule("people", None, ("alice",)),
        PlacementRule("ops", None, ("pager",)),
    ]


GOOD = {"wing": "infra", "any_of": ["deploy"]}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("infra", "placement_rules must be a list"),
        ({"wing": "infra"}, "placement_rules must be a list"),
        ([GOOD] * 201, "at most 200 placement rules"),
        ([42], "placement_rules[0]: must be an object"),
        ([GOOD, "infra"], "placement_rules[1]: must be an object"),
        ([{"room": "x", "any_of": ["a"]}], "placement_rules[0]: wing is required"),
        ([{"wing": "", "any_of": ["a"]}], "placement_rules[0]: wing must be a string"),
        ([{"wing": "   ", "any_of": ["a"]}], "placement_rules[0]: wing must be a string"),
        ([{"wing": 3, "any_of": ["a"]}], "placement_rules[0]: wing must be a string"),
        ([{"wing": "w" * 201, "any_of": ["a"]}], "placement_rules[0]: wing must be a string of 1–200"),
        ([{"wing": "w", "room": "", "any_of": ["a"]}], "placement_rules[0]: room must be a string"),
        ([{"wing": "w", "room": ["x"], "any_of": ["a"]}], "placement_rules[0]: room must be a string"),
        ([GOOD, {"wing": "w"}], "placement_rules[1]: any_of must be a non-empty list"),
        ([{"wing": "w", "any_of": []}], "placement_rules[0]: any_of must be a non-empty list"),
        ([{"wing": "w", "any_of": "deploy"}], "placement_rules[0]: any_of must be a non-empty list"),
        ([{"wing": "w", "any_of": ["a"] * 101}], "placement_rules[0]: any_of holds at most 100"),
        ([{"wing": f"w{i}", "any_of": [f"p{i} {n}" for n in range(70)]} for i in range(3)], "at most 200 any_of"),
        ([{"wing": "w", "any_of": ["ok", ""]}], "placement_rules[0]: each any_of phrase"),
        ([{"wing": "w", "any_of": [7]}], "placement_rules[0]: each any_of phrase"),
        ([{"wing": "w", "any_of": ["p" * 201]}], "placement_rules[0]: each any_of phrase"),
        ([GOOD, {"wing": "w", "any_of": ["a"], "rom": "x"}], "placement_rules[1]: unknown keys ['rom']"),
    ],
)
def test_parse_placement_rules_names_the_broken_rule(raw: object, message: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_placement_rules(raw)
    assert caught.value.field == "placement_rules"
    assert message in caught.value.detail


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-1.0, 0.0),
        (0.0, 0.0),
        (0.5, 0.5),
        (0.95, 0.95),
        (0.951, 0.95),
        (1.0, 0.95),
        (7.0, 0.95),
        (math.inf, 0.95),
        (-math.inf, 0.0),
        (math.nan, 0.0),
    ],
)
def test_clamp_confidence(value: float, expected: float) -> None:
    assert clamp_confidence(value) == expected


@pytest.mark.parametrize(
    "content",
    [text for text, _ in KIND_EXAMPLES]
    + NOISE
    + REAL_SENTENCES
    + [
        "We decided: invariant, we always do step 1. I prefer it. I noticed it today. Maybe. brb",
    ],
)
def test_confidences_stay_within_bounds(content: str) -> None:
    result = classify(content)
    assert 0.0 <= result.taxonomy_confidence <= MAX_CONFIDENCE
    assert 0.0 <= result.retention_confidence <= MAX_CONFIDENCE


VISIBILITY_TABLE: list[tuple[str, str | None, str]] = [
    ("private", None, "private"),
    ("private", "private", "private"),
    ("private", "workspace", "private"),
    ("private", "tenant", "private"),
    ("private", "public", "private"),
    ("workspace", None, "workspace"),
    ("workspace", "private", "private"),
    ("workspace", "workspace", "workspace"),
    ("workspace", "tenant", "workspace"),
    ("workspace", "public", "workspace"),
    ("tenant", None, "tenant"),
    ("tenant", "private", "private"),
    ("tenant", "workspace", "workspace"),
    ("tenant", "tenant", "tenant"),
    ("tenant", "public", "tenant"),
    ("public", None, "public"),
    ("public", "private", "private"),
    ("public", "workspace", "workspace"),
    ("public", "tenant", "tenant"),
    ("public", "public", "public"),
]
ORDER = ("private", "workspace", "tenant", "public")


@pytest.mark.parametrize(("current", "suggested", "expected"), VISIBILITY_TABLE)
def test_narrow_visibility_never_widens(current: str, suggested: str | None, expected: str) -> None:
    result = narrow_visibility(current, suggested)
    assert result == expected
    assert ORDER.index(result) <= ORDER.index(current)


def test_visibility_table_is_exhaustive() -> None:
    assert {(c, s) for c, s, _ in VISIBILITY_TABLE} == {(c, s) for c in ORDER for s in (None, *ORDER)}


def test_narrow_visibility_refuses_unknown_values() -> None:
    with pytest.raises(ValidationFailed) as caught:
        narrow_visibility("everyone", None)
    assert caught.value.field == "visibility"
    with pytest.raises(ValidationFailed) as caught:
        narrow_visibility("tenant", "secret")
    assert caught.value.field == "suggested_visibility"


@pytest.mark.parametrize(
    "content",
    [
        "1. step\n" * 20_000,
        "first " * 50_000,
        "to a " * 50_000 + ", run",
        "phone " + "1 " * 50_000,
        "a" * 100_000 + "@",
        "running " * 50_000,
        "ok " * 50_000,
    ],
)
def test_pathological_input_is_classified_in_linear_time(content: str) -> None:
    classify(content, RULES)  # would hang here on catastrophic backtracking


@pytest.mark.parametrize(
    "text",
    [
        "Kiss the cook",
        "KISS THE COOK",
        "\u212aiss the cook",
        "k\u0131ss the cook",
        "ki\u017fs the cook",
        "K\u0130SS the cook",
    ],
)
def test_placement_matches_as_the_case_insensitive_pattern_does(text: str) -> None:
    """Phrases whose words are not in the text are skipped before their pattern runs; the characters outside
    ASCII that match an ASCII letter regardless of case (K as the Kelvin sign, dotless ı, long ſ, dotted İ) still
    place the memory, as the pattern alone would."""
    rules = parse_placement_rules([{"wing": "other", "any_of": ["kisses"]}, {"wing": "food", "any_of": ["kiss"]}])
    assert classify(text, rules).wing == "food"
    assert classify(text.split()[0] + "es the cook", rules).wing == "other"
    assert classify("a kiosk, a skiss, kissing", rules).wing is None  # whole words only
