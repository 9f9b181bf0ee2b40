"""The gateway fuzzed against its own OpenAPI document (schemathesis), on the stack as `engram up` starts it, with
the development admin key: whatever is sent, no answer is a 5xx, and every 4xx is problem+json.

Generation covers valid requests and invalid ones (wrong types, missing fields, out-of-range values) for every
operation, a bounded number of examples each so the run fits in the suite."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode

from engram.runtime.ports import free_port
from tests.support.stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

EXAMPLES_PER_OPERATION = 8  # valid and as many invalid, per operation: about 650 requests
PROBLEM = "application/problem+json"
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    derandomize=True,  # the same requests every run: a failure here is reproducible, not luck
    suppress_health_check=list(HealthCheck),
)


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
        response = case.call(base_url=fuzzed.url, headers=auth, timeout=30)
        sent[response.status_code // 100 * 100] += 1
        sent_ = f"query={case.query} body={str(case.body)[:200]}"
        where = f"{case.method} {case.formatted_path} {sent_} -> {response.status_code}: {response.text[:200]}"
        if response.status_code >= 500:
            wrong.append(where)
        elif response.status_code >= 400:
            headers = {name.lower(): values for name, values in response.headers.items()}
            is_problem = headers.get("content-type", [""])[0].startswith(PROBLEM)
            if not is_problem or not {"type", "title", "status", "code"} <= set(response.json()):
                wrong.append(f"not problem+json: {where}")

    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 30  # positive control: the document lists the API
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run = FUZZ_SETTINGS(given(case=operation.as_strategy(generation_mode=mode))(lambda case: check(case)))
            try:
                run()
            except Unsatisfiable:  # nothing to get wrong: an operation without parameters or body
                nothing_invalid.append(f"{operation.label} ({mode.value})")
    print(f"fuzzed: {dict(sent)} answers; no invalid request to make for {nothing_invalid}")
    assert not [label for label in nothing_invalid if "positive" in label]
    assert sent[200] > 0 and sent[400] > 0  # both kinds of request reached the services
    assert not wrong, "\n".join(wrong[:20])
