"""The one client for OpenAI-compatible endpoints."""

from compoworld.llm.client import (
    ContextOverflow,
    EndpointError,
    EndpointTimeout,
    LLMClient,
    LLMConfig,
    Reply,
)
from compoworld.llm.profiles import PROFILE_NAMES, PROFILES, Profile, estimate_tokens

__all__ = [
    "PROFILES",
    "PROFILE_NAMES",
    "ContextOverflow",
    "EndpointError",
    "EndpointTimeout",
    "LLMClient",
    "LLMConfig",
    "Profile",
    "Reply",
    "estimate_tokens",
]
