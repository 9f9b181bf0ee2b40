"""Writers and readers driving a running stack over REST from threads, recording every answer, so a fault test
can break something while they run and then check what each client was told against what the database holds."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

PROBLEM = "application/problem+json"


@dataclass
class Refusal:
    """A non-2xx answer: its status, whether it said when to retry, and whether it was problem+json."""

    path: str
    status: int
    retry_after: str | None
    problem: bool
    code: str | None


@dataclass
class Load:
    """``writers`` threads remembering distinct texts tagged ``tag`` and ``readers`` threads recalling and reading
    back what was acknowledged, until ``stop()``. ``pause_s`` between one thread's requests keeps the pipeline's
    backlog small on shared cores."""

    url: str
    key: str
    tag: str
    writers: int = 4
    readers: int = 2
    pause_s: float = 0.05
    acknowledged: dict[str, str] = field(default_factory=dict)  # item id -> its text
    refusals: list[Refusal] = field(default_factory=list)
    reads_ok: int = 0
    transport_errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Load:
        self._threads = [threading.Thread(target=self._write, args=(n,), daemon=True) for n in range(self.writers)]
        self._threads += [threading.Thread(target=self._read, args=(n,), daemon=True) for n in range(self.readers)]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> Load:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
        return self

    def acked(self) -> int:
        with self._lock:
            return len(self.acknowledged)

    def statuses(self) -> Counter[int]:
        with self._lock:
            return Counter(r.status for r in self.refusals)

    def _client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30.0, headers={"authorization": f"Bearer {self.key}"})

    def _write(self, writer: int) -> None:
        with self._client() as client:
            n = 0
            while not self._stop.is_set():
                text = f"Load {self.tag}: writer {writer} notes that build {n} of the billing service shipped."
                n += 1
                answer = self._send(client, "POST", "/v1/remember", {"content": text})
                if answer is not None and answer.status_code in (200, 201):
                    with self._lock:
                        self.acknowledged[answer.json()["id"]] = text
                time.sleep(self.pause_s)

    def _read(self, reader: int) -> None:
        rng = random.Random(reader)
        with self._client() as client:
            while not self._stop.is_set():
                with self._lock:
                    known = list(self.acknowledged)
                if known and rng.random() < 0.5:
                    answer = self._send(client, "GET", f"/v1/items/{rng.choice(known)}", None)
                else:
                    answer = self._send(client, "POST", "/v1/recall", {"query": f"billing build {rng.randint(0, 99)}"})
                if answer is not None and answer.status_code == 200:
                    with self._lock:
                        self.reads_ok += 1
                time.sleep(self.pause_s)

    def _send(self, client: httpx.Client, method: str, path: str, body: object) -> httpx.Response | None:
        try:
            answer = client.request(method, path, json=body)
        except httpx.HTTPError as exc:  # the gateway itself never goes away in these tests: worth reporting
            with self._lock:
                self.transport_errors.append(f"{method} {path}: {exc!r}")
            return None
        if answer.status_code >= 300:
            is_problem = answer.headers.get("content-type", "").startswith(PROBLEM)
            refusal = Refusal(
                path.rsplit("/", 1)[0] if path.startswith("/v1/items/") else path,
                answer.status_code,
                answer.headers.get("retry-after"),
                is_problem,
                answer.json().get("code") if is_problem else None,
            )
            with self._lock:
                self.refusals.append(refusal)
        return answer
