"""possible_supersedes through ingest's cache of trigram sketches (services/ingest/supersedes.py) against the
real database: the Python trigrams are pg_trgm's, the answer is ``similar_live``'s, and what the cache holds
never decides liveness, visibility, tenant or kind."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from engram.config import Settings
from engram.db import items
from engram.db.pool import tenant_tx
from engram.domain import trigrams
from engram.domain.models import CallerContext
from services.ingest.service import IngestService, RememberCommand
from services.ingest.supersedes import PossibleSupersedes
from tests.support.tenants import create_tenant

LONG_A = "Runbook for the payments cluster failover, revision 7. " * 25 + "tail alpha " * 50
LONG_B = "Runbook for the payments cluster failover, revision 8. " * 25 + "tail omega " * 50
PAIRS = [
    ("The staging database runs on port 6543.", "The staging database now runs on port 6544."),
    ("The staging database runs on port 6543.", "the STAGING database RUNS on PORT 6543!!!"),
    ("Alice prefers green tea in the morning.", "Alice likes green tea, mornings."),
    ("Deploys take ten minutes.", "Deployments take about 10 minutes."),
    ("Never force-push to main.", "Don't force push to the main branch."),
    ("Lunch is served at noon in the cafeteria.", "Invoices go to accounts payable by the fifth."),
    ("a", "a"),
    ("a b c", "c b a"),
    ("x", "y"),
    ("", "empty on one side"),
    ("...", "!!!"),
    ("foo_bar baz-qux", "foo bar baz qux"),
    ("v1.2.3 released on 2024-05-06", "v1.2.4 released on 2024-05-07"),
    ("IPv4 10.0.0.1/24 gateway 10.0.0.254", "IPv4 10.0.0.2/24 gateway 10.0.0.254"),
    ("Café déjà vu, naïve façade.", "Cafe deja vu, naive facade."),
    ("Ünïcödé wörds everywhere", "Unicode words everywhere"),
    ("Zoë and Chloë met in Zürich.", "Zoe and Chloe met in Zurich."),
    ("Straße und STRASSE", "strasse und strasse"),
    ("Москва — столица России.", "Moscow is the capital of Russia."),
    ("Москва столица", "Москва столица России"),
    ("東京タワーは高い", "東京スカイツリーは高い"),
    ("Meeting at 東京 office at 10am", "Meeting at Tokyo office at 10am"),
    ("Release party 🎉🎉 on Friday", "Release party on Friday"),
    ("emoji😀inside😀words", "emoji inside words"),
    ("KELVIN \u212a and İstanbul", "kelvin k and istanbul"),
    ("x² + y³ = z½", "x2 + y3 = z1/2"),
    ("tab\tseparated\nnew lines\r\nhere", "tab separated new lines here"),
    ("   leading and trailing   ", "leading and trailing"),
    ("repeat repeat repeat repeat", "repeat"),
    ("abc abc abd", "abd abd abc"),
    ("123456789", "123456780"),
    ("The quick brown fox jumps over the lazy dog.", "A quick brown dog jumps over the lazy fox."),
    ("Use Postgres 16 for the new service.", "Use PostgreSQL 16 for the new service."),
    ("The API key rotates every 90 days.", "API keys rotate every ninety days."),
    ("Bob's team owns the billing service.", "Bob's team owns billing."),
    ("don't won't can't", "dont wont cant"),
    ("e-mail E-Mail EMAIL email", "email"),
    ("C++ and C# and F#", "C and C and F"),
    ("https://example.com/a/b?c=d&e=f", "https://example.com/a/b?c=d&e=g"),
    ("path/to/file.py:123", "path/to/file.py:124"),
    ("ALL CAPS SENTENCE HERE", "all caps sentence here"),
    ("MixedCase camelCase PascalCase", "mixedcase camelcase pascalcase"),
    ("Ελληνικά γράμματα", "Greek letters"),
    ("עברית מימין לשמאל", "Hebrew right to left"),
    ("한국어 텍스트 test", "Korean text test"),
    ("a" * 1500, "a" * 999 + "b" * 500),
    (LONG_A, LONG_B),
    (LONG_A, "Runbook for the payments cluster failover"),
    (" ".join(f"word{n}" for n in range(400)), " ".join(f"word{n}" for n in range(10, 410))),
    ("The office plants are watered on Mondays.", "The office plants are watered on Tuesdays."),
]


async def test_python_trigrams_give_pg_trgms_similarity(owner_pool: asyncpg.Pool) -> None:
    """The same values as ``SELECT similarity()`` over each pair's first 1,000 characters; the sketch's
    estimate is never below them."""
    async with owner_pool.acquire() as conn:
        unicode_words = await items.trigram_words_are_unicode(conn)
        assert not unicode_words  # the embedded PostgreSQL's LC_CTYPE is C: only ASCII letters make words
        compared = 0
        for a, b in PAIRS:
            a, b = a[: items.SIMILARITY_PREFIX], b[: items.SIMILARITY_PREFIX]
            expected = await conn.fetchval("SELECT similarity($1, $2)", a, b)
            pg_set = set(await conn.fetchval("SELECT show_trgm($1)", a))
            assert trigrams.trigrams(a) == pg_set, a
            exact = trigrams.similarity(trigrams.trigrams(a), trigrams.trigrams(b))
            assert exact == pytest.approx(expected, abs=1e-6), (a, b)
            assert trigrams.estimate(trigrams.sketch(a), trigrams.sketch(b)) >= exact, (a, b)
            compared += exact > 0
    assert compared > 40  # most pairs share trigrams: the comparison is not of zeros


async def _other_member(owner_pool: asyncpg.Pool, ctx: CallerContext) -> CallerContext:
    """A second principal of ``ctx``'s tenant, a member of its workspace."""
    principal = uuid.uuid4()
    async with owner_pool.acquire() as conn:
        workspace = await conn.fetchval("SELECT id FROM workspaces WHERE tenant_id = $1::uuid", ctx.tenant_id)
        await conn.execute(
            "INSERT INTO principals (tenant_id, id, name, type) VALUES ($1::uuid, $2, 'other', 'user')",
            ctx.tenant_id,
            principal,
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) "
            "VALUES ($1::uuid, $2, $3, 'member')",
            ctx.tenant_id,
            workspace,
            principal,
        )
    return CallerContext(ctx.tenant_id, str(principal), "user", frozenset({"read", "write"}), "req-other")


async def _remember(service: IngestService, ctx: CallerContext, content: str, **fields: str) -> tuple[str, set[str]]:
    result = await service.remember(ctx, RememberCommand(content=content, **fields))  # type: ignore[arg-type]
    assert result.status == "created", result.status
    return str(result.item.id), {s.id for s in result.possible_supersedes}


async def test_a_near_copy_written_after_the_cache_filled_is_found(
    app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    service = IngestService(app_pool, settings)
    for filler in ("Lunch is served at noon.", "Printer toner is in the closet.", "Badges were replaced."):
        await _remember(service, tenant, filler)
    assert len(service._supersedes.cache) >= 3  # the window is held
    original, _ = await _remember(service, tenant, "The staging database runs on port 6543.")
    _, reported = await _remember(service, tenant, "The staging database now runs on port 6544.")
    assert reported == {original}


async def test_items_no_longer_live_or_not_the_callers_are_never_reported(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    service = IngestService(app_pool, settings)
    other = await _other_member(owner_pool, tenant)
    stranger = await create_tenant(owner_pool)
    text = "The staging database runs on port {} for the platform team."
    invalidated, _ = await _remember(service, tenant, text.format(6501))
    superseded, _ = await _remember(service, tenant, text.format(6502))
    rejected, _ = await _remember(service, tenant, text.format(6503))
    private, _ = await _remember(service, other, text.format(6504), visibility="private")
    shared, _ = await _remember(service, other, text.format(6505))  # positive control: the caller may read it
    elsewhere, _ = await _remember(service, stranger, text.format(6506))
    other_kind, _ = await _remember(service, tenant, text.format(6507), kind="decision")
    _, before = await _remember(service, tenant, text.format(6508))  # the cache now holds every one of them
    assert {invalidated, superseded, rejected, shared} <= before and private not in before
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE memory_items SET invalidated_at = now() WHERE id = $1::uuid", invalidated)
        await conn.execute(
            "UPDATE memory_items SET superseded_by = $2::uuid, review_status = 'superseded' WHERE id = $1::uuid",
            superseded,
            shared,
        )
        await conn.execute("UPDATE memory_items SET review_status = 'rejected' WHERE id = $1::uuid", rejected)
    _, reported = await _remember(service, tenant, text.format(6509))
    assert shared in reported
    assert not {invalidated, superseded, rejected, private, elsewhere, other_kind} & reported


async def test_two_ingest_processes_see_each_others_writes(
    app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    first, second = IngestService(app_pool, settings), IngestService(app_pool, settings)
    await _remember(first, tenant, "Lunch is served at noon in the cafeteria.")  # both caches are filled
    await _remember(second, tenant, "Printer toner is kept in the supply closet.")
    written_by_first, _ = await _remember(first, tenant, "The staging database runs on port 6543.")
    written_by_second, reported = await _remember(second, tenant, "The staging database now runs on port 6544.")
    assert reported == {written_by_first}
    _, reported = await _remember(first, tenant, "The staging database now runs on port 6544 for the team.")
    assert reported == {written_by_first, written_by_second}


async def test_the_answer_is_similar_lives(app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext) -> None:
    """Over a window of templated texts (many near each other), the cached search and the one-statement
    ``similar_live`` list the same items with the same similarities, also with a window smaller than the store
    and a cache smaller than the window."""
    service = IngestService(app_pool, settings)
    templates = (
        "The {} database runs on port {} for the {} team.",
        "Deploy the {} service to {} every {}.",
        "{} owns the {} runbook since {}.",
    )
    words = ("staging", "billing", "search", "payments", "ledger", "Monday", "Friday", "Alice", "Bob")
    for n in range(36):
        template = templates[n % 3]
        await _remember(service, tenant, template.format(words[n % 9], 6000 + n % 7, words[(n * 5) % 9]))
    queries = [t.format(w, 6003, "Alice") for t in templates for w in words[:4]]
    listed = 0
    for window, cache in ((500, 1000), (20, 1000), (30, 8)):
        finder = PossibleSupersedes(settings.possible_supersedes_threshold, window, cache)
        for query in queries:
            async with tenant_tx(app_pool, tenant.tenant_id) as conn:
                new_id = str(uuid.uuid4())
                found = await finder.find(conn, new_id, query, "fact", tenant.principal_id, [])
                expected = await items.similar_live(
                    conn, query, "fact", tenant.principal_id, [new_id], settings.possible_supersedes_threshold, window
                )
            assert [s.similarity for s in found] == [s.similarity for s in expected], query
            last = min((s.similarity for s in expected), default=1.0)  # ties at the fifth may be either item
            assert {s.id for s in found if s.similarity > last} == {s.id for s in expected if s.similarity > last}
            listed += len(expected)
    assert listed > 30  # the texts are near each other: the queries list items


async def test_a_remembers_answer_is_similar_lives_over_the_window_before_it(
    app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    """Through ``remember`` (the window read with the write context, the first candidates scored in the insert
    statement, the rest after it): the answer is ``similar_live``'s over the window most recent live items
    besides the new one, also when more than the first candidates must be scored."""
    window = 12
    service = IngestService(app_pool, settings.model_copy(update={"possible_supersedes_window": window}))
    for n in range(30):  # many near each other: more candidates than the insert statement scores
        await _remember(service, tenant, f"The build of service {n % 6} runs on host {n % 5} after deploy {n}.")
    listed = 0
    for n in range(8):
        query = f"The build of service {n % 6} runs on host {n % 4} after deploy {n + 100}."
        new_id, reported = await _remember(service, tenant, query)
        async with tenant_tx(app_pool, tenant.tenant_id) as conn:
            expected = await items.similar_live(
                conn, query, "fact", tenant.principal_id, [new_id], settings.possible_supersedes_threshold, window + 1
            )
        last = min((s.similarity for s in expected), default=1.0)  # ties at the fifth may be either item
        assert {s.id for s in expected if s.similarity > last} <= reported, query
        assert len(reported) == len(expected), query
        listed += len(expected)
    assert listed > 20
