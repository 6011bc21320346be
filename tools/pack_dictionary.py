"""Build the dictionary that packed task lines are compressed with (`tasks.model.pack_line`).

A task line packs its bulky fields (s0's patch, rubric, reference, graph, traps, meta) into one
compressed stream. A dictionary holds what most tasks repeat (keys, predicate names, templates of
policy pages, messages and sheets), so each line starts with it "already seen". A dictionary is
frozen once released: lines name it by their prefix, and a new one gets a new name beside the old.

- `z3` (written now): Zstandard with a 112 KiB dictionary trained by zstd's own trainer (COVER)
  on packed JSON in `z2`'s grid form; about 40% fewer bytes than `z1`/`z2`, at a third of the time.
- `z1` (read only; `z2` is the same stream with sheet cells as grids): zlib with a 32 KiB preset
  dictionary of the pieces a quarter of the tasks share, built by this tool's first version.

Run from the repository root:

    python tools/pack_dictionary.py src/compoworld/tasks/pack_z3.zdict

It samples tasks of every tier and size from seeds no test or benchmark uses."""

from __future__ import annotations

import sys

import orjson
import zstandard

from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import PACK_PLAIN, Task, _grids

SIZE = 112 * 1024


def samples() -> list[bytes]:
    out = []
    for settings, seeds in (
        (Settings(k=5, difficulty="hard"), range(9000, 9012)),
        (Settings(k=5, difficulty="hard", size="default"), range(9050, 9052)),
        (Settings(k=4, difficulty="medium"), range(9100, 9106)),
        (Settings(k=3, difficulty="easy"), range(9200, 9206)),
        (Settings(k=7), range(9250, 9252)),
        (Settings(), range(9300, 9304)),
    ):
        for seed in seeds:
            for index in range(8):
                try:
                    task = Task.model_validate(generate_task(seed, index, settings))
                except Rejected:
                    continue
                line = orjson.loads(task.to_line(pack=False))
                rest = {k: v for k, v in line.items() if k not in PACK_PLAIN}
                out.append(orjson.dumps(_grids(rest), option=orjson.OPT_SORT_KEYS))
    return out


def build(blobs: list[bytes]) -> bytes:
    # one thread and fixed parameters: the same samples give the same dictionary
    return zstandard.train_dictionary(SIZE, blobs, k=1024, d=8, level=19, threads=0).as_bytes()


if __name__ == "__main__":
    data = build(samples())
    with open(sys.argv[1], "wb") as f:
        f.write(data)
    print(f"{len(data)} bytes -> {sys.argv[1]}")
