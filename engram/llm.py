"""An OpenAI-compatible chat model asked for one JSON object under a strict schema.

Used by the classifier and the conflict judge when ``ENGRAM_LLM_BASE_URL`` is set. Every failure (network,
timeout, HTTP error, an answer that is not a JSON object) raises ``LLMUnavailable``; callers fall back to
their rules and never let a model's answer through without validating it themselves.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from engram.config import Settings

log = logging.getLogger(__name__)


class LLMUnavailable(Exception):
    """The model gave no usable answer; the message says why (for receipts and logs)."""


class JsonChat:
    def __init__(self, base_url: str, model: str, api_key: str, timeout_s: float) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> JsonChat | None:
        if not settings.llm_base_url:
            return None
        return cls(settings.llm_base_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)

    async def ask(self, system: str, user: str, schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The model's answer as a JSON object (not yet validated against ``schema``: the caller does that)."""
        from openai import OpenAIError

        try:
            reply = await self._client.chat.completions.create(
                model=self.model,
                temperature=0,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "strict": True, "schema": schema},
                },
            )
        except OpenAIError as exc:
            # the type and HTTP status only: an error body may quote the request, i.e. memory content
            status = getattr(exc, "status_code", None)
            raise LLMUnavailable(f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")) from exc
        try:
            answer = json.loads(reply.choices[0].message.content or "")
        except (IndexError, AttributeError, ValueError) as exc:
            log.warning("the model's answer is not JSON: %s", exc)
            raise LLMUnavailable("not JSON") from exc
        if not isinstance(answer, dict):
            raise LLMUnavailable("not a JSON object")
        return answer

    async def close(self) -> None:
        await self._client.close()
