"""Serving (layer 6): environments over MCP (the agent boundary) and an HTTP control API (the trainer
boundary), with the router in front of many servers.

May import: every layer below. Never `cli`.
"""
