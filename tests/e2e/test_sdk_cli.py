"""The sync SDK client, the CLI verbs and ``engram events tail`` against the stack as ``engram up`` starts it.

The CLI runs as a subprocess with nothing but ``ENGRAM_HOME`` set, so it finds the gateway and the
development key of the running stack itself (``stack.json``, ``dev-key``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import httpx
import pytest
from engram_client import NO_RETRIES, EngramClient, NotFound, RateLimited, RetryPolicy, ValidationFailed

from tests.support.stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

TAIL_WAIT_S = 60.0
README = Path(__file__).resolve().parents[2] / "README.md"


def _env(stack: Stack, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**env, "ENGRAM_HOME": str(stack.home), **extra}


def engram(stack: Stack, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram.cli", *args],
        env=_env(stack, **env),
        cwd=stack.home.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


def engram_json(stack: Stack, *args: str) -> Any:
    done = engram(stack, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _has_route(stack: Stack, method: str, path: str) -> bool:
    with stack.client(authenticated=False) as http:
        return method.lower() in http.get("/openapi.json").json()["paths"].get(path, {})


def test_the_sync_client(stack: Stack) -> None:
    with EngramClient(stack.url, stack.dev_key) as client:
        stored = client.remember("The on-call rotation changes every Monday at 09:00.", tags=["oncall"])
        assert stored.status == "created"
        assert client.get(stored.id).tags == ["oncall"]
        assert client.status(stored.id).id == stored.id
        assert client.events(stored.id).events[0].action == "created"
        assert client.recall("on-call rotation", mode="keyword").items[0].item.id == stored.id
        assert client.search("rotation Monday", mode="keyword").items[0].item.id == stored.id
        other = client.remember("The on-call handbook lives in the ops wiki.")
        edge = client.link(other.id, stored.id, "references")
        assert [e.id for e in client.edges(stored.id).items] == [edge.id]
        client.unlink(edge.id)
        trash_ids = [client.delete(client.remember(f"Paged note {n}.").id).trash_id for n in range(3)]
        assert client.trash(limit=2).next_cursor  # positive control: more than one page
        assert set(trash_ids) <= {entry.id for entry in client.iter_trash(page_size=2)}
        with pytest.raises(NotFound):
            client.get(str(uuid.uuid4()))
        with pytest.raises(ValidationFailed) as invalid:
            client.remember("Out of range.", importance=2.0)
        assert invalid.value.field == "importance"


def test_the_sync_client_retries_a_429_after_retry_after(stack: Stack) -> None:
    """A fresh tenant with a recall limit of 60 a minute: the burst spent, the client waits Retry-After and
    tries again."""
    with EngramClient(stack.url, stack.dev_key) as platform:
        tenant = platform.admin_create_tenant(f"sdk-e2e-{uuid.uuid4().hex[:8]}").id
        principal = platform.admin_create_principal("reader", "user", tenant_id=tenant).id
        key = platform.admin_create_api_key(principal, scopes=["read"], tenant_id=tenant).key
        platform.admin_patch_tenant_config(tenant_id=tenant, rate_limits={"recall": 60})
    with EngramClient(stack.url, key, retry=NO_RETRIES) as strict, pytest.raises(RateLimited) as limited:
        for _ in range(300):
            strict.classify("Deploys happen on Tuesdays.")
    assert limited.value.retry_after is not None and limited.value.retry_after >= 1

    answers: list[tuple[int, str | None]] = []
    waits: list[float] = []

    def seen(response: httpx.Response) -> None:
        answers.append((response.status_code, response.headers.get("retry-after")))

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    policy = RetryPolicy(max_attempts=3, max_wait_s=10)
    with EngramClient(stack.url, key, retry=policy, sleep=sleep, event_hooks={"response": [seen]}) as patient:
        for _ in range(10):
            answers.clear()
            assert patient.classify("Deploys happen on Tuesdays.").kind
            if len(answers) > 1:
                break
    assert answers[0][0] == 429 and answers[0][1] is not None and answers[-1][0] == 200
    assert len(waits) == len(answers) - 1 and waits[0] >= float(answers[0][1])


def test_cli_verbs_use_the_running_stack(stack: Stack) -> None:
    stored = engram_json(stack, "remember", "Release notes are drafted on Thursdays.", "--tag", "release")
    assert stored["status"] == "created" and stored["item"]["tags"] == ["release"]
    item_id = stored["id"]
    assert engram_json(stack, "get", item_id)["content"] == "Release notes are drafted on Thursdays."
    recalled = engram_json(stack, "recall", "release notes Thursdays", "--mode", "keyword")
    assert recalled["items"][0]["item"]["id"] == item_id
    found = engram_json(stack, "search", "drafted Thursdays", "--mode", "keyword", "--limit", "3")
    assert [hit["item"]["id"] for hit in found["items"]] == [item_id]
    assert engram_json(stack, "conflicts")["items"] == []

    proposal = engram_json(stack, "remember", "Every release gets a changelog entry.", "--kind", "doctrine")
    assert proposal["review_status"] == "proposed"
    activated = engram_json(stack, "review", proposal["id"], "activate", "--reason", "agreed")
    assert activated["review_status"] == "active"

    table = engram(stack, "get", item_id)
    assert table.returncode == 0 and "drafted on Thursdays" in table.stdout and "release" in table.stdout
    hits = engram(stack, "recall", "release notes Thursdays", "--mode", "keyword")
    assert hits.returncode == 0 and hits.stdout.startswith("score") and item_id in hits.stdout

    missing = engram(stack, "get", str(uuid.uuid4()))
    assert missing.returncode == 1 and missing.stderr.startswith("engram: not_found:")
    wrong_key = engram(stack, "get", item_id, ENGRAM_API_KEY="eng_nope_nope")
    assert wrong_key.returncode == 1 and "unauthenticated" in wrong_key.stderr

    if _has_route(stack, "get", "/v1/items"):  # GET /v1/items (issue #15) is not on every branch yet
        listed = engram_json(stack, "list", "--kind", "fact", "--limit", "50")
        assert item_id in [i["id"] for i in listed["items"]]


def test_events_tail_prints_the_event_of_a_later_remember(stack: Stack) -> None:
    """Two types, so the consumer filters on two subjects; the item's created and then embedded events come."""
    command = [sys.executable, "-m", "engram.cli", "events", "tail", "--types", "memory.created,engram.memory.embedded"]
    env = _env(stack, PYTHONUNBUFFERED="1")
    with subprocess.Popen(
        command, env=env, cwd=stack.home.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as tail:
        assert tail.stdout and tail.stderr
        lines: Queue[str] = Queue()
        pump = threading.Thread(target=lambda: [lines.put(line) for line in tail.stdout or ()], daemon=True)
        pump.start()
        try:
            started = tail.stderr.readline()
            assert started.startswith("engram: tailing"), started
            with EngramClient(stack.url, stack.dev_key) as client:
                item_id = client.remember(f"Tailed memory {uuid.uuid4()}.").id
            events = _events_until(lines, item_id)
        finally:
            tail.send_signal(signal.SIGINT)  # Ctrl-C
            code = tail.wait(timeout=30)
            pump.join(timeout=10)
    mine = [e for e in events if e["subject"] == item_id]
    assert [e["type"] for e in mine] == ["engram.memory.created", "engram.memory.embedded"]
    assert mine[0]["data"]["item_id"] == item_id
    assert {e["type"] for e in events} <= {"engram.memory.created", "engram.memory.embedded"}  # the filter held
    assert code == 0


def _events_until(lines: Queue[str], item_id: str) -> list[dict[str, Any]]:
    """The JSON lines read until the two about ``item_id`` (failing after TAIL_WAIT_S)."""
    deadline = time.monotonic() + TAIL_WAIT_S
    events: list[dict[str, Any]] = []
    while sum(e["subject"] == item_id for e in events) < 2:
        try:
            events.append(json.loads(lines.get(timeout=max(0.1, deadline - time.monotonic()))))
        except Empty:
            pytest.fail(f"no event for {item_id} within {TAIL_WAIT_S} s; got {events}")
    return events


def _readme_blocks(language: str) -> list[str]:
    section = README.read_text().split("## The Python SDK and the command line", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)


def test_the_readme_quickstart_runs_verbatim(stack: Stack) -> None:
    """The README's SDK snippet and CLI commands, as written, against the running stack (found through
    ENGRAM_URL/ENGRAM_API_KEY for the snippet, through ENGRAM_HOME for the commands)."""
    [snippet] = _readme_blocks("python")
    [commands] = _readme_blocks("bash")
    ran = subprocess.run(
        [sys.executable, "-c", snippet],
        env=_env(stack, ENGRAM_URL=stack.url, ENGRAM_API_KEY=stack.dev_key),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "Staging is rebuilt every night" in ran.stdout and ran.stdout.rstrip().endswith("not_found")
    env = _env(stack, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    shell = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        env=env,
        cwd=stack.home.parent,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert shell.returncode == 0, shell.stderr
    assert "created: " in shell.stdout and "The release branch is cut" in shell.stdout
    assert '"type": "engram.memory.created"' in shell.stdout  # the tail's one event
