"""Serving: environments over MCP (the agent boundary) and an HTTP control API (the trainer boundary)."""
