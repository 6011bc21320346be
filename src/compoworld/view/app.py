"""The viewer as a Starlette app: pages, a JSON API for lazy loading, and bundled static assets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from compoworld.view import pages
from compoworld.view.data import RunIndex, TaskCatalog, resolve_tasks_file
from compoworld.view.replay import check_links, conversation, episode_calls, reference_timeline

STATIC = Path(__file__).parent / "static"
MAX_LIMIT = 500  # episodes per API request


class Viewer:
    """What one `compoworld view` serves: a task file (optional) and any number of run directories.

    A run's own task file (its config's `tasks_file`, if it still hashes to `tasks_sha`) is used for
    that run; the given TASKS file is used for the task pages and for runs whose file is not found."""

    def __init__(self, tasks: str | Path | None = None, runs: list[str | Path] | tuple = ()) -> None:
        self.tasks = TaskCatalog(tasks) if tasks else None
        self.runs: dict[str, RunIndex] = {}
        self.catalogs: dict[str, TaskCatalog | None] = {}
        by_path: dict[Path, TaskCatalog] = {self.tasks.path.resolve(): self.tasks} if self.tasks else {}
        for p in runs:
            run = RunIndex(p)
            name, i = run.name, 2
            while name in self.runs:
                name, i = f"{run.name}-{i}", i + 1
            run.name = name
            self.runs[name] = run
            found = resolve_tasks_file(run)
            if found is not None and found not in by_path:
                by_path[found] = TaskCatalog(found)
            self.catalogs[name] = by_path.get(found) if found is not None else self.tasks
        if self.tasks is None:  # no TASKS given: the first run's task file lists the tasks
            self.tasks = next((c for c in self.catalogs.values() if c is not None), None)

    def catalog_for(self, task_id: str, run: str | None = None) -> TaskCatalog | None:
        cats = [self.catalogs.get(run) if run else None, self.tasks, *self.catalogs.values()]
        return next((c for c in cats if c is not None and task_id in c.by_id), None)

    def load(self, task_id: str, run: str | None = None) -> tuple[Any, TaskCatalog | None, str | None]:
        """(task or None, its catalog, why it could not be read): a task whose s0 cannot be rebuilt
        here (a compiled service not loaded, a changed base world) is said on the page, not a 500."""
        from pydantic import ValidationError

        cat = self.catalog_for(task_id, run)
        if cat is None:
            return None, None, f"no task {task_id!r} in the loaded task files"
        try:
            return cat.task(task_id), cat, None
        except (ValueError, KeyError, ValidationError) as e:
            return (
                None,
                cat,
                f"task {task_id!r} of {cat.path.name} cannot be read here: {str(e).splitlines()[0]}",
            )

    def refresh(self) -> None:
        for r in self.runs.values():
            r.refresh()


def _params(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items() if v}


def _int(v: str | None, default: int) -> int:
    try:
        return max(0, int(v)) if v is not None else default
    except ValueError:
        return default


def view_app(viewer: Viewer) -> Starlette:
    def html(body: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(body, status_code=status)

    async def home(request: Request) -> Response:
        return RedirectResponse("/tasks" if viewer.tasks is not None or not viewer.runs else "/runs", 302)

    async def tasks(request: Request) -> Response:
        viewer.refresh()
        return html(pages.tasks_page(viewer.tasks, viewer.runs, _params(request)))

    async def task(request: Request) -> Response:
        tid = request.path_params["task_id"]
        t, cat, why = viewer.load(tid)
        if t is None or cat is None:
            return html(pages.not_found(why or f"no task {tid!r}"), 404 if cat is None else 422)
        return html(pages.task_page(t, cat.by_id[tid], reference_timeline(t), viewer.runs))

    async def runs(request: Request) -> Response:
        viewer.refresh()
        return html(pages.runs_page(viewer.runs, viewer.catalogs))

    async def run(request: Request) -> Response:
        name = request.path_params["run"]
        r = viewer.runs.get(name)
        if r is None:
            return html(pages.not_found(f"no run {name!r}"), 404)
        r.refresh()
        return html(pages.run_page(r, viewer.catalogs.get(name), _params(request)))

    async def episode(request: Request) -> Response:
        name, tid = request.path_params["run"], request.path_params["task_id"]
        r = viewer.runs.get(name)
        row = r.find(tid, _int(request.path_params["sample"], 0)) if r else None
        if r is None or row is None:
            return html(
                pages.not_found(f"no episode {tid!r} #{request.path_params['sample']} in run {name!r}"), 404
            )
        ep = r.episode(row)
        t, _, why = viewer.load(tid, name)  # without its task, the episode shows as recorded
        calls = episode_calls(t, ep)
        timeline = reference_timeline(t) if t is not None else None
        links = check_links(t.rubric, calls) if t is not None else {}
        return html(pages.episode_page(r, row, ep, t, conversation(ep, calls), timeline, links, why))

    async def compare(request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")
        if a not in viewer.runs or b not in viewer.runs:
            return html(
                pages.not_found(f"compare needs two loaded runs (?a=RUN&b=RUN), got {a!r} and {b!r}"), 404
            )
        viewer.refresh()
        return html(
            pages.compare_page(viewer.runs[a], viewer.runs[b], viewer.catalogs.get(a), viewer.catalogs.get(b))
        )

    async def api_episodes(request: Request) -> Response:
        name = request.path_params["run"]
        r = viewer.runs.get(name)
        if r is None:
            return JSONResponse({"error": f"no run {name!r}"}, status_code=404)
        r.refresh()
        p = _params(request)
        offset, limit = _int(p.get("offset"), 0), min(_int(p.get("limit"), 50), MAX_LIMIT)
        cat = viewer.catalogs.get(name)
        rows, total = pages.episode_rows(r, cat, p, offset, limit)
        out: dict[str, Any] = {"total": total, "offset": offset, "episodes": [x.as_json() for x in rows]}
        if p.get("html"):
            out["html"] = "".join(pages.episode_tr(r, x, cat) for x in rows)
        return JSONResponse(out)

    async def api_tasks(request: Request) -> Response:
        if viewer.tasks is None:
            return JSONResponse({"total": 0, "tasks": []})
        p = _params(request)
        run_ = viewer.runs.get(p.get("run") or "") or next(iter(viewer.runs.values()), None)
        rows, facets = pages.filter_tasks(viewer.tasks, run_, p)
        offset, limit = _int(p.get("offset"), 0), min(_int(p.get("limit"), 50), MAX_LIMIT)
        return JSONResponse(
            {
                "total": len(rows),
                "facets": facets,
                "tasks": [x.as_json() for x in rows[offset : offset + limit]],
            }
        )

    async def api_run(request: Request) -> Response:
        from compoworld.view.data import run_metrics

        name = request.path_params["run"]
        r = viewer.runs.get(name)
        if r is None:
            return JSONResponse({"error": f"no run {name!r}"}, status_code=404)
        r.refresh()
        return JSONResponse(run_metrics(r, viewer.catalogs.get(name)))

    return Starlette(
        routes=[
            Route("/", home),
            Route("/tasks", tasks),
            Route("/tasks/{task_id:path}", task),
            Route("/runs", runs),
            Route("/runs/{run}", run),
            Route("/runs/{run}/episodes/{task_id}/{sample}", episode),
            Route("/compare", compare),
            Route("/api/runs/{run}/episodes", api_episodes),
            Route("/api/runs/{run}", api_run),
            Route("/api/tasks", api_tasks),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
    )
