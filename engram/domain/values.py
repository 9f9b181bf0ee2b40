"""Every closed set of strings Engram stores, accepts or announces, defined once.

Each set is a ``StrEnum``: a member is its string (``Visibility.PRIVATE == "private"``), so it goes into SQL,
protobuf and JSON as it is, and the gateway's request schemas take the enum so that a bad value is refused
naming the field and the allowed values (and ``/openapi.json`` lists them). Named subsets follow the set they
narrow. The database's CHECK constraints (``engram/db/migrations``) and the allowed values the gRPC contracts
(``proto/engram/v1``) document are tested against these sets (``tests/integration/test_values.py``).
"""

from __future__ import annotations

from enum import StrEnum


class Visibility(StrEnum):
    """Who may read an item, narrowest first."""

    PRIVATE = "private"  # its author
    WORKSPACE = "workspace"  # members of its workspace
    TENANT = "tenant"  # any principal of the tenant
    PUBLIC = "public"  # any authenticated caller, when the tenant enables it


class ReviewStatus(StrEnum):
    """An item's place in the review lifecycle (``engram/domain/lifecycle.py``)."""

    PROPOSED = "proposed"
    ACTIVE = "active"
    DISPUTED = "disputed"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


LIVE_REVIEW_STATUSES: tuple[ReviewStatus, ...] = (ReviewStatus.PROPOSED, ReviewStatus.ACTIVE, ReviewStatus.DISPUTED)
"""The review statuses of a memory still in play: recall serves them, dedup and conflicts compare them."""


class ItemSort(StrEnum):
    """The orders ``GET /v1/items`` pages in; a leading ``-`` is descending. Each order ends with the creation
    time and the id (in the same direction), so it is total and a cursor resumes right after a page's last item."""

    NEWEST = "-created_at"
    OLDEST = "created_at"
    IMPORTANCE = "-importance"


class ReviewAction(StrEnum):
    """What a caller may do to an item's review status (the pipeline also proposes and promotes)."""

    ACTIVATE = "activate"
    DISPUTE = "dispute"
    REJECT = "reject"
    ARCHIVE = "archive"
    REACTIVATE = "reactivate"
    WITHDRAW = "withdraw"


class ItemState(StrEnum):
    """Where an item stands for anything that needs a live one (superseding it, linking to it)."""

    LIVE = "live"
    SUPERSEDED = "superseded"
    INVALIDATED = "invalidated"
    EXPIRED = "expired"


class RememberStatus(StrEnum):
    """What ``remember`` did."""

    CREATED = "created"
    DEDUPLICATED = "deduplicated"  # the same canonical content was already stored: nothing written
    SUPERSEDED = "superseded"  # created, replacing the items it names (or a singleton slot's holder)


class RecallMode(StrEnum):
    STARTUP = "startup"  # no query: the memories a session starts with
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    KEYWORD = "keyword"


class SearchMode(StrEnum):
    """Search always has a query, so it has no startup mode."""

    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class EdgeType(StrEnum):
    """A typed link between two memories (src → dst)."""

    DERIVED_FROM = "derived_from"
    REFERENCES = "references"
    EXPLAINS = "explains"
    CONTRADICTS = "contradicts"
    SUPPORTS = "supports"
    DEPENDS_ON = "depends_on"
    MENTIONS = "mentions"
    SUPERSEDES = "supersedes"  # written only by supersession


class LinkType(StrEnum):
    """The edge types a caller may link with: every ``EdgeType`` but ``supersedes``."""

    DERIVED_FROM = EdgeType.DERIVED_FROM.value
    REFERENCES = EdgeType.REFERENCES.value
    EXPLAINS = EdgeType.EXPLAINS.value
    CONTRADICTS = EdgeType.CONTRADICTS.value
    SUPPORTS = EdgeType.SUPPORTS.value
    DEPENDS_ON = EdgeType.DEPENDS_ON.value
    MENTIONS = EdgeType.MENTIONS.value


class PrincipalType(StrEnum):
    AGENT = "agent"
    USER = "user"
    SYSTEM = "system"
    ADMIN = "admin"


class SecretPolicy(StrEnum):
    """What remember does with content holding a credential (tenant config ``secret_policy``)."""

    REFUSE = "refuse"
    REDACT = "redact"


class WorkspaceRole(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"
    VIEWER = "viewer"


WRITING_ROLES: tuple[WorkspaceRole, ...] = (WorkspaceRole.OWNER, WorkspaceRole.ADMIN, WorkspaceRole.MEMBER)
"""The workspace roles that may write (and link from) memories in the workspace."""


class SourceType(StrEnum):
    """Where a memory came from; with the principal's type it sets the memory's authority."""

    EXPLICIT = "explicit"
    AGENT = "agent"
    IMPORT = "import"
    INFERRED = "inferred"


class FeedbackVerdict(StrEnum):
    USEFUL = "useful"
    NOISE = "noise"


class ConflictType(StrEnum):
    CONTRADICTION = "contradiction"
    DUPLICATE = "duplicate"
    REFINEMENT = "refinement"
    SCOPE_OVERLAP = "scope_overlap"


class ConflictStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


class Resolution(StrEnum):
    """A decision that closes a conflict."""

    KEEP_EXISTING = "keep_existing"
    ACCEPT_NEW = "accept_new"
    KEEP_BOTH = "keep_both"
    MERGE = "merge"


class PipelineStage(StrEnum):
    """The stages an item passes after it is stored, in the order they run (promotion only for proposals)."""

    EMBEDDING = "embedding"
    CLASSIFICATION = "classification"
    CONFLICT_CHECK = "conflict_check"
    PROMOTION = "promotion"


# The kinds every tenant has (memory_kinds rows without a tenant, seeded by migration 001); tenants may add more.
BUILT_IN_KINDS = frozenset(
    {"fact", "preference", "doctrine", "decision", "invariant", "observation", "diary_entry", "procedure", "summary"}
)


class StageStatus(StrEnum):
    """A pipeline stage of an item (embedding, classification, conflict_check, promotion)."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class Sensitivity(StrEnum):
    """How sensitive the content is, least first: personal data or a credential suggests private visibility."""

    NORMAL = "normal"
    PERSONAL = "personal"
    SECRET = "secret"


class Retention(StrEnum):
    """The classifier's reading of whether a memory is worth keeping."""

    RETAIN = "retain"
    TRANSIENT = "transient"
    NOISE = "noise"
    UNCERTAIN = "uncertain"


class PatchField(StrEnum):
    """The fields of an item a PATCH may change: metadata only, never the content (a correction supersedes)."""

    TAGS = "tags"
    IMPORTANCE = "importance"
    PINNED = "pinned"
    VISIBILITY = "visibility"
    SUBJECT = "subject"
    VALID_TO = "valid_to"


class IdempotentRoute(StrEnum):
    """The writes an ``Idempotency-Key`` applies to; a key is scoped to (tenant, principal, route)."""

    REMEMBER = "remember"
    REMEMBER_BATCH = "remember_batch"
    OBSERVE = "observe"


class TrashReason(StrEnum):
    DELETED = "deleted"
    EXPIRED = "expired"


class BulkAction(StrEnum):
    ARCHIVE = "archive"
    DELETE = "delete"


class EventType(StrEnum):
    """Every event Engram announces. The value is the ``<entity>.<action>`` that ends the NATS subject
    (``engram.events.<tenant_id>.memory.created``); ``cloud_type`` is the CloudEvents ``type``
    (``engram.memory.created``). docs/events.md describes each."""

    MEMORY_CREATED = "memory.created"
    MEMORY_EMBEDDED = "memory.embedded"
    MEMORY_CLASSIFIED = "memory.classified"
    MEMORY_REVIEW_CHANGED = "memory.review_changed"
    MEMORY_VERIFIED = "memory.verified"
    MEMORY_UPDATED = "memory.updated"
    MEMORY_SUPERSEDED = "memory.superseded"
    MEMORY_INVALIDATED = "memory.invalidated"
    MEMORY_DELETED = "memory.deleted"
    MEMORY_EXPIRED = "memory.expired"
    MEMORY_RESTORED = "memory.restored"
    CONFLICT_DETECTED = "conflict.detected"
    CONFLICT_RESOLVED = "conflict.resolved"
    FEEDBACK_RECORDED = "feedback.recorded"

    @property
    def cloud_type(self) -> str:
        """The CloudEvents ``type``: ``engram.<entity>.<action>``."""
        return f"{CLOUD_TYPE_PREFIX}{self.value}"

    @classmethod
    def from_cloud_type(cls, cloud_type: str) -> EventType | None:
        """The member a CloudEvents ``type`` names (None for a type Engram does not announce)."""
        if not cloud_type.startswith(CLOUD_TYPE_PREFIX):
            return None
        try:
            return cls(cloud_type.removeprefix(CLOUD_TYPE_PREFIX))
        except ValueError:
            return None


CLOUD_TYPE_PREFIX = "engram."


def listed(values: type[StrEnum] | tuple[StrEnum, ...]) -> str:
    """``a, b, c``: the allowed values, for an error message."""
    return ", ".join(str(v) for v in values)
