"""The e2e fixture: one stack started exactly as `engram up` does, shared by a test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engram.runtime.ports import free_port
from tests.support.stack import Stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(home=tmp_path_factory.mktemp("e2e") / "home", port=free_port()).start()
    yield running
    running.stop()
