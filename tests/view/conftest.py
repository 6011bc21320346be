from __future__ import annotations

import pytest

from tests.view.runs import make_tasks, oracle_run, scripted_run, synthetic_run


@pytest.fixture(scope="session")
def view_data(tmp_path_factory) -> dict:
    """A task file, a run that fails one family (k=2), an oracle run, and a 10,000-episode run."""
    d = tmp_path_factory.mktemp("view")
    tasks = make_tasks(d / "tasks.jsonl")
    fail = sorted({t.meta["family"] for t in tasks})[0]
    return {
        "dir": d,
        "tasks_file": d / "tasks.jsonl",
        "tasks": tasks,
        "fail_family": fail,
        "scripted": scripted_run(d / "tasks.jsonl", tasks, d / "scripted", fail, k=2),
        "oracle": oracle_run(d / "tasks.jsonl", d / "oracle"),
        "big": synthetic_run(d / "big", 10_000, tasks),
    }


@pytest.fixture(scope="session")
def viewer(view_data):
    from compoworld.view import Viewer

    return Viewer(view_data["tasks_file"], [view_data["scripted"], view_data["oracle"], view_data["big"]])


def served(app) -> tuple[object, str]:
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def base_url(viewer):
    from compoworld.view import view_app

    server, url = served(view_app(viewer))
    yield url
    server.should_exit = True
