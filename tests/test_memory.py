"""Memory that does not grow without bound: the bot's per-chat agents, the pager's pages, and a
store that is closed when `aclose` returns."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from venice_terminal_agent import Bot, ToolError
from venice_terminal_agent.bot import bot as bot_module
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.core.receipt import Exit, Receipt


class Echo:
    """A stand-in agent: answers with the question."""

    async def ask(self, question: str, *, events=None, budget=None) -> Receipt:
        return Receipt(steps=(), stopped_because=Exit.ANSWERED, answer=question)


async def test_the_bot_keeps_a_capped_number_of_per_chat_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bot_module, "MAX_CHATS_KEPT", 3)
    made: list[str] = []

    def agent_for(chat: str) -> Echo:
        made.append(chat)
        return Echo()

    async with Bot(agent=agent_for) as bot:
        for n in range(10):
            await bot.respond("hi", f"chat{n}")
        await bot.respond("hi again", "chat9")  # a recent chat keeps its agent
        await bot.respond("hi again", "chat0")  # an old one was forgotten: a new agent
        assert len(bot._agents) <= 3
    assert made == [f"chat{n}" for n in range(10)] + ["chat0"]


def test_pages_are_capped_oldest_first_and_an_evicted_id_is_refused_clearly() -> None:
    pager = Pager(100, max_chars=1_000)
    first = pager.cut("a" * 500)  # pages 1-5
    assert "page id" in first or "page ids" in first
    pager.cut("b" * 500)  # pages 6-10: over the cap, the oldest go
    assert pager.get(10).startswith("b")
    with pytest.raises(ToolError, match="page 2 was dropped to save memory"):
        pager.get(2)
    with pytest.raises(ToolError, match="no page with id 99"):
        pager.get(99)


def test_clear_and_rollback_drop_their_pages() -> None:
    pager = Pager(100)
    pager.cut("a" * 300)  # pages 1-3
    mark = pager.next_id
    pager.cut("b" * 300)  # pages 4-6, of a question that is rolled back
    pager.forget(since=mark)
    assert len(pager) == 3 and pager.get(3).startswith("a")
    with pytest.raises(ToolError):
        pager.get(4)
    pager.clear()
    assert len(pager) == 0


async def test_a_copy_of_the_store_right_after_aclose_holds_every_write(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    async with Bot({"echo": lambda text: text}, db=path) as bot:
        for n in range(20):
            await bot.respond(f"echo text=m{n}", f"chat{n}")
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)  # the file alone, without its -wal: only what was checkpointed
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 20
