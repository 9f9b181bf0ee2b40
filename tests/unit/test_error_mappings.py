"""Every error class has its place at both edges: a gRPC status in engram/rpc/errors.py and an HTTP status in the
gateway's problems table. A new EngramError subclass added without one fails here."""

from __future__ import annotations

import importlib
import pkgutil

import grpc

import engram
import engram.errors
import services
from engram.errors import EngramError, NotFound, PermissionDenied, most_specific
from engram.rpc.errors import GRPC_STATUS
from services.gateway.problems import HTTP_STATUS, http_status

# Raised and reported by the CLI or at process start only (migrations, the ENGRAM_HOME lock, a setting a service
# needs, a port a server cannot listen on): no servicer or route raises them, and were one to, it would cross
# as the EngramError it is.
NEVER_SERVED = {
    "engram.db.migrate.MigrationError",
    "engram.runtime.home_lock.HomeInUseError",
    "engram.config.SettingsError",
    "engram.runtime.ports.CannotListen",
}


def _all_subclasses() -> set[type[EngramError]]:
    for package in (engram, services):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found: set[type[EngramError]] = set()
    todo = [EngramError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_hierarchy_in_engram_errors_is_mapped_at_both_edges() -> None:
    defined = {
        value for value in vars(engram.errors).values() if isinstance(value, type) and issubclass(value, EngramError)
    }
    assert len(defined) == 8  # positive control: the walk finds the classes
    assert defined <= set(GRPC_STATUS), defined - set(GRPC_STATUS)
    assert defined <= set(HTTP_STATUS), defined - set(HTTP_STATUS)


def test_every_subclass_anywhere_is_mapped_or_never_served() -> None:
    subclasses = {cls for cls in _all_subclasses() if not cls.__module__.startswith("tests.")}
    assert {_name(cls) for cls in subclasses} >= NEVER_SERVED  # positive control: the walk finds them
    unmapped = {_name(cls) for cls in subclasses if cls not in GRPC_STATUS or cls not in HTTP_STATUS}
    assert unmapped == NEVER_SERVED


def test_each_grpc_status_stands_for_one_class() -> None:
    """The gateway falls back on the status when the class name is missing: it must name one class."""
    statuses = list(GRPC_STATUS.values())
    assert len(set(statuses)) == len(statuses)
    assert GRPC_STATUS[EngramError] == grpc.StatusCode.INTERNAL


def test_the_most_specific_class_wins() -> None:
    class ReadOnly(PermissionDenied):
        code = "workspace_read_only"

    class Deeper(ReadOnly):
        pass

    assert most_specific(GRPC_STATUS, Deeper) == grpc.StatusCode.PERMISSION_DENIED
    assert http_status(Deeper) == (403, "Forbidden")
    assert http_status(NotFound) == (404, "Not found")
    assert most_specific({EngramError: "base", ReadOnly: "read-only"}, Deeper) == "read-only"
    assert most_specific({EngramError: "base", ReadOnly: "read-only"}, NotFound) == "base"


def test_the_core_errors_know_no_transport() -> None:
    for cls in GRPC_STATUS:
        assert not hasattr(cls, "http_status") and not hasattr(cls, "title")
