"""The questions bench/latency.py asks of its synthetic memories (people, places and things of an office), in
its recall phase; bench/query_embedding.py and bench/vector_filter.py ask them too, and the tests of the recall
process's query path embed them."""

from __future__ import annotations

QUERIES = [
    "who looks after the billing service?",
    "what does Grace like to drink?",
    "problems with the VPN",
    "who moved to Lisbon?",
    "which office owns the staging cluster?",
    "what can't be used on Fridays?",
    "who manages the onboarding checklist?",
    "hardware key issues in Oslo",
]
