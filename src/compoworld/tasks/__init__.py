"""Tasks: the task model and dataset IO, moves and walks, the generator, and the quality gates."""

from compoworld.tasks.model import Task, load_tasks, save_tasks

__all__ = ["Task", "load_tasks", "save_tasks"]
