"""The LLM judge's answer: the schema it must match and the strict reading of it."""

from __future__ import annotations

import json
import math
from typing import Any

from engram.domain.conflict_rules.verdicts import LABELS, Verdict

LLM_RULE = "llm_judge"
EXPLANATION_LIMIT = 300

LLM_JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [*LABELS, "none"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "explanation": {"type": "string", "maxLength": EXPLANATION_LIMIT},
    },
    "required": ["label", "confidence", "explanation"],
    "additionalProperties": False,
}


def parse_llm_verdict(raw: str) -> Verdict | None:
    """The verdict in an LLM judge's answer, or None for label "none" and for anything that does not match
    ``LLM_JUDGE_SCHEMA`` exactly: invalid output never changes anything."""
    if not isinstance(raw, str):
        return None
    try:
        answer = json.loads(raw, object_pairs_hook=_refuse_repeated_keys)
    except (ValueError, RecursionError):
        return None
    if not isinstance(answer, dict) or set(answer) != set(LLM_JUDGE_SCHEMA["required"]):
        return None
    label, confidence, explanation = answer["label"], answer["confidence"], answer["explanation"]
    if label not in LABELS or not isinstance(explanation, str) or len(explanation) > EXPLANATION_LIMIT:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence):
        return None
    if not 0.0 <= confidence <= 1.0:
        return None
    return Verdict(label, LLM_RULE, float(confidence), explanation.strip())


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("repeated key")
    return dict(pairs)
