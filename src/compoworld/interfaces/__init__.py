"""Interfaces other than MCP tools: a shell over a virtual file tree (and, later, web pages)."""
