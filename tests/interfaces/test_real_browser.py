"""Playwright on headless Chromium drives the web pages (skips where no Chromium is installed)."""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time

import pytest

from compoworld.core.environment import Environment
from compoworld.interfaces.webapp import web_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs Debian's)")


@pytest.fixture
def served():
    import uvicorn

    env = Environment(["browser", "email", "chat", "helpdesk"], seed=6, size="small")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(web_app(env), host="127.0.0.1", port=port, log_level="error"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    yield env, f"http://127.0.0.1:{port}"
    server.should_exit = True
    t.join(5)


def test_a_real_browser_reads_a_page_only_fact_submits_a_form_and_mcp_sees_it(served) -> None:
    env, base = served
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        # a fact only the page shows
        page.goto(f"{base}/accounts")
        page.locator("main a").first.click()  # the first account (the sidebar's apps come before)
        page.wait_for_selector("h2")
        note = page.locator("main p").nth(0).inner_text()
        assert page.locator("h2").inner_text() == "Internal account notes" and len(note) > 10
        assert all(note not in repr(s.snapshot()) for n, s in env.services.items() if n != "browser")
        # submit a form: post in a channel that accepts the user's posts
        page.goto(f"{base}/channels")
        links = [a.get_attribute("href") for a in page.locator("main a").all()]
        posted = False
        for href in links:
            page.goto(base + href)
            page.get_by_label("Message").fill("Typed in Chromium 5521")
            page.get_by_role("button", name="Post").click()
            page.wait_for_load_state()
            if "Typed in Chromium 5521" in page.content():
                posted = True
                break
        assert posted
        browser.close()
    # the change is visible through the MCP tools
    found = env.call("chat__slack_user_search_messages", {"query": "5521"})
    assert found["success"] and re.search("Typed in Chromium 5521", repr(found["data"]))
