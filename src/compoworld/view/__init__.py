"""A local web viewer for tasks, runs and failures (`compoworld view`)."""

from compoworld.view.app import Viewer, view_app

__all__ = ["Viewer", "view_app"]
