"""Tasks (layer 4, with `verify` and `worlds`): the task model and dataset IO, the moves each service
contributes (`tasks.moves`), walks and workflow families, composition, the generator, and the gates.

May import: the layers below (`core`, `services`, `compiler`, `worldmodel`, `interfaces`, `llm`), and
`verify` and `worlds`. Never `agents`, `rollout`, `rewards` or anything above.
"""

from compoworld.tasks.model import Task, load_tasks, save_tasks

__all__ = ["Task", "load_tasks", "save_tasks"]
