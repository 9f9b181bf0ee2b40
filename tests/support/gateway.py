"""Calls to the gateway that many tests make on the way to what they check, each asserting its own status so a
failed setup says so where it happened."""

from __future__ import annotations

from typing import Any

import httpx

Headers = dict[str, str]
"""The headers of one caller, ``{"authorization": "Bearer …"}``."""


async def remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: object) -> str:
    """The id of a memory ``who`` writes through POST /v1/remember (201 asserted)."""
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()["id"]  # type: ignore[no-any-return]


async def read_item(gateway: httpx.AsyncClient, who: Headers, item_id: str) -> dict[str, Any]:
    """The memory as ``who`` reads it through GET /v1/items/{id} (200 asserted)."""
    response = await gateway.get(f"/v1/items/{item_id}", headers=who)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def recall(gateway: httpx.AsyncClient, who: Headers, query: str, **fields: object) -> list[dict[str, Any]]:
    """The hits of POST /v1/recall for ``query`` (keyword mode unless ``mode`` is given; 200 asserted)."""
    response = await gateway.post("/v1/recall", json={"mode": "keyword", "query": query, **fields}, headers=who)
    assert response.status_code == 200, response.text
    return response.json()["items"]  # type: ignore[no-any-return]
