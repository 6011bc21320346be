"""The one client for OpenAI-compatible endpoints."""

from compoworld.llm.client import EndpointError, EndpointTimeout, LLMClient, LLMConfig, Reply

__all__ = ["EndpointError", "EndpointTimeout", "LLMClient", "LLMConfig", "Reply"]
