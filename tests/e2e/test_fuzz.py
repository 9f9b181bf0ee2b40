"""The gateway fuzzed against its own OpenAPI document (schemathesis), on the stack as `engram up` starts it, with
the development admin key: whatever is sent, no answer is a 5xx, and every 4xx is problem+json.

Generation covers valid requests and invalid ones (wrong types, missing fields, out-of-range values) for every
operation, a bounded number of examples each so the run fits in the suite.

Wider sweeps, out of band, without changing the suite's default (8 examples per operation and mode, derandomized:
the same requests every run):

    ENGRAM_FUZZ_EXAMPLES=150 ENGRAM_FUZZ_SEED=random nice -n 19 pytest -q -s tests/e2e/test_fuzz.py

``ENGRAM_FUZZ_EXAMPLES`` is the number of examples per operation and generation mode (default 8);
``ENGRAM_FUZZ_SEED`` is unset for the derandomized run, an integer to replay a seed, or ``random`` for a fresh one;
``ENGRAM_FUZZ_CONFORMANCE=1`` also checks each answer below 500 against its documented status codes and schema
(schemathesis's ``status_code_conformance`` and ``response_schema_conformance``).
The seed in use is printed (run with ``-s``) and named in the failure message, so any failure can be replayed
with ``ENGRAM_FUZZ_SEED=<that seed>`` and the same ``ENGRAM_FUZZ_EXAMPLES``."""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode
from schemathesis.checks import response_schema_conformance, status_code_conformance
from schemathesis.core.failures import FailureGroup

from engram.runtime.ports import free_port
from tests.support.stack import Stack


def _seed(value: str | None) -> int | None:
    """The seed ENGRAM_FUZZ_SEED asks for: None (derandomized), an integer, or a fresh one for ``random``."""
    if not value:
        return None
    if value == "random":
        return random.SystemRandom().randrange(2**32)
    return int(value)


EXAMPLES_PER_OPERATION = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES") or 8)  # 8: valid and invalid, ~650 requests
SEED = _seed(os.environ.get("ENGRAM_FUZZ_SEED"))
CONFORMANCE = os.environ.get("ENGRAM_FUZZ_CONFORMANCE") == "1"
PROBLEM = "application/problem+json"
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    derandomize=SEED is None,  # by default the same requests every run: a failure here is reproducible, not luck
    suppress_health_check=list(HealthCheck),
)
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600 * max(1, EXAMPLES_PER_OPERATION // 8))]
RUN = f"examples={EXAMPLES_PER_OPERATION} seed={'derandomized' if SEED is None else SEED} conformance={CONFORMANCE}"


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # no rate limit in the way: the fuzzer's requests come from one principal, hundreds a minute
    unlimited = {
        "ENGRAM_RATE_LIMIT_REMEMBER_PER_MINUTE": "1000000",
        "ENGRAM_RATE_LIMIT_RECALL_PER_MINUTE": "1000000",
        "ENGRAM_IP_RATE_LIMIT_PER_MINUTE": "1000000",  # every client here is 127.0.0.1
    }
    stack = Stack(home=tmp_path_factory.mktemp("fuzz") / "home", port=free_port(), extra_env=unlimited).start()
    yield stack
    stack.stop()


def test_no_request_gets_a_5xx_and_every_4xx_is_a_problem(fuzzed: Stack) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/openapi.json")
    auth = {"authorization": f"Bearer {fuzzed.dev_key}"}
    wrong: list[str] = []
    sent: Counter[int] = Counter()
    nothing_invalid: list[str] = []

    def check(case: Case) -> None:
        try:
            response = case.call(base_url=fuzzed.url, headers=auth, timeout=30)
        except requests.RequestException as error:  # no answer at all (a hang, a dropped connection) is wrong too
            wrong.append(f"no answer: {case.method} {case.formatted_path} body={str(case.body)[:200]}: {error!r}")
            return
        sent[response.status_code // 100 * 100] += 1
        sent_ = f"query={case.query} body={str(case.body)[:200]}"
        where = f"{case.method} {case.formatted_path} {sent_} -> {response.status_code}: {response.text[:200]}"
        if response.status_code >= 500:
            wrong.append(where)
            return
        if CONFORMANCE:
            try:
                case.validate_response(response, checks=[status_code_conformance, response_schema_conformance])
            except FailureGroup as failures:
                for failure in failures.exceptions:
                    wrong.append(f"not as documented ({getattr(failure, 'title', type(failure).__name__)}): {where}")
        if response.status_code >= 400:
            headers = {name.lower(): values for name, values in response.headers.items()}
            is_problem = headers.get("content-type", [""])[0].startswith(PROBLEM)
            if not is_problem or not {"type", "title", "status", "code"} <= set(response.json()):
                wrong.append(f"not problem+json: {where}")

    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 30  # positive control: the document lists the API
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run = FUZZ_SETTINGS(given(case=operation.as_strategy(generation_mode=mode))(lambda case: check(case)))
            if SEED is not None:
                run = seed(SEED)(run)
            try:
                run()
            except Unsatisfiable:  # nothing to get wrong: an operation without parameters or body
                nothing_invalid.append(f"{operation.label} ({mode.value})")
    print(f"fuzzed ({RUN}): {dict(sent)} answers; no invalid request to make for {nothing_invalid}")
    print("\n".join(wrong))
    assert not [label for label in nothing_invalid if "positive" in label]
    assert sent[200] > 0 and sent[400] > 0  # both kinds of request reached the services
    assert not wrong, f"{len(wrong)} wrong answers ({RUN}):\n" + "\n".join(wrong[:20])
