"""ENGRAM_WORKER_MODEL_THREADS becomes the OpenMP thread cap of the process before its model loads."""

from __future__ import annotations

import os

import pytest

from engram.config import Settings
from engram.embeddings.model_threads import limit_model_threads


def test_a_positive_count_caps_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    limit_model_threads(1)
    assert os.environ["OMP_NUM_THREADS"] == "1"


def test_zero_leaves_the_librarys_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    limit_model_threads(0)
    assert "OMP_NUM_THREADS" not in os.environ


def test_the_setting_defaults_to_one_thread_and_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_WORKER_MODEL_THREADS", raising=False)
    assert Settings().worker_model_threads == 1
    monkeypatch.setenv("ENGRAM_WORKER_MODEL_THREADS", "-1")
    with pytest.raises(ValueError, match="worker_model_threads"):
        Settings()
