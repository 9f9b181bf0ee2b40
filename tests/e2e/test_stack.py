"""The whole stack as `engram up` runs it, driven through REST as an agent would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid

import httpx
import nats
import psutil
import pytest

from engram.config import DEFAULT_TENANT_ID, DEFAULT_WORKSPACE_ID
from engram.events.durables import all_durables
from engram.runtime.ports import free_port
from tests.support.stack import Stack
from tests.support.waiting import eventually_blocking

# a stack may take 180 s to start and a wait up to 180 s more: far above the default per-test timeout
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

MEMORIES = [
    ("Alice is allergic to peanuts, so team lunches are nut-free.", "fact"),
    ("Production deploys happen on Tuesdays after the standup.", "procedure"),
    ("Bob prefers dark roast coffee.", "preference"),
]


def remember(client: httpx.Client, content: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/v1/remember", json={"content": content, **fields})
    assert response.status_code in (200, 201), response.text
    return response.json()  # type: ignore[no-any-return]


def wait_embedded(client: httpx.Client, item_id: str) -> None:
    eventually_blocking(
        lambda: client.get(f"/v1/items/{item_id}/status").json()["embedding"] == "done", message=f"{item_id} embedded"
    )


def test_the_development_key_is_printed_kept_and_required(stack: Stack) -> None:
    key = stack.dev_key
    assert any(line.startswith(f"dev key: {key}") for line in stack.output)
    assert (stack.home / "dev-key").stat().st_mode & 0o077 == 0
    with stack.client(authenticated=False) as anonymous:
        refused = anonymous.post("/v1/recall", json={"query": "anything"})
        assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
        assert anonymous.get("/ready").status_code == 200
    with stack.client() as client:
        assert client.post("/v1/recall", json={"query": "anything"}).status_code == 200


def test_remember_then_recall_by_meaning(stack: Stack) -> None:
    with stack.client() as client:
        ids = [remember(client, text, kind=kind)["id"] for text, kind in MEMORIES]
        for item_id in ids:
            wait_embedded(client, item_id)
        answer = client.post("/v1/recall", json={"query": "what food must Alice avoid?", "mode": "semantic"}).json()
        top = answer["items"][0]
        assert top["item"]["id"] == ids[0]
        assert top["score"] > 0 and top["origin"] == "semantic"
        assert any(reason.startswith("semantic match") for reason in top["reasons"])
        assert answer["recall_id"] and answer["scoring_version"]
        hybrid = client.post("/v1/recall", json={"query": "when do we ship to prod?", "item_budget": 1}).json()
        assert [i["item"]["id"] for i in hybrid["items"]] == [ids[1]] and hybrid["omitted"] >= 1
        item = client.get(f"/v1/items/{ids[2]}").json()
        assert item["content"] == MEMORIES[2][0] and item["kind"] == "preference" and item["authority"] == 50
        status = client.get(f"/v1/items/{ids[2]}/status").json()
        assert status["embedding"] == "done" and status["stages"][0]["updated_at"]
        again = client.post("/v1/remember", json={"content": MEMORIES[2][0].upper()})
        assert again.status_code == 200 and again.json() | {"item": None} == {
            "id": ids[2],
            "status": "deduplicated",
            "review_status": "active",
            "authority": 50,
            "possible_supersedes": [],
            "superseded": [],
            "item": None,
        }
        ready = client.get("/ready").json()
        assert ready == {"status": "ready", "checks": {"database": "ok", "nats": "ok", "ingest": "ok", "recall": "ok"}}
        assert "engram_http_request_duration_seconds" in client.get("/metrics").text


def test_every_process_serves_health_ready_and_metrics(stack: Stack) -> None:
    """The probes a Deployment or a compose healthcheck points at, on each process's metrics port."""
    metrics = stack.info()["metrics"]
    assert isinstance(metrics, dict)
    processes = sorted(name for name in metrics if name != "gateway")
    assert processes == ["classifier", "conflicts", "embedder", "ingest", "promotion", "recall"]
    for name in processes:
        base = metrics[name].removesuffix("/metrics")
        assert httpx.get(f"{base}/health").json() == {"status": "ok"}, name
        ready = httpx.get(f"{base}/ready")
        assert ready.status_code == 200 and ready.json() == {"status": "ready"}, (name, ready.text)
        assert "engram_" in httpx.get(f"{base}/metrics").text, name


def test_doctor_passes_on_the_running_stack(stack: Stack) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")} | {"ENGRAM_HOME": str(stack.home)}
    done = subprocess.run(
        [sys.executable, "-m", "engram.cli", "doctor", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"], done.stdout + done.stderr
    names = {check["name"] for check in report["checks"]}
    assert {"database", "pgvector", "migrations", "outbox", "nats", "stream", "dead letters", "embedding"} <= names
    assert {f"consumer {durable}" for durable in all_durables()} <= names
    services = {"gateway", "ingest", "recall", "embedder", "classifier", "conflicts", "promotion"}
    assert {f"ready {name}" for name in services} <= names


def test_bad_input_is_refused_and_nothing_is_written(stack: Stack) -> None:
    with stack.client() as client:
        marker = f"zq{uuid.uuid4().hex[:10]}"
        remember(client, f"control memory {marker}")
        found = client.post("/v1/search", json={"query": marker, "mode": "keyword"}).json()
        assert len(found["items"]) == 1  # positive control: keyword search sees a write at once
        bad = f"zq{uuid.uuid4().hex[:10]}"
        for payload, field in (
            ({"content": ""}, "content"),
            ({"content": "y" * 20_000 + bad}, "content"),
            ({"content": bad, "kind": "gossip"}, "kind"),
            ({"content": bad, "importance": 1.5}, "importance"),
            ({"content": bad, "mood": "happy"}, "mood"),
        ):
            response = client.post("/v1/remember", json=payload)
            assert response.status_code == 422
            assert response.headers["content-type"] == "application/problem+json"
            problem = response.json()
            assert problem["code"] == "validation_failed" and problem["field"] == field and problem["detail"]
        assert client.post("/v1/search", json={"query": bad, "mode": "keyword"}).json()["items"] == []


def test_created_event_reaches_the_stream_without_content(stack: Stack) -> None:
    with stack.client() as client:
        secret = f"the vault code word is {uuid.uuid4().hex[:8]}"
        created = remember(client, secret, tags=["events"])

    async def find_event() -> tuple[str, dict, dict]:  # type: ignore[type-arg]
        nc = await nats.connect(stack.info()["nats_url"])
        try:
            js = nc.jetstream()
            sub = await js.pull_subscribe(f"engram.events.{DEFAULT_TENANT_ID}.memory.created", stream="ENGRAM_EVENTS")
            for _ in range(50):
                for msg in await sub.fetch(100, timeout=2):
                    envelope = json.loads(msg.data)
                    if envelope["subject"] == created["id"]:
                        return msg.subject, dict(msg.headers or {}), envelope
            raise AssertionError("memory.created event not found")
        finally:
            await nc.close()

    subject, headers, envelope = asyncio.run(find_event())
    assert subject == f"engram.events.{DEFAULT_TENANT_ID}.memory.created"
    assert headers["Nats-Msg-Id"] == envelope["id"]
    assert {k: envelope[k] for k in ("specversion", "type", "source", "tenantid", "datacontenttype")} == {
        "specversion": "1.0",
        "type": "engram.memory.created",
        "source": "engram",
        "tenantid": DEFAULT_TENANT_ID,
        "datacontenttype": "application/json",
    }
    assert envelope["data"]["item_id"] == created["id"] and envelope["data"]["kind"] == "fact"
    assert envelope["time"] and uuid.UUID(envelope["id"])
    assert secret not in json.dumps(envelope) and "vault" not in json.dumps(envelope)


def test_a_crashed_service_is_restarted(stack: Stack) -> None:
    old = stack.service_pid("recall")
    psutil.Process(old).kill()
    new = eventually_blocking(lambda: _new_pid(stack, "recall", old), timeout=60, message="recall restarted")
    assert new != old
    with stack.client() as client:
        eventually_blocking(lambda: client.get("/ready").status_code == 200, timeout=60, message="ready again")
        # /ready may answer from its cache (ENGRAM_READINESS_CACHE_S) and the gateway's channel reconnects with
        # back-off, so recall is asked until it answers; meanwhile it may refuse with 503, never with a 500
        answers: list[int] = []

        def recalled() -> bool:
            answers.append(client.post("/v1/recall", json={"query": "coffee", "mode": "keyword"}).status_code)
            return answers[-1] == 200

        eventually_blocking(recalled, timeout=60, message="recall answers again")
        assert set(answers) <= {200, 503}, answers


def _new_pid(stack: Stack, name: str, old: int) -> int | None:
    try:
        pid = stack.service_pid(name)
    except AssertionError:
        return None
    return pid if pid != old else None


def test_data_survives_a_restart_and_stop_leaves_no_process(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = Stack(home=tmp_path / "home", port=free_port()).start()
    try:
        with first.client() as client:
            item_id = remember(client, "The office wifi password rotates every first Monday.")["id"]
            wait_embedded(client, item_id)
    finally:
        pids = first.stop()
    assert len(pids) >= 6  # postgres, nats and four services at least
    assert first.output[-1] == "engram: stopped"  # said once everything it started has stopped

    def all_gone() -> bool:
        return not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]

    eventually_blocking(all_gone, timeout=20, ignoring=(psutil.NoSuchProcess,), message="every stack process gone")
    assert not (tmp_path / "home" / "stack.json").exists()
    key = first.dev_key

    second = Stack(home=tmp_path / "home", port=free_port()).start()
    try:
        assert second.dev_key == key  # the development key survives a restart
        with second.client() as client:
            answer = client.post(
                "/v1/recall", json={"query": "when does the wireless network secret change?", "mode": "semantic"}
            ).json()
            assert answer["items"][0]["item"]["id"] == item_id
    finally:
        second.stop()


def test_external_servers_are_used_instead_of_embedded_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from engram.runtime.nats import EmbeddedNats
    from engram.runtime.postgres import EmbeddedPostgres

    postgres, broker = EmbeddedPostgres(tmp_path / "external-pg"), EmbeddedNats(tmp_path / "external-nats")
    database_url, nats_url = postgres.start(), broker.start()
    try:
        stack = Stack(
            home=tmp_path / "home",
            port=free_port(),
            extra_env={"ENGRAM_DATABASE_URL": database_url, "ENGRAM_NATS_URL": nats_url},
        ).start()
        try:
            names = " ".join(" ".join(p.cmdline()) for p in stack.children())
            assert "services.gateway" in names
            assert "postgres" not in names and "nats-server" not in names
            assert not (tmp_path / "home" / "pgdata").exists()
            assert stack.info()["database_url"] == database_url and stack.info()["nats_url"] == nats_url
            with stack.client() as client:
                item_id = remember(client, "External mode keeps data in the operator's own servers.")["id"]
                wait_embedded(client, item_id)
        finally:
            stack.stop()
        conn_check = asyncio.run(_count_items(database_url, item_id))
        assert conn_check == 1  # the write landed in the external database
    finally:
        broker.stop()
        postgres.stop()


async def _count_items(database_url: str, item_id: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(database_url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM memory_items WHERE id = $1::uuid", item_id))
    finally:
        await conn.close()


def test_a_second_engram_up_on_the_same_home_is_refused(stack: Stack) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(stack.home), ENGRAM_GATEWAY_PORT=str(free_port()))
    second = subprocess.run(
        [sys.executable, "-m", "engram.cli", "up"], env=env, capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 1
    assert "already running with ENGRAM_HOME" in second.stderr
    with stack.client() as client:  # the first stack is untouched
        assert client.get("/ready").status_code == 200
    assert stack.process is not None and stack.process.poll() is None


def test_bootstrap_key_prints_a_working_admin_key(stack: Stack) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(stack.home)
    result = subprocess.run(
        [sys.executable, "-m", "engram.cli", "bootstrap-key"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip()
    assert key.startswith("eng_") and key != stack.dev_key
    with httpx.Client(base_url=stack.url, headers={"authorization": f"Bearer {key}"}) as client:
        keys = client.get("/v1/admin/api-keys")
        assert keys.status_code == 200
        assert {"development key (engram up)", "bootstrap key (engram bootstrap-key)"} <= {
            k["label"] for k in keys.json()["items"]
        }


def test_the_pipeline_classifies_detects_conflicts_and_promotes(stack: Stack) -> None:
    """On the real stack: the classifier, conflicts and promotion consumers act on relayed events."""
    with stack.client() as client:
        agent = client.post(
            "/v1/admin/principals", json={"name": f"scout-{uuid.uuid4().hex[:6]}", "type": "agent"}
        ).json()["id"]
        client.post(
            f"/v1/admin/workspaces/{DEFAULT_WORKSPACE_ID}/members", json={"principal_id": agent, "role": "member"}
        ).raise_for_status()
        key = client.post("/v1/admin/api-keys", json={"principal_id": agent}).json()["key"]
        tag = uuid.uuid4().hex[:6]
        strong = remember(client, f"The {tag} job retries 3 times.")["id"]
        eventually_blocking(
            lambda: client.get(f"/v1/items/{strong}/status").json()["stages"][-1]["status"] == "done",
            message="the first memory fully processed",
        )
        with httpx.Client(base_url=stack.url, timeout=30.0, headers={"authorization": f"Bearer {key}"}) as scout:
            weak = remember(scout, f"The {tag} job retries 5 times.", source_type="inferred")["id"]

        def stages(item_id: str) -> dict[str, str]:
            return {s["name"]: s["status"] for s in client.get(f"/v1/items/{item_id}/status").json()["stages"]}

        eventually_blocking(
            lambda: stages(weak) == {"embedding": "done", "classification": "done", "conflict_check": "done"},
            message="the second memory processed",
        )
        assert client.get(f"/v1/items/{weak}").json()["review_status"] == "disputed"
        [conflict] = client.get("/v1/conflicts", params={"item_id": strong}).json()["items"]
        assert conflict["new_item_id"] == weak and conflict["type"] == "contradiction"

        client.patch(
            "/v1/admin/tenant-config", json={"promotion": {"min_age_minutes": 0, "kinds": {"doctrine": "auto"}}}
        ).raise_for_status()
        proposal = remember(client, f"As a rule, the {tag} team reviews every schema change.", kind="doctrine")
        assert proposal["review_status"] == "proposed"
        eventually_blocking(
            lambda: client.get(f"/v1/items/{proposal['id']}").json()["review_status"] == "active",
            message="the proposal promoted",
        )
        trail = client.get(f"/v1/items/{proposal['id']}/events").json()["events"]
        assert trail[-1]["action"] == "review.promote"
