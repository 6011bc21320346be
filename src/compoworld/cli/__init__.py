"""The `compoworld` command (layer 7, the top): Typer + Rich over every layer below.

Owns the process's edges: `--manifests` (or COMPOWORLD_MANIFESTS, read only here) builds the
`Library` the command runs on.
"""
