"""Every process's logs on stderr: one JSON object per line (``ENGRAM_LOG_FORMAT=json``, the default) or a
readable line (``text``, what ``engram up`` gives its children).

A JSON line holds ``time`` (UTC, ISO 8601), ``level``, ``service``, ``logger``, ``message``, ``trace_id`` and
``span_id`` when written inside a span, the ids a call passed as ``extra`` (``event_id``, ``item_id``, …) and
``exception`` (the traceback) when there is one. faststream's and uvicorn's loggers, Python warnings and
uncaught exceptions go through the same handler. Log calls name ids and counts, never memory content, query
text, API keys or secrets.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from types import TracebackType
from typing import Literal

from opentelemetry import trace

LogFormat = Literal["json", "text"]

# ids a log call may attach with ``extra=``; faststream adds ``message_id`` and ``subscriber`` itself
EXTRA_FIELDS = ("event_id", "item_id", "tenant_id", "request_id", "message_id", "subscriber")
# libraries that install their own handlers: their records go to ours instead
ROUTED_LOGGERS = ("faststream", "faststream.access", "uvicorn", "uvicorn.error", "uvicorn.access")


def span_ids() -> tuple[str, str] | None:
    """The current span's trace and span ids (hex), or None outside a span."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


class JsonFormatter(logging.Formatter):
    """One JSON object per record."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = span_ids()
        if ids is not None:
            entry["trace_id"], entry["span_id"] = ids
        for key in EXTRA_FIELDS:
            value = getattr(record, key, None)
            if value not in (None, ""):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``12:00:00.123 INFO    logger: message [trace 4bf9…]`` — for a console a person reads."""

    def __init__(self, service: str) -> None:
        super().__init__("%(asctime)s.%(msecs)03d %(levelname)-7s %(name)s: %(message)s", datefmt="%H:%M:%S")
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        ids = span_ids()
        if ids is None:
            return line
        first, newline, rest = line.partition("\n")
        return f"{first} [trace {ids[0]}]{newline}{rest}"


def formatter(service: str, fmt: LogFormat) -> logging.Formatter:
    if fmt not in ("json", "text"):
        raise ValueError(f"log format must be json or text, got {fmt!r}")
    return JsonFormatter(service) if fmt == "json" else TextFormatter(service)


def configure_logging(service: str, level: str = "INFO", fmt: LogFormat = "json") -> None:
    """Route every log record of the process to one stderr handler in ``fmt``."""
    import faststream  # noqa: F401  (its import installs a handler on "faststream", replaced below)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(service, fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ROUTED_LOGGERS:
        routed = logging.getLogger(name)
        routed.handlers.clear()
        routed.propagate = True
    logging.captureWarnings(True)

    def log_uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        logging.getLogger("engram").critical("uncaught exception", exc_info=(kind, exc, tb))

    sys.excepthook = log_uncaught
