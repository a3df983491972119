"""The sessions file (store/sessions.py) on its own: a file of its own kind, saves that never
interleave, names by prefix, nothing secret written."""

from __future__ import annotations

from pathlib import Path

import pytest

from venice_terminal_agent.core.errors import StoreError
from venice_terminal_agent.store.sessions import Conflict, Save, SessionStore
from venice_terminal_agent.store.sqlite import Store

SYSTEM = {"role": "system", "content": "be brief"}


def conversation(*turns: str) -> list[dict]:
    messages: list[dict] = [SYSTEM]
    for turn in turns:
        messages += [{"role": "user", "content": turn}, {"role": "assistant", "content": f"re {turn}"}]
    return messages


async def test_the_bot_store_is_not_taken_for_a_sessions_file_nor_the_other_way(tmp_path: Path) -> None:
    bot = tmp_path / "bot.db"
    async with Store(bot):
        pass
    with pytest.raises(StoreError, match="another program"):
        await SessionStore(bot).open()
    sessions = tmp_path / "sessions.db"
    async with SessionStore(sessions):
        pass
    with pytest.raises(StoreError, match="another program"):
        await Store(sessions).open()


async def test_a_save_built_on_an_older_state_is_refused_never_interleaved(tmp_path: Path) -> None:
    async with SessionStore(tmp_path / "s.db") as first, SessionStore(tmp_path / "s.db") as second:
        await first.save(
            "abc", Save(conversation("one"), 0, "one", {"stopped_because": "answered"}, folder="/f")
        )
        await first.save("abc", Save(conversation("one", "two"), 3, "two", {}, folder="/f"))
        with pytest.raises(Conflict):  # the second process still thinks the session has 3 messages
            await second.save("abc", Save(conversation("one", "three"), 3, "three", {}, folder="/f"))
        session = await second.load("abc")
        assert session.messages == conversation("one", "two")
        assert [item["question"] for item in session.receipts] == ["one", "two"]
        assert session.info.questions == 2 and session.info.title == "one"


async def test_a_session_is_found_by_a_unique_prefix_or_as_this_folders_latest(tmp_path: Path) -> None:
    async with SessionStore(tmp_path / "s.db") as store:
        await store.save("aa11", Save(conversation("x"), 0, "x", {}, folder="/a"), now=1.0)
        await store.save("aa22", Save(conversation("y"), 0, "y", {}, folder="/b"), now=2.0)
        assert (await store.find("aa1")).id == "aa11"
        with pytest.raises(StoreError, match="more than one session"):
            await store.find("aa")
        assert (await store.find("latest", "/a")).id == "aa11"
        assert (await store.find("latest")).id == "aa22"
        with pytest.raises(StoreError, match="no saved session for /c yet"):
            await store.find("latest", "/c")


async def test_secrets_are_masked_in_everything_written(tmp_path: Path) -> None:
    secret = "sk-very-secret-777"
    path = tmp_path / "s.db"
    async with SessionStore(path, secrets=[secret]) as store:
        messages = [
            SYSTEM,
            {"role": "user", "content": f"key {secret}"},
            {"role": "assistant", "content": secret},
        ]
        await store.save("abc", Save(messages, 0, f"key {secret}", {"answer": secret}, folder="/f"))
        await store.retitle("abc", f"about {secret}")
        session = await store.load("abc")
    assert session.messages[1] == {"role": "user", "content": "key ***"}
    assert session.info.title == "about ***"
    assert not holds(tmp_path, secret)


def holds(folder: Path, text: str) -> bool:
    return any(text.encode() in file.read_bytes() for file in folder.iterdir())


def test_a_resumed_pager_gives_new_ids_and_says_old_ones_expired() -> None:
    from venice_terminal_agent.core.pager import Pager
    from venice_terminal_agent.core.toolbox import ToolError

    pager = Pager(100)
    pager.expire_until(4)  # the session had handed out pages 1 to 3
    first = pager.cut("x" * 250)
    assert "id 4" in first  # never an id the stored conversation already names
    with pytest.raises(ToolError, match="page 2 has expired"):
        pager.get(2)
    assert pager.get(5).startswith("x")


async def test_a_conversation_whose_session_moved_on_elsewhere_is_saved_as_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agents on one session whose claim did not stop them (the second started before the
    first saved): the second's save is refused as built on an older state, and its whole
    conversation becomes a new session with a line that says so."""
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.fronts import saved_sessions as saving
    from venice_terminal_agent.model import VeniceClient
    from venice_terminal_agent.testing import MockVenice

    monkeypatch.setattr(saving, "sessions_path", lambda: tmp_path / "s.db")
    said: list[str] = []

    def saver(client: VeniceClient, store: SessionStore) -> saving.SavingAgent:
        agent = Agent(client, FunctionToolbox({}), AgentOptions(model="fake-model"))
        opened = saving.Opened(store, "shared")
        return saving.SavingAgent(agent, opened, enabled=True, base_url="http://x", warn=said.append)

    async with MockVenice([{"text": "to A"}, {"text": "to B"}]) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            first, second = (
                saver(client, SessionStore(tmp_path / "s.db")),
                saver(client, SessionStore(tmp_path / "s.db")),
            )
            await first.ask("from A")
            await second.ask("from B")
            await first.close()
            await second.close()
    assert second.id != "shared"
    assert said == [f"session shared went on in another terminal: this conversation is saved as {second.id}"]
    async with SessionStore(tmp_path / "s.db") as store:
        mine, theirs = await store.load("shared"), await store.load(second.id)
    assert [m["content"] for m in mine.messages[1:]] == ["from A", "to A"]
    assert [m["content"] for m in theirs.messages[1:]] == ["from B", "to B"]
    assert theirs.info.title == "from B"


async def test_a_resumed_conversation_saved_apart_keeps_the_receipts_it_went_on_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two terminals resumed one session of one question; the first saved its next question,
    so the second's goes on in a fork: the fork holds the session as the second terminal saw
    it (its messages and its one earlier receipt) and then its own question, not the first
    terminal's question and not a history without the receipts it had."""
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.fronts import saved_sessions as saving
    from venice_terminal_agent.model import VeniceClient
    from venice_terminal_agent.testing import MockVenice

    path = tmp_path / "s.db"
    monkeypatch.setattr(saving, "sessions_path", lambda: path)
    async with SessionStore(path) as store:
        earlier = {"stopped_because": "answered", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
        await store.save("shared", Save(conversation("zero"), 0, "zero", earlier, folder="/f"))
    said: list[str] = []

    async def saver(client: VeniceClient) -> saving.SavingAgent:
        store = SessionStore(path)
        await store.open()
        session = await store.load("shared")
        agent = Agent(client, FunctionToolbox({}), AgentOptions(model="fake-model"))
        agent.resume(session.messages, spent=0.0, local_data=False)
        opened = saving.Opened(store, "shared", session)
        return saving.SavingAgent(agent, opened, enabled=True, base_url="http://x", warn=said.append)

    async with MockVenice([{"text": "to A"}, {"text": "to B"}]) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            first, second = await saver(client), await saver(client)
            await first.ask("from A")
            await second.ask("from B")
            await first.close()
            await second.close()
    assert said == [f"session shared went on in another terminal: this conversation is saved as {second.id}"]
    async with SessionStore(path) as store:
        theirs = await store.load(second.id)
    assert [m["content"] for m in theirs.messages[1:]] == ["zero", "re zero", "from B", "to B"]
    assert [item["question"] for item in theirs.receipts] == ["zero", "from B"]
    assert theirs.info.questions == 2 and theirs.info.forked_from == "shared"
    assert theirs.info.tokens >= 10  # the earlier receipt's 10 tokens, and this question's


async def test_a_file_from_before_unknown_costs_were_kept_is_read_and_says_them_unknown(
    tmp_path: Path,
) -> None:
    """A sessions file of the first schema (cost a number, 0 when it was not known) opens, and a
    session whose receipts said `cost_usd: null` is one of unknown cost from then on."""
    import json
    import sqlite3

    from venice_terminal_agent.store.schema import Schema, connect
    from venice_terminal_agent.store.sessions import SESSIONS_ID, _m1_sessions

    path = tmp_path / "sessions.db"
    connect(str(path), schema=Schema(SESSIONS_ID, [_m1_sessions])).close()  # as the first version made it
    with sqlite3.connect(path) as db:
        for session, cost, receipt in (
            ("unpriced", 0.0, {"cost_usd": None}),
            ("priced", 0.02, {"cost_usd": 0.02}),
        ):
            db.execute(
                "INSERT INTO sessions (id, folder, title, created, updated, questions, cost)"
                " VALUES (?, '/f', ?, 1, 1, 1, ?)",
                (session, session, cost),
            )
            db.execute(
                "INSERT INTO receipts (session, n, at, question, receipt) VALUES (?, 0, 1, 'q', ?)",
                (session, json.dumps({"stopped_because": "answered", **receipt})),
            )
    async with SessionStore(path) as store:
        found = {info.id: info for info in await store.listing()}
        assert found["unpriced"].cost_unknown and not found["priced"].cost_unknown
        assert found["priced"].cost == 0.02
        await store.save("unpriced", Save(conversation("one"), 0, cost=0.01, cost_unknown=True, folder="/f"))
        assert (await store.find("unpriced")).cost == 0.01  # written to as any other
