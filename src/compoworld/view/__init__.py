"""A local web viewer for tasks, runs and failures (layer 6, `compoworld view`).

May import: every layer below. Never `cli`.
"""

from compoworld.view.app import Viewer, view_app

__all__ = ["Viewer", "view_app"]
