"""The chat page at / in a real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx2
from playwright.async_api import async_playwright, expect

from conftest import HOME_FOLDERS
from serve_support import require, served
from servers.net import free_port, serving


async def test_the_browser_writes_into_the_tests_own_home_never_the_users(own_home: Path) -> None:
    """Chromium keeps crash reports in ~/.config/chromium and dconf its ~/.cache/dconf/user:
    under the suite they land in this test's own HOME (conftest.own_home), the user's untouched."""
    from conftest import REAL_HOME

    chromium = require("chromium")
    assert os.environ["HOME"] == str(own_home) != REAL_HOME
    assert all(os.environ[name].startswith(str(own_home)) for name in HOME_FOLDERS)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            await (await browser.new_page()).goto("about:blank")
        finally:
            await browser.close()
    assert (own_home / ".config" / "chromium").is_dir()  # what it used to write into the real HOME


EVIL = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


async def test_the_page_streams_replies_shows_free_repeats_and_the_wait(tmp_path: Path) -> None:
    chromium = require("chromium")
    (tmp_path / "evil.html").write_text(f"a tool result with markup: {EVIL}")
    args = ("--offline", "--calls", "2", "--store", str(tmp_path / "bot.db"), "--root", str(tmp_path))
    async with served(tmp_path, *args) as server, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = await browser.new_page()
            await page.goto(server.url)
            title = await page.title()
            receipts = page.locator(".receipt")

            async def send(text: str) -> None:
                await page.fill("#text", text)
                await page.press("#text", "Enter")

            await send("read_file path=evil.html")
            await expect(receipts).to_have_count(1)
            await expect(receipts.nth(0)).to_have_text("stopped: answered · 1 call · 1 left this hour")
            await expect(page.locator(".tool").nth(0)).to_have_text('→ read_file({"path":"evil.html"})  ✓')
            answer = page.locator(".bot").nth(0)
            await expect(answer).to_contain_text(f"a tool result with markup: {EVIL}")
            assert await page.locator("#log img, #log script").count() == 0
            assert await page.title() == title  # the markup was shown, never run

            await send("read_file path=evil.html")
            await expect(receipts).to_have_count(2)
            await expect(receipts.nth(1)).to_have_text(
                "same message as before: previous answer (stopped: answered), no call · 1 left this hour"
            )

            await send("list_files path=.")
            await expect(receipts.nth(2)).to_have_text("stopped: answered · 1 call · 0 left this hour")
            await send("read_file path=bot.db")
            await expect(page.locator(".wait")).to_have_text(
                "All 2 tool calls this hour are spent; come back in 1 hour."
            )
            await expect(receipts.nth(3)).to_have_text("not run: no calls left this hour · 0 calls")
            await page.screenshot(
                path=tmp_path / "chat-page.png", full_page=True
            )  # kept with the test's files
        finally:
            await browser.close()


ATTACK = """<!doctype html>
<title>loading</title>
<form id="plain" method="POST" action="{target}" enctype="text/plain" target="plain-sink">
  <input name='{{"text": "list_files path=.", "x": "' value='"}}'>
</form>
<form id="urlencoded" method="POST" action="{target}" target="urlencoded-sink">
  <input name="text" value="list_files path=.">
</form>
<iframe name="plain-sink"></iframe><iframe name="urlencoded-sink"></iframe>
<script>
const target = "{target}";
const body = JSON.stringify({{text: "list_files path=."}});
async function attempt(options) {{
  try {{
    const response = await fetch(target, Object.assign({{method: "POST", body}}, options));
    return response.type === "opaque" ? "sent" : "answered " + response.status;
  }} catch (problem) {{
    return "blocked";
  }}
}}
function submitted(id) {{
  return new Promise(done => {{
    document.querySelector(`iframe[name="${{id}}-sink"]`).onload = () => done(id + " loaded");
    document.getElementById(id).submit();
  }});
}}
(async () => {{
  const results = [
    await attempt({{mode: "no-cors", headers: {{"Content-Type": "text/plain"}}}}),  // no preflight
    await attempt({{headers: {{"Content-Type": "application/json"}}}}),  // a preflight first
    await submitted("plain"),
    await submitted("urlencoded"),
  ];
  document.title = "done: " + results.join(", ");
}})();
</script>
"""


async def test_a_page_from_another_origin_cannot_spend_a_call(tmp_path: Path) -> None:
    """A page served from another loopback origin posts to the API the ways a browser lets it
    without asking the server first (a text/plain fetch, forms) and with JSON (preflighted):
    nothing runs and no call is spent."""
    chromium = require("chromium")
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("a file the tool would list")
    site = tmp_path / "site"
    site.mkdir()
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--root", str(files))
    async with served(tmp_path, *args) as server:
        (site / "attack.html").write_text(ATTACK.format(target=f"{server.url}/v1/chats/victim/messages"))
        port = free_port()
        static = [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(site),
        ]
        async with serving(static, b"Serving HTTP"), async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = await browser.new_page()
                await page.goto(f"http://127.0.0.1:{port}/attack.html")
                await expect(page).to_have_title(
                    "done: sent, blocked, plain loaded, urlencoded loaded", timeout=30_000
                )  # the text/plain fetch and both forms reached the server; the JSON one did not
            finally:
                await browser.close()
        async with httpx2.AsyncClient(base_url=server.url) as http:
            chat = (await http.get("/v1/chats/victim")).json()
        assert chat["calls_left"] == 5 and chat["exchanges"] == []
