"""A model that answers nothing: every place a person reads the answer shows "(empty response)"
(a one-shot question, the REPL, `run`, `chat`, `serve`), never a blank line; the receipt keeps
the answer as it was, "". Real processes against the fake model server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2

from cli_support import clean_env, fake_venice
from cli_support import run_cli as run
from serve_support import served
from venice_terminal_agent.core.wording import EMPTY_RESPONSE

EMPTY = {"text": ""}


def test_the_wording() -> None:
    assert EMPTY_RESPONSE == "(empty response)"


def test_a_one_shot_question_shows_it_and_the_receipt_keeps_the_empty_answer(tmp_path: Path) -> None:
    with fake_venice([EMPTY, EMPTY], tmp_path) as fake:
        plain = run(tmp_path, fake.base_url, "--no-mcp", "hi")
        receipt = run(tmp_path, fake.base_url, "--no-mcp", "--json", "hi")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[0] == EMPTY_RESPONSE
    assert json.loads(receipt.stdout)["answer"] == ""


def test_the_repl_shows_it(tmp_path: Path) -> None:
    with fake_venice([EMPTY], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", stdin="hi\n")
    assert done.returncode == 0, done.stderr
    assert f"› hi\n{EMPTY_RESPONSE}\nstopped: answered" in done.stdout


def test_a_plan_answering_nothing_shows_it(tmp_path: Path) -> None:
    done = run(tmp_path, "http://127.0.0.1:9", "run", "-", stdin='[{"answer": ""}]')
    assert done.returncode == 0, done.stderr
    assert EMPTY_RESPONSE in done.stdout.splitlines()


def test_chat_shows_it(tmp_path: Path) -> None:
    with fake_venice([EMPTY], tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "chat", "--no-mcp", "--db", "bot.db", stdin="hi\n")
    assert done.returncode == 0, done.stderr
    assert f"{EMPTY_RESPONSE}\nstopped: answered · 0 calls" in done.stdout


async def test_the_served_bot_says_it_in_its_reply_text_and_keeps_the_receipt_empty(tmp_path: Path) -> None:
    with fake_venice([EMPTY], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model")
        args = ("--store", str(tmp_path / "bot.db"), "--no-mcp")
        async with (
            asyncio.timeout(60),
            served(tmp_path, *args, env=env) as server,
            httpx2.AsyncClient(base_url=server.url) as http,
        ):
            response = await http.post("/v1/chats/me/messages", json={"text": "hi"})
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["text"].splitlines()[0] == EMPTY_RESPONSE
    assert reply["receipt"]["answer"] == ""
