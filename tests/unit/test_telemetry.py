"""The log formatters and the tracing switch: JSON lines with the span's ids, readable text, and tracing that
installs nothing unless the OTEL_* environment asks for it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic import ValidationError

from engram.config import Settings
from engram.events.relay import destination_template
from engram.runtime.stack import _service_env
from engram.telemetry.logging import JsonFormatter, TextFormatter, formatter
from engram.telemetry.tracing import exporter_names


def record(message: str = "item %s stored", *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("engram.test", logging.WARNING, __file__, 1, message, args or ("i-1",), None)
    made.__dict__.update(extra)
    return made


def test_a_json_line_outside_a_span_has_no_trace_fields() -> None:
    entry = json.loads(JsonFormatter("ingest").format(record(event_id="e-9", unrelated="dropped")))
    assert entry["service"] == "ingest" and entry["level"] == "warning" and entry["logger"] == "engram.test"
    assert entry["message"] == "item i-1 stored" and entry["event_id"] == "e-9"
    assert entry["time"].endswith("+00:00")
    assert "trace_id" not in entry and "span_id" not in entry and "unrelated" not in entry


def test_a_json_line_inside_a_span_carries_its_ids_and_the_exception() -> None:
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("work") as span:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "näive %d", (3,), sys.exc_info())
        line = JsonFormatter("recall").format(failed)
    assert "\n" not in line
    entry = json.loads(line)
    ctx = span.get_span_context()
    assert entry["trace_id"] == f"{ctx.trace_id:032x}" and entry["span_id"] == f"{ctx.span_id:016x}"
    assert entry["message"] == "näive 3"
    assert "RuntimeError: boom" in entry["exception"] and "Traceback" in entry["exception"]


def test_text_lines_are_for_people_and_name_the_trace() -> None:
    plain = TextFormatter("gateway").format(record())
    assert plain.endswith("WARNING engram.test: item i-1 stored") and not plain.startswith("{")
    with TracerProvider().get_tracer("test").start_as_current_span("work") as span:
        traced = TextFormatter("gateway").format(record())
    assert traced.endswith(f"[trace {span.get_span_context().trace_id:032x}]")


def test_the_log_format_is_json_or_text() -> None:
    assert isinstance(formatter("x", "json"), JsonFormatter) and isinstance(formatter("x", "text"), TextFormatter)
    with pytest.raises(ValueError, match="json or text"):
        formatter("x", "yaml")  # type: ignore[arg-type]
    assert Settings().log_format == "json"
    with pytest.raises(ValidationError, match="log_format"):
        Settings(log_format="yaml")  # type: ignore[arg-type]


def test_engram_up_gives_its_services_text_logs_unless_the_format_was_chosen(tmp_path: Path) -> None:
    def env(settings: Settings) -> dict[str, str]:
        return _service_env(settings, tmp_path, "postgresql://x/y", "nats://x", False, (1, 2))

    assert env(Settings())["ENGRAM_LOG_FORMAT"] == "text"
    assert env(Settings(log_format="json"))["ENGRAM_LOG_FORMAT"] == "json"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, []),
        ({"OTEL_SERVICE_NAME": "engram"}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ["otlp"]),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console"}, ["console"]),
        ({"OTEL_TRACES_EXPORTER": "otlp,zipkin"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, []),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, []),
    ],
)
def test_which_exporters_the_environment_asks_for(environ: dict[str, str], expected: list[str]) -> None:
    assert exporter_names(environ) == expected


PROBE = """
import asyncpg, json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from engram.telemetry import tracing
on = tracing.configure_tracing("ingest")
provider = trace.get_tracer_provider()
print(json.dumps({
    "on": on,
    "enabled": tracing.enabled(),
    "sdk": isinstance(provider, TracerProvider),
    "service": provider.resource.attributes.get("service.name") if isinstance(provider, TracerProvider) else None,
    "asyncpg_wrapped": hasattr(asyncpg.connection.Connection.execute, "__wrapped__"),
    "traceparent": tracing.current_traceparent(),
}))
"""


def probe(**otel: str) -> dict[str, object]:
    """``configure_tracing`` in a fresh interpreter with exactly the ``otel`` variables of the OTEL_* family."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | otel
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_without_otel_settings_tracing_installs_nothing() -> None:
    assert probe() == {
        "on": False,
        "enabled": False,
        "sdk": False,
        "service": None,
        "asyncpg_wrapped": False,
        "traceparent": "",
    }
    disabled = probe(OTEL_SDK_DISABLED="true", OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    assert disabled["on"] is False and disabled["sdk"] is False and disabled["asyncpg_wrapped"] is False


def test_an_otlp_endpoint_turns_tracing_on_under_the_service_name() -> None:
    on = probe(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_BSP_SCHEDULE_DELAY="60000")
    assert on["on"] is True and on["enabled"] is True and on["sdk"] is True and on["asyncpg_wrapped"] is True
    assert on["service"] == "engram-ingest"
    named = probe(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_SERVICE_NAME="memory-ingest")
    assert named["service"] == "memory-ingest"


def test_span_names_carry_the_event_type_not_the_tenant() -> None:
    subject = "engram.events.00000000-0000-4000-8000-000000000001.memory.created"
    assert destination_template("engram.events", subject) == "engram.events.*.memory.created"
