"""Deterministic business prose for the records a persona's days write (`prose`), and its sentences.

Its own module so the compiled-service skill (`worlds.compiled`) uses it without importing `skills`,
which calls that skill."""

from __future__ import annotations

import random

_SENT = (
    "The team reviewed the numbers and the forecast holds for the quarter.",
    "We agreed to revisit the rollout plan once the pilot group reports back.",
    "Procurement asked for a revised quote with the volume discount applied.",
    "The integration tests passed in staging; production is scheduled next week.",
    "Two open questions remain on data retention and on the support tier.",
    "Finance flagged the invoice terms; net 45 is the most they can accept.",
    "The customer's champion is changing roles, so we need a second sponsor.",
    "Usage grew steadily since the last review, mostly in the reporting module.",
    "Legal returned the redlines with minor comments on liability caps.",
    "We should book a working session with their admins before the cutover.",
    "Training materials are drafted and need one more pass from enablement.",
    "The escalation is contained; the root cause was a misconfigured webhook.",
    "Their budget cycle closes at month end, which sets our deadline.",
    "I attached the action items and owners from our last call.",
    "Onboarding is at the data import step; two of five teams are live.",
    "The renewal quote includes the new seats at last year's rate.",
)


def prose(rng: random.Random, words: int) -> str:
    """Deterministic business prose of about `words` words, in paragraphs."""
    out: list[str] = []
    n = 0
    while n < words:
        para = " ".join(rng.choice(_SENT) for _ in range(3 + rng.randrange(4)))
        out.append(para)
        n += len(para.split())
    return "\n\n".join(out)
