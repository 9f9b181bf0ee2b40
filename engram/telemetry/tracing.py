"""OpenTelemetry traces, configured by the standard ``OTEL_*`` environment variables and nothing else.

``configure_tracing(service)`` runs first thing in every process (``engram/runtime/process.py``). It installs a
tracer provider, the exporter and the asyncpg instrumentation only when tracing is asked for:

- ``OTEL_SDK_DISABLED=true``, or ``OTEL_TRACES_EXPORTER=none``: off;
- ``OTEL_TRACES_EXPORTER`` naming ``otlp`` or ``console``, or an ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (the exporter then defaults to ``otlp``): on;
- nothing of that set: off, and nothing is installed — no provider, no instrumentation, no per-call cost.

The OTLP exporter speaks ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``
(``http/protobuf``, the default, or ``grpc``) and reads its endpoint, headers and timeout from the environment
itself; the sampler (``OTEL_TRACES_SAMPLER``), the batch processor (``OTEL_BSP_*``), the propagators
(``OTEL_PROPAGATORS``) and the resource (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``) are the SDK's own.

The rest of Engram asks ``enabled()`` before it wires an instrumentation (the gateway's FastAPI app, the gRPC
channels and servers, the consumers' faststream middleware) and uses the helpers below for the spans no
instrumentation makes (the outbox relay's publish, each consumer's per-message span, the recall stages).
Spans carry ids, names and counts — never memory content, query text or credentials.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.util.types import AttributeValue

log = logging.getLogger(__name__)

TRACER_NAME = "engram"
EXPORTERS = ("otlp", "console")

_state: dict[str, Any] = {"enabled": False, "provider": None, "exporters": []}


def exporter_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The trace exporters the environment asks for (empty: tracing off)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    named = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if not named:
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        named = ["otlp"] if endpoint else []
    if "none" in named:
        return []
    unknown = [n for n in named if n not in EXPORTERS]
    if unknown:
        log.warning("OTEL_TRACES_EXPORTER names exporters Engram does not ship, ignored: %s", ", ".join(unknown))
    return [n for n in named if n in EXPORTERS]


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    ).strip()
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter()
    if protocol not in ("", "http/protobuf"):
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported; using http/protobuf", protocol)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter()


def configure_tracing(service: str, exporter: SpanExporter | None = None) -> bool:
    """Install tracing for the process serving ``service`` when the environment asks for it; return whether
    tracing is on. ``exporter`` (tests) is used in addition to the environment's, spans exported as they end.
    Calling it again adds only exporters it has not seen."""
    processors: list[SimpleSpanProcessor | BatchSpanProcessor] = []
    if exporter is not None:
        if exporter not in _state["exporters"]:
            _state["exporters"].append(exporter)
            processors.append(SimpleSpanProcessor(exporter))
    elif _state["provider"] is None:
        processors = [BatchSpanProcessor(_exporter(name)) for name in exporter_names()]
    if not processors and _state["provider"] is None:
        return False
    provider: TracerProvider | None = _state["provider"]
    if provider is None:
        attributes: dict[str, AttributeValue] = {
            "service.name": os.environ.get("OTEL_SERVICE_NAME") or f"engram-{service}",
            "service.namespace": "engram",
        }
        provider = TracerProvider(resource=Resource.create(attributes))
        trace.set_tracer_provider(provider)
        _state["provider"] = provider
    for processor in processors:
        provider.add_span_processor(processor)
    if not _state["enabled"]:
        from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

        AsyncPGInstrumentor(capture_parameters=False).instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]
        _state["enabled"] = True
    return True


def disable_tracing() -> None:
    """Stop instrumenting what is created from now on (tests; a process never turns tracing off)."""
    if _state["enabled"]:
        from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

        AsyncPGInstrumentor().uninstrument()  # type: ignore[no-untyped-call]
        _state["enabled"] = False


def enabled() -> bool:
    """Whether this process traces (``configure_tracing`` found an exporter)."""
    return bool(_state["enabled"])


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


def traceparent_of(span: Span) -> str:
    """The W3C ``traceparent`` naming ``span`` ("" for an invalid span)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return ""
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def current_traceparent() -> str:
    """The ``traceparent`` of the span in progress when tracing is on, else ""."""
    return traceparent_of(trace.get_current_span()) if enabled() else ""


def context_from(headers: Mapping[str, str] | None = None, traceparent: str = "") -> Context:
    """The trace context carried by message ``headers``, or else by a ``traceparent`` string."""
    carrier = {k.lower(): v for k, v in (headers or {}).items() if isinstance(v, str)}
    if "traceparent" not in carrier and traceparent:
        carrier = {"traceparent": traceparent}
    return propagate.extract(carrier, context=Context())


def inject(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` with the current trace context added (``traceparent``, ``tracestate``)."""
    propagate.inject(headers)
    return headers


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue] | None = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    parent: Context | None = None,
    links: Sequence[Link] = (),
) -> Iterator[Span | None]:
    """A current span ``name`` when tracing is on (the current context's child, or ``parent``'s); nothing at
    all when it is off (yields None)."""
    if not enabled():
        yield None
        return
    with tracer().start_as_current_span(
        name, context=parent, kind=kind, attributes=attributes, links=list(links)
    ) as current:
        yield current


@contextmanager
def within(traceparent: str) -> Iterator[None]:
    """Run the block inside the trace context ``traceparent`` names (a consumer's per-message span), so the
    spans it makes are its children; nothing when tracing is off or the string is empty."""
    if not enabled() or not traceparent:
        yield
        return
    token = otel_context.attach(context_from(traceparent=traceparent))
    try:
        yield
    finally:
        otel_context.detach(token)


def quiet() -> Any:
    """A block whose database and RPC calls make no spans (polling loops, readiness probes): otherwise each
    poll would start a trace of its own."""
    return suppress_instrumentation() if enabled() else nullcontext()
