"""The micro-batcher's rules, with a stand-in model whose calls the test holds open: who goes in which batch,
in which order the results come back, and what an error or a cancellation does to the other callers."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from engram.embeddings.batching import MicroBatcher


def vector_of(text: str) -> np.ndarray:
    return np.array([float(len(text)), float(sum(map(ord, text)))], dtype=np.float32)


class HeldModel:
    """Records each call's texts; a call waits until the test releases it (or every call, with release())."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.gates: list[asyncio.Event] = []
        self.open = False
        self.fail_on = fail_on
        self.new_call = asyncio.Event()

    async def embed_many(self, texts: list[str]) -> list[np.ndarray]:
        self.calls.append(list(texts))
        self.new_call.set()
        gate = asyncio.Event()
        self.gates.append(gate)
        if not self.open:
            await gate.wait()
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError(f"model failed on {self.fail_on}")
        return [vector_of(t) for t in texts]

    def release(self, call: int | None = None) -> None:
        if call is None:
            self.open = True
            for gate in self.gates:
                gate.set()
        else:
            self.gates[call].set()

    async def called(self, n: int) -> None:
        while len(self.calls) < n:
            self.new_call.clear()
            await self.new_call.wait()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_lone_query_goes_to_the_model_at_once_and_gets_its_own_vector() -> None:
    model = HeldModel()
    model.release()
    batcher = MicroBatcher(model.embed_many, max_batch=8)
    vector = await batcher.embed("who moved to Lisbon?")
    assert model.calls == [["who moved to Lisbon?"]]
    np.testing.assert_array_equal(vector, vector_of("who moved to Lisbon?"))


async def test_queries_arriving_while_the_model_is_busy_go_in_one_next_batch_in_order() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=8)
    first = asyncio.create_task(batcher.embed("first"))
    await model.called(1)
    later = [asyncio.create_task(batcher.embed(f"query {i}")) for i in range(5)]
    await settle()
    assert model.calls == [["first"]]  # the five wait: the only slot is busy
    model.release()
    results = await asyncio.gather(first, *later)
    assert model.calls == [["first"], [f"query {i}" for i in range(5)]]
    for text, vector in zip(["first"] + [f"query {i}" for i in range(5)], results, strict=True):
        np.testing.assert_array_equal(vector, vector_of(text))


async def test_a_batch_never_exceeds_the_largest_size() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=3)
    first = asyncio.create_task(batcher.embed("first"))
    await model.called(1)
    later = [asyncio.create_task(batcher.embed(f"q{i}")) for i in range(7)]
    await settle()
    model.release()
    await asyncio.gather(first, *later)
    assert model.calls == [["first"], ["q0", "q1", "q2"], ["q3", "q4", "q5"], ["q6"]]


async def test_two_slots_run_two_calls_at_once() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=8, slots=2)
    a = asyncio.create_task(batcher.embed("a"))
    await model.called(1)
    b = asyncio.create_task(batcher.embed("b"))
    await model.called(2)  # the second slot took b while a's call still runs
    c, d = asyncio.create_task(batcher.embed("c")), asyncio.create_task(batcher.embed("d"))
    await settle()
    assert model.calls == [["a"], ["b"]]  # both slots busy: c and d wait
    model.release(1)
    await model.called(3)
    assert model.calls == [["a"], ["b"], ["c", "d"]]
    model.release()
    for text, task in zip("abcd", (a, b, c, d), strict=True):
        np.testing.assert_array_equal(await task, vector_of(text))


async def test_an_error_fails_only_the_callers_of_its_batch() -> None:
    model = HeldModel(fail_on="bad")
    batcher = MicroBatcher(model.embed_many, max_batch=2)
    first = asyncio.create_task(batcher.embed("first"))
    await model.called(1)
    in_failing = [asyncio.create_task(batcher.embed(t)) for t in ("bad", "unlucky")]
    in_next = asyncio.create_task(batcher.embed("fine"))
    await settle()
    model.release()
    np.testing.assert_array_equal(await first, vector_of("first"))
    for task in in_failing:
        with pytest.raises(RuntimeError, match="model failed on bad"):
            await task
    np.testing.assert_array_equal(await in_next, vector_of("fine"))
    assert model.calls == [["first"], ["bad", "unlucky"], ["fine"]]
    # and the batcher keeps serving afterwards
    np.testing.assert_array_equal(await batcher.embed("after"), vector_of("after"))


async def test_a_caller_cancelled_while_queued_costs_no_model_time_and_the_others_are_served() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=8)
    first = asyncio.create_task(batcher.embed("first"))
    await model.called(1)
    gone = asyncio.create_task(batcher.embed("gone"))
    kept = asyncio.create_task(batcher.embed("kept"))
    await settle()
    gone.cancel()
    await settle()
    model.release()
    np.testing.assert_array_equal(await kept, vector_of("kept"))
    await first
    assert gone.cancelled()
    assert model.calls == [["first"], ["kept"]]


async def test_a_caller_cancelled_while_its_batch_runs_leaves_the_batch_to_finish_for_the_others() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=8)
    first = asyncio.create_task(batcher.embed("first"))
    await model.called(1)
    gone = asyncio.create_task(batcher.embed("gone"))
    kept = asyncio.create_task(batcher.embed("kept"))
    await settle()
    model.release(0)
    await model.called(2)  # the batch ["gone", "kept"] is in the model
    gone.cancel()
    await settle()
    model.release()
    np.testing.assert_array_equal(await kept, vector_of("kept"))
    await first
    assert gone.cancelled()
    assert model.calls == [["first"], ["gone", "kept"]]
    np.testing.assert_array_equal(await batcher.embed("again"), vector_of("again"))


async def test_a_model_returning_the_wrong_number_of_vectors_fails_that_batch() -> None:
    async def short(texts: list[str]) -> list[np.ndarray]:
        return [vector_of(t) for t in texts[:-1]]

    batcher = MicroBatcher(short, max_batch=4)
    with pytest.raises(RuntimeError, match="returned 0 vectors for 1 texts"):
        await batcher.embed("alone")


async def test_close_waits_for_the_queued_batches() -> None:
    model = HeldModel()
    batcher = MicroBatcher(model.embed_many, max_batch=8)
    tasks = [asyncio.create_task(batcher.embed(t)) for t in ("a", "b")]
    await model.called(1)
    closing = asyncio.create_task(batcher.close())
    await settle()
    assert not closing.done()
    model.release()
    await closing
    assert all(task.done() and not task.cancelled() for task in tasks)


def test_sizes_below_one_are_refused() -> None:
    with pytest.raises(ValueError):
        MicroBatcher(HeldModel().embed_many, max_batch=0)
    with pytest.raises(ValueError):
        MicroBatcher(HeldModel().embed_many, max_batch=4, slots=0)
