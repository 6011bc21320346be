"""Declarative verification: a registry of typed predicates over (s0, s_final, answer) and the verifier."""

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
