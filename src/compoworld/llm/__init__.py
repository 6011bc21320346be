"""The one client for OpenAI-compatible endpoints (beside the layers that use it: below `services`).

May import: nothing else of compoworld.
"""

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
