"""Declarative verification (layer 4, with `tasks` and `worlds`): a registry of typed predicates over
(s0, s_final, answer) and the verifier.

May import: the layers below; `tasks.model` only to read a task given as plain data (the one call up,
lazy, named in pyproject.toml's contracts). Never `agents` or anything above.
"""

from compoworld.verify.predicates import PREDICATES, CheckContext, predicate
from compoworld.verify.verifier import CheckResult, VerifyResult, verify, verify_checks

__all__ = [
    "PREDICATES",
    "CheckContext",
    "CheckResult",
    "VerifyResult",
    "predicate",
    "verify",
    "verify_checks",
]
