"""The inventory gauges: every tenant's items counted by kind and review status, the pipeline's open stages
and the review queue, refreshed every ``inventory_interval_s``. Only counts leave a tenant's transaction."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from datetime import UTC, datetime

import asyncpg

from engram.config import Settings
from engram.db import inventory, tenants
from engram.db.pool import system_tx, tenant_tx
from engram.domain.values import BUILT_IN_KINDS, PipelineStage, ReviewStatus, StageStatus
from engram.runtime.periodic import every
from engram.telemetry.metrics import INVENTORY_AGE, ITEMS, PIPELINE_ITEMS, PROPOSAL_AGE, PROPOSALS, TENANT_ITEMS

log = logging.getLogger("engram.ingest.inventory")

CUSTOM_KIND = "custom"


def kind_label(kind: str) -> str:
    """A built-in kind by its name; every tenant-defined kind as ``custom`` (tenants may define any number)."""
    return kind if kind in BUILT_IN_KINDS else CUSTOM_KIND


async def refresh(pool: asyncpg.Pool, settings: Settings) -> None:
    """Count every tenant, one short transaction each, then set the gauges in one go."""
    async with system_tx(pool) as conn:
        tenant_ids = await tenants.ids(conn)
    items: Counter[tuple[str, str]] = Counter()
    stages: Counter[tuple[str, str]] = Counter()
    per_tenant: dict[str, int] = {}
    proposals = 0
    oldest: datetime | None = None
    for tenant_id in tenant_ids:
        async with tenant_tx(pool, tenant_id) as conn:
            counted = await inventory.count(conn)
        for (kind, status), n in counted.items.items():
            items[(kind_label(kind), status)] += n
        stages.update(counted.open_stages)
        per_tenant[tenant_id] = sum(counted.items.values())
        proposals += counted.proposals
        if counted.oldest_proposal is not None and (oldest is None or counted.oldest_proposal < oldest):
            oldest = counted.oldest_proposal
    # Every known combination is set, zeros included, so a series falls to 0 instead of vanishing.
    for kind in sorted(BUILT_IN_KINDS | {CUSTOM_KIND}):
        for status in ReviewStatus:
            ITEMS.labels(kind, status.value).set(items.get((kind, status.value), 0))
    for stage in PipelineStage:
        for open_status in (StageStatus.PENDING, StageStatus.FAILED):
            PIPELINE_ITEMS.labels(stage.value, open_status.value).set(stages.get((stage.value, open_status.value), 0))
    TENANT_ITEMS.clear()
    if len(per_tenant) <= settings.metrics_tenant_limit:
        for tenant_id, n in per_tenant.items():
            TENANT_ITEMS.labels(tenant_id).set(n)
    PROPOSALS.set(proposals)
    PROPOSAL_AGE.set(max((datetime.now(UTC) - oldest).total_seconds(), 0.0) if oldest else 0.0)
    INVENTORY_AGE.set(time.time())


async def run_inventory(settings: Settings, pool: asyncpg.Pool, stop: asyncio.Event) -> None:
    """Refresh the inventory gauges until ``stop``; a failed pass is logged and the gauges keep their values
    (``engram_inventory_timestamp_seconds`` shows how old they are)."""

    async def one_pass() -> None:
        await refresh(pool, settings)

    await every(settings.inventory_interval_s, stop, one_pass, "inventory", log)
