"""Interfaces other than MCP tools (beside `core`, below `services`): a shell over a virtual file tree,
web pages over the services' state, and the computer screen.

May import: `core` only (pages read whatever environment they are given).
"""
