"""Classify one memory: the rules always (with the local kind model, ``kind_model``, when ``local`` is set), and
an OpenAI-compatible model when one is configured.

The rules run in a worker thread (``asyncio.to_thread``), never on the caller's event loop: they are CPU work
that grows with the content and the tenant's placement rules, and one tenant's call must not hold up the
other work of the process. The local kind model's embedding of the content runs in the same thread.

The model is asked for a JSON object under a strict schema. Any failure (unreachable, timeout, not JSON, a
field out of range, an unknown kind, an extra key) keeps the rules' answer and says why in the receipt. A
model's answer can never make content *less* sensitive than the rules found it, and its confidences are
clamped like the rules' (0–0.95).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engram.domain.classification import Classification, PlacementRule, clamp_confidence, parse_placement_rules
from engram.domain.classification import classify as classify_by_rules
from engram.domain.secrets import find_secrets, redact
from engram.domain.validation import MAX_LABEL_LENGTH
from engram.domain.values import Retention, Sensitivity, Visibility
from engram.errors import ValidationFailed
from engram.llm import JsonChat, LLMUnavailable
from engram.pipeline import kind_model

log = logging.getLogger(__name__)

SENSITIVITY_ORDER: tuple[str, ...] = tuple(Sensitivity)  # least sensitive first
RETENTIONS: tuple[str, ...] = tuple(Retention)
# the reasons of the local kind answer, left out when the model's kind replaces it
KIND_REASONS = ("kind cue", "also a", "kind model", "nearest examples", "retention: the kind model")

SYSTEM_PROMPT = (
    "You classify one memory an AI agent wants to store. Answer with a JSON object only. kind: the best of the "
    "listed kinds. retention: retain (worth keeping), transient (true only briefly), noise (chatter with no "
    "information) or uncertain (hedged). sensitivity: normal, personal (about a person: contact details, health, "
    "money) or secret (credentials). wing and room: a short topic and sub-topic label, or null. Confidences are "
    "between 0 and 1."
)


def answer_schema(kinds: Sequence[str]) -> dict[str, object]:
    """The strict JSON schema the model must answer in (``kinds``: the tenant's enabled kinds)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", "retention", "sensitivity", "wing", "room", "taxonomy_confidence", "retention_confidence"],
        "properties": {
            "kind": {"type": "string", "enum": list(kinds)},
            "retention": {"type": "string", "enum": list(RETENTIONS)},
            "sensitivity": {"type": "string", "enum": list(SENSITIVITY_ORDER)},
            "wing": {"type": ["string", "null"], "maxLength": MAX_LABEL_LENGTH},
            "room": {"type": ["string", "null"], "maxLength": MAX_LABEL_LENGTH},
            "taxonomy_confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "retention_confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    kind: str
    retention: Retention = Field(strict=False)  # the model's JSON string, checked against the value set
    sensitivity: Sensitivity = Field(strict=False)
    wing: str | None = Field(max_length=MAX_LABEL_LENGTH)
    room: str | None = Field(max_length=MAX_LABEL_LENGTH)
    taxonomy_confidence: float = Field(ge=0, le=1)
    retention_confidence: float = Field(ge=0, le=1)


def stored_placement_rules(raw: object) -> list[PlacementRule]:
    """The tenant's stored ``placement_rules``, or none when the stored value breaks today's rules (it was
    validated when set, but an older, looser check may have let it in): logged, never an error for the caller."""
    try:
        return parse_placement_rules(raw)
    except ValidationFailed as exc:
        log.warning("ignoring the tenant's placement rules: %s", exc.detail)
        return []


def classify_locally(
    content: str,
    placement_rules: Sequence[PlacementRule],
    kinds: Sequence[str],
    local: bool,
    vector: np.ndarray | None = None,
) -> Classification:
    """The rules' answer; with ``local``, the kind and chatter from the local kind model (blocking). ``vector``:
    the content's ``kind_model.embed``, when the caller already has it (a batch embedded in one call)."""
    if not local:
        return classify_by_rules(content, placement_rules)
    model = kind_model.load_kind_model()
    if vector is None:
        vector = kind_model.embed(content)
    return classify_by_rules(content, placement_rules, model=model, vector=vector, kinds=kinds)


async def classify(
    content: str,
    placement_rules: Sequence[PlacementRule],
    kinds: Sequence[str],
    llm: JsonChat | None,
    *,
    local: bool = False,
    vector: np.ndarray | None = None,
) -> tuple[Classification, str | None]:
    """The classification, and why the model's answer was not used (None when it was, or no model is set).
    ``vector``: as for ``classify_locally``."""
    rules = await asyncio.to_thread(classify_locally, content, placement_rules, kinds, local, vector)
    if llm is None:
        return rules, None
    findings = find_secrets(content)  # a model never sees a credential, whatever the tenant's policy
    try:
        raw = await llm.ask(
            SYSTEM_PROMPT,
            redact(content, findings) if findings else content,
            "memory_classification",
            answer_schema(kinds),
        )
    except LLMUnavailable as exc:
        return rules, f"model unavailable: {exc}"
    try:
        answer = _Answer.model_validate(raw)
    except ValidationError as exc:
        return rules, f"invalid answer: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"[:300]
    if answer.kind not in kinds:
        return rules, f"invalid answer: unknown kind {answer.kind[:64]!r}"
    sensitivity = max(rules.sensitivity, answer.sensitivity, key=SENSITIVITY_ORDER.index)
    placed = rules.wing is not None  # a tenant's placement rule outranks the model's guess
    return Classification(
        kind=answer.kind,
        taxonomy_confidence=clamp_confidence(answer.taxonomy_confidence),
        retention=answer.retention,
        retention_confidence=clamp_confidence(answer.retention_confidence),
        sensitivity=sensitivity,
        wing=rules.wing if placed else (answer.wing or None),
        room=rules.room if placed else (answer.room or None),
        suggested_visibility=Visibility.PRIVATE if sensitivity != Sensitivity.NORMAL else None,
        reasons=(f"model {llm.model}", *(r for r in rules.reasons if not r.startswith(KIND_REASONS))),
        classifier=f"llm:{llm.model}",
    ), None
