"""`venice-agent acp`: the real command as a process, driven by the ACP SDK's client side as an
editor would, against the fake model server and real stdio MCP servers (a paid one of ours,
mcp-server-time): a permission granted, one rejected, what a permission request shows and
offers (after the call it asks about), a cancel that rolls the question back, a usage update
that matches the receipt, the editor unable to answer (no one to ask), and a server's sampling
request that never reaches the editor; with sessions on,
a conversation saved in the terminal is loaded (replayed, then continued) in the editor and
the other way round."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse
from acp.stdio import spawn_agent_process

from cli_support import COMMAND, FakeServer, clean_env, fake_venice, mcp_config, run_cli
from test_sessions_cli import ids, sessions_file, stored
from venice_terminal_agent.core.wording import PAID_REASON

pytestmark = pytest.mark.asyncio


SESSIONS = {"VENICE_AGENT_SESSIONS": "1"}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Editor:
    """The ACP client: records every update, answers permission requests with `answer`."""

    def __init__(self, answer: Callable[[Any], Any]) -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.offered: list[Any] = []  # each permission request's options
        self.shown_when_asked: list[list[Any]] = []  # the updates the editor had when it was asked
        self.changed = asyncio.Event()
        self.started: Any = None  # the initialize response

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **_: Any) -> Any:
        self.asked.append(tool_call)
        self.offered.append(options)
        self.shown_when_asked.append(list(self.updates))
        return await self.answer(options)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    def kinds(self) -> list[str]:
        return [update.session_update for update in self.updates]

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == "agent_message_chunk")

    async def wait_for(self, test: Callable[[], bool]) -> None:
        async with asyncio.timeout(30):
            while not test():
                self.changed.clear()
                await self.changed.wait()


async def allow(options: Any) -> Any:
    chosen = next(option for option in options if option.kind == "allow_once")
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))


async def reject(options: Any) -> Any:
    chosen = next(option for option in options if option.kind == "reject_once")
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))


async def dismiss(options: Any) -> Any:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@asynccontextmanager
async def editor_on(
    tmp_path: Path, fake: FakeServer, answer: Callable[[Any], Any], *args: str, **env_extra: str
) -> AsyncIterator[tuple[Editor, Any]]:
    editor = Editor(answer)
    env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model", **env_extra)
    servers = [] if "--no-mcp" in args else ["--mcp-config", str(mcp_config(tmp_path))]
    with (tmp_path / "acp.stderr").open("w") as log:  # read on failure: stdout is the protocol's
        async with spawn_agent_process(
            editor,
            COMMAND,
            "acp",
            *servers,
            *args,
            env=env,
            cwd=tmp_path,
            # The SDK terminates an agent that has not exited 2 s after its stdin closed; under
            # load one that had just exited raised ProcessLookupError at teardown. It exits on
            # its own (a question's end), so it is given the time to.
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 30.0},
        ) as (conn, _process):
            editor.started = await conn.initialize(protocol_version=PROTOCOL_VERSION)
            assert editor.started.agent_info.name == "venice-agent"
            yield editor, conn


async def test_a_granted_call_runs_and_the_answer_carries_its_receipt_and_usage(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 8}
    script = {
        "replies": [call("charge", amount=5), {"text": "Charged 5.", "usage": usage}],
        "model_spec": {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}},
    }
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("charge 5")])
    assert done.stop_reason == "end_turn"
    receipt = done.field_meta["venice-agent/receipt"]
    assert receipt["stopped_because"] == "answered" and receipt["answer"] == "Charged 5."
    assert [step["tool"] for step in receipt["steps"]] == ["charge"]
    assert "charged 5" in json.dumps(receipt["steps"][0]["result"])
    (asked,) = editor.asked
    assert asked.title.startswith('Run charge({"amount": 5}) on shop?')
    started = next(u for u in editor.updates if u.session_update == "tool_call")
    assert started.title == '→ charge({"amount": 5})' and started.raw_input == {"amount": 5}
    finished = [
        u for u in editor.updates if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    assert [u.tool_call_id for u in finished] == [started.tool_call_id]
    assert "charged 5" in finished[0].content[0].content.text
    assert editor.text() == "Charged 5."
    (usage_update,) = [u for u in editor.updates if u.session_update == "usage_update"]
    assert (
        usage_update.used == receipt["context_tokens"] == 120
    )  # the last request's input, as the server counted
    assert usage_update.size == (receipt["context_window"] or 0)
    assert usage_update.cost is not None, receipt
    assert usage_update.cost.amount == pytest.approx(receipt["cost_usd"])
    assert done.usage.input_tokens == receipt["usage"]["prompt_tokens"]
    assert editor.kinds().index("tool_call") < editor.kinds().index("agent_message_chunk")


@pytest.mark.parametrize("answer", [reject, dismiss], ids=["rejected", "dismissed"])
async def test_a_rejected_or_dismissed_permission_is_a_no(tmp_path: Path, answer: Any) -> None:
    with fake_venice([call("charge", amount=9), {"text": "Not charged."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, answer) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("charge 9")])
        tool_messages = [m for m in fake.chat_bodies()[1]["messages"] if m["role"] == "tool"]
    assert done.stop_reason == "end_turn"
    assert done.field_meta["venice-agent/receipt"]["steps"] == []  # it never ran
    assert "declined" in tool_messages[0]["content"]
    failed = [u for u in editor.updates if u.session_update == "tool_call_update" and u.status == "failed"]
    assert failed and "declined charge" in failed[0].content[0].content.text


async def test_the_permission_request_asks_about_the_call_shown_with_allow_once_or_reject(
    tmp_path: Path,
) -> None:
    with fake_venice([call("charge", amount=5), {"text": "Charged 5."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("charge 5")])
    (asked,) = editor.asked
    assert asked.title == f'Run charge({{"amount": 5}}) on shop? ({PAID_REASON})'  # what, where, why
    assert asked.raw_input == {"amount": 5} and asked.status == "pending"
    (shown,) = editor.shown_when_asked  # the call is on screen, under the id asked about, first
    assert [u.tool_call_id for u in shown if u.session_update == "tool_call"] == [asked.tool_call_id]
    (options,) = editor.offered
    assert [(option.name, option.kind) for option in options] == [
        ("Allow once", "allow_once"),
        ("Reject", "reject_once"),
    ]


async def test_an_editor_that_cannot_answer_is_no_one_to_ask(tmp_path: Path) -> None:
    async def broken(options: Any) -> Any:
        raise RuntimeError("the permission dialog failed")

    with fake_venice([call("charge", amount=3), {"text": "Not charged."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, broken) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("charge 3")])
        tool_messages = [m for m in fake.chat_bodies()[1]["messages"] if m["role"] == "tool"]
    assert len(editor.asked) == 1
    assert done.field_meta["venice-agent/receipt"]["steps"] == []  # it never ran
    assert "no one to ask" in tool_messages[0]["content"]  # not "declined": nobody answered


async def test_a_servers_sampling_request_is_never_put_to_the_editor(tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    from cli_support import PYTHON

    trip = McpServerStdio(
        name="trip", command=PYTHON, args=[str(Path(__file__).parent / "servers" / "trip_server.py")], env=[]
    )
    with fake_venice([call("forecast", city="Oslo"), {"text": "No forecast."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp") as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[trip])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("weather?")])
        bodies = fake.chat_bodies()
    (asked,) = editor.asked  # the editor's server's tool asks; its sampling request does not
    assert asked.title.startswith('Run forecast({"city": "Oslo"}) on trip?')
    (step,) = done.field_meta["venice-agent/receipt"]["steps"]
    assert step["tool"] == "forecast" and "sampling" in step["error"]  # the server was told no
    assert len(bodies) == 2  # the question's two requests: the server's prompt never reached the model


async def test_yes_approves_without_asking_the_editor(tmp_path: Path) -> None:
    async def never(options: Any) -> Any:
        raise AssertionError("--yes must not ask")

    with fake_venice([call("charge", amount=1), {"text": "Done."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, never, "--yes") as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("charge 1")])
    assert editor.asked == []
    assert [step["tool"] for step in done.field_meta["venice-agent/receipt"]["steps"]] == ["charge"]


async def test_a_cancel_ends_the_question_cancelled_and_rolls_it_back(tmp_path: Path) -> None:
    script = [{"text": "A long answer that never ends", "hang": True}, {"text": "Fresh answer."}]
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            asking = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[text_block("first question")])
            )
            await editor.wait_for(lambda: "never ends" in editor.text())
            await conn.cancel(session_id=session.session_id)
            cut = await asking
            again = await conn.prompt(session_id=session.session_id, prompt=[text_block("second question")])
        bodies = fake.chat_bodies()
    assert cut.stop_reason == "cancelled"
    assert cut.field_meta["venice-agent/receipt"]["stopped_because"] == "cancelled"
    assert again.stop_reason == "end_turn"
    contents = [m.get("content") for m in bodies[-1]["messages"] if m["role"] != "system"]
    assert contents == ["second question"]  # the cancelled question left no trace


async def test_each_session_is_its_own_conversation_and_a_cap_is_a_refusal(tmp_path: Path) -> None:
    script = {
        "replies": [{"text": "one"}, {"text": "two"}],
        "model_spec": {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 4000},
    }
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--max-usd", "0.001") as (editor, conn):
            first = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=first.session_id, prompt=[text_block("hello")])
    assert done.stop_reason == "refusal"  # the worst case of one request is past the cap
    receipt = done.field_meta["venice-agent/receipt"]
    assert receipt["stopped_because"] == "cost_cap"
    assert receipt["refusal"] in editor.text()  # the editor shows why
    assert fake.chat_bodies() == []  # refused before anything was sent


async def test_the_editors_mcp_servers_are_added_to_ours_for_that_session(tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    from cli_support import PYTHON

    time_server = McpServerStdio(
        name="editor-time", command=PYTHON, args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[]
    )
    script = [call("get_current_time", timezone="UTC"), {"text": "It is now."}, {"text": "plain"}]
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp") as (editor, conn):
            with_time = await conn.new_session(cwd=str(tmp_path), mcp_servers=[time_server])
            done = await conn.prompt(session_id=with_time.session_id, prompt=[text_block("time?")])
            plain = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await conn.prompt(session_id=plain.session_id, prompt=[text_block("hi")])
        first, _, last = fake.chat_bodies()
    assert "get_current_time" in {tool["function"]["name"] for tool in first["tools"]}
    assert "get_current_time" not in {tool["function"]["name"] for tool in last.get("tools", [])}
    (asked,) = editor.asked  # the editor's server is not trusted: its tool asks
    assert "on editor-time" in asked.title
    steps = done.field_meta["venice-agent/receipt"]["steps"]
    assert [step["tool"] for step in steps] == ["get_current_time"] and steps[0]["error"] is None


def messages_of(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(text) for text in stored(tmp_path, session_id)]


async def test_a_session_saved_in_the_terminal_is_replayed_in_the_editor_and_goes_on_there(
    tmp_path: Path,
) -> None:
    script = [call("charge", amount=5), {"text": "Charged 5."}, {"text": "Charged 5 again."}]
    with fake_venice(script, tmp_path) as fake:
        servers = str(mcp_config(tmp_path))
        asked = run_cli(tmp_path, fake.base_url, "--mcp-config", servers, "--yes", "charge 5", **SESSIONS)
        assert asked.returncode == 0, asked.stderr
        (session_id,) = ids(tmp_path)
        before = messages_of(tmp_path, session_id)
        async with editor_on(tmp_path, fake, allow, **SESSIONS) as (editor, conn):
            assert editor.started.agent_capabilities.load_session is True
            await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
            replayed = list(editor.updates)  # all of it before the load's response
            again = await conn.prompt(session_id=session_id, prompt=[text_block("charge 5 again")])
        follow_up = fake.chat_bodies()[-1]
    kinds = [update.session_update for update in replayed]
    assert kinds == ["user_message_chunk", "tool_call", "agent_message_chunk", "usage_update"]
    question, tool, answer, usage = replayed
    assert question.content.text == "charge 5"
    assert tool.title == '→ charge({"amount": 5})' and tool.raw_input == {"amount": 5}
    assert tool.status == "completed" and "charged 5" in tool.content[0].content.text
    assert answer.content.text == "Charged 5."
    receipt = json.loads(_receipts(tmp_path, session_id)[0])
    assert usage.used == receipt["context_tokens"]
    # The follow-up sends the stored conversation exactly, then the new question.
    assert follow_up["messages"] == [*before, {"role": "user", "content": "charge 5 again"}]
    assert again.stop_reason == "end_turn" and editor.text().endswith("Charged 5 again.")
    # ...and is saved to the same session, as the terminal would have saved it.
    assert ids(tmp_path) == [session_id]
    after = messages_of(tmp_path, session_id)
    assert after[: len(before)] == before
    assert [m["content"] for m in after[len(before) :]] == ["charge 5 again", "Charged 5 again."]
    assert len(_receipts(tmp_path, session_id)) == 2


async def test_loading_a_session_of_this_process_again_replays_it_as_it_stands(tmp_path: Path) -> None:
    with fake_venice([{"text": "One."}, {"text": "Two."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            for question in ("first", "second"):
                await conn.prompt(session_id=session.session_id, prompt=[text_block(question)])
            editor.updates.clear()
            await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
    shown = [(u.session_update, u.content.text) for u in editor.updates if hasattr(u, "content")]
    assert shown == [
        ("user_message_chunk", "first"),
        ("agent_message_chunk", "One."),
        ("user_message_chunk", "second"),
        ("agent_message_chunk", "Two."),
    ]


async def test_a_session_another_running_process_holds_is_refused_not_shared(tmp_path: Path) -> None:
    with fake_venice([{"text": "Mine."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (_, first):
            session = await first.new_session(cwd=str(tmp_path), mcp_servers=[])
            await first.prompt(session_id=session.session_id, prompt=[text_block("hello")])
            async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (_, second):
                with pytest.raises(RequestError) as held:
                    await second.load_session(
                        cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[]
                    )
    assert f"session {session.session_id} is open in another venice-agent (process" in str(held.value)
    assert f"venice-agent --fork {session.session_id}" in str(held.value)


async def test_an_editor_session_is_saved_and_goes_on_in_the_terminal(tmp_path: Path) -> None:
    script = [{"text": "Hello there."}, {"text": "Still here."}, {"text": "Yes."}]
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (_, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        saved = messages_of(tmp_path, session.session_id)  # the editor's session id is the stored one
        resumed = run_cli(
            tmp_path, fake.base_url, "--no-mcp", "--resume", session.session_id, "are you there?", **SESSIONS
        )
        follow_up = fake.chat_bodies()[-1]
        # It was saved as the editor's project's (its cwd): `-c` there finds it.
        continued = run_cli(tmp_path, fake.base_url, "--no-mcp", "-c", "still?", **SESSIONS)
    assert resumed.returncode == 0, resumed.stderr
    assert "Still here." in resumed.stdout and f"resumed {session.session_id}" in resumed.stderr
    assert [m["content"] for m in saved[1:]] == ["hello", "Hello there."]
    assert follow_up["messages"] == [*saved, {"role": "user", "content": "are you there?"}]
    assert continued.returncode == 0 and f"resumed {session.session_id}" in continued.stderr
    assert ids(tmp_path) == [session.session_id]  # no fork: the editor's process let it go


async def test_loading_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (editor, conn):
            with pytest.raises(RequestError) as unknown:
                await conn.load_session(cwd=str(tmp_path), session_id="deadbeef", mcp_servers=[])
    assert unknown.value.code == -32602
    assert "no saved session 'deadbeef'" in str(unknown.value) and "sessions list" in str(unknown.value)
    assert editor.updates == []


async def test_with_sessions_off_nothing_is_saved_and_nothing_can_be_loaded(tmp_path: Path) -> None:
    with fake_venice([{"text": "Hi."}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp") as (editor, conn):
            assert not editor.started.agent_capabilities.load_session
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
            with pytest.raises(RequestError) as off:
                await conn.load_session(cwd=str(tmp_path), session_id="deadbeef", mcp_servers=[])
    assert "sessions are off" in str(off.value) and "config set sessions on" in str(off.value)
    assert not sessions_file(tmp_path).exists()


def _receipts(tmp_path: Path, session_id: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(sessions_file(tmp_path)) as db:
        rows = db.execute("SELECT receipt FROM receipts WHERE session = ? ORDER BY n", (session_id,))
        return [text for (text,) in rows]


async def test_the_replay_shows_a_declined_call_failed_and_leaves_out_what_is_ours() -> None:
    from venice_terminal_agent.fronts.acp.replay import replay

    def arguments(**given: Any) -> str:
        return json.dumps(given)

    record = [
        {"role": "system", "content": "our system prompt"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {}}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "charge", "arguments": arguments(amount=2)},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "charge", "arguments": arguments(amount=3)},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps({"error": "the user declined this call"}),
        },
        {"role": "compaction", "replaced": [1, 3], "summary": {"role": "user", "content": "(Summary…)"}},
        {"role": "assistant", "content": "Not charged."},
    ]
    updates = replay(record, lambda name: None)
    assert [u.session_update for u in updates] == [
        "user_message_chunk",
        "tool_call",
        "tool_call",
        "agent_message_chunk",
    ]
    assert updates[0].content.text == "look"  # the text of a question sent with an attachment
    declined, unanswered = updates[1], updates[2]
    assert declined.status == "failed" and declined.content[0].content.text == "the user declined this call"
    assert declined.title == '→ charge({"amount": 2})' and declined.kind == "other"
    assert unanswered.status == "failed" and unanswered.tool_call_id != declined.tool_call_id
    assert updates[3].content.text == "Not charged."


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (("--max-usd", "0.05"), {}, "a money cap needs the model's prices"),
        ((), {"VENICE_API_KEY": ""}, "no Venice API key: set VENICE_API_KEY"),
        (("--model", "fake-modle"), {}, "fake-modle is not a model"),
    ],
    ids=["a money cap on a model without prices", "no key", "a model the server does not list"],
)
async def test_a_session_that_cannot_start_is_refused_with_why_and_the_agent_serves_on(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], line: str
) -> None:
    with fake_venice([{"text": "never"}], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", *args, **env) as (_editor, conn):
            for _ in range(2):  # each session says it; the agent is still there
                with pytest.raises(RequestError) as refused:
                    await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                assert refused.value.code != -32603
                assert str(refused.value).startswith(line), refused.value
            again = await conn.initialize(protocol_version=PROTOCOL_VERSION)
            assert again.agent_info.name == "venice-agent"
    assert fake.chat_bodies() == []
    assert line in (tmp_path / "acp.stderr").read_text()  # and in the editor's log


async def test_the_models_reasoning_streams_as_thought_chunks_never_as_the_answer(tmp_path: Path) -> None:
    script = [{"reasoning_content": "Let me think about 2+2.", "text": "Four."}]
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("2+2?")])
        async with editor_on(tmp_path, fake, allow, "--no-mcp", **SESSIONS) as (again, conn):
            await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
    assert done.stop_reason == "end_turn" and editor.text() == "Four."
    thoughts = [u.content.text for u in editor.updates if u.session_update == "agent_thought_chunk"]
    assert "".join(thoughts) == "Let me think about 2+2."
    kinds = editor.kinds()
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
    replayed = [(u.session_update, u.content.text) for u in again.updates if hasattr(u, "content")]
    assert replayed == [
        ("user_message_chunk", "2+2?"),
        ("agent_thought_chunk", "Let me think about 2+2."),
        ("agent_message_chunk", "Four."),
    ]


async def test_an_embedded_file_is_local_data_so_a_trusted_read_only_tool_asks_first(tmp_path: Path) -> None:
    from acp import embedded_text_resource, resource_block

    script = [call("get_current_time", timezone="UTC"), {"text": "Not sent."}]
    file = resource_block(embedded_text_resource("file:///project/secret.txt", "the launch code is 1234"))
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, reject) as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("what time is it?"), file]
            )
    (asked,) = editor.asked  # mcp-server-time is trusted and read-only: only local data makes it ask
    assert asked.title.startswith("Run get_current_time") and "local file contents" in asked.title
    assert done.field_meta["venice-agent/receipt"]["steps"] == []


async def test_the_secrets_of_an_editors_server_are_masked_in_everything_written(tmp_path: Path) -> None:
    from acp.schema import EnvVariable, McpServerStdio

    from cli_support import PYTHON

    secret = "editor-given-token-5150"
    server = McpServerStdio(
        name="editor-echo",
        command=PYTHON,
        args=[str(Path(__file__).parent / "servers" / "paged.py"), "--tools", "1"],
        env=[EnvVariable(name="ECHO_TOKEN", value=secret)],
    )
    script = [call("echo_0", text=f"the token is {secret}"), {"text": f"It said {secret}."}]
    runs = tmp_path / "runs.db"
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", VENICE_AGENT_DB=str(runs), **SESSIONS) as (
            _editor,
            conn,
        ):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[server])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("echo it")])
    steps = done.field_meta["venice-agent/receipt"]["steps"]
    assert [step["tool"] for step in steps] == ["echo_0"] and steps[0]["error"] is None
    written = stores_written(tmp_path)
    assert sessions_file(tmp_path) in written and runs in written
    assert any("***" in text for text in stored(tmp_path, session.session_id))
    for path, content in written.items():
        assert secret.encode() not in content, path


def stores_written(tmp_path: Path) -> dict[Path, bytes]:
    """The sessions file and runs.db of a test, with their journals: what each holds."""
    paths = [*sessions_file(tmp_path).parent.iterdir(), *tmp_path.glob("runs.db*")]
    return {path: path.read_bytes() for path in paths}


async def test_loading_a_session_without_a_key_says_the_key_is_missing(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", VENICE_API_KEY="", **SESSIONS) as (_, conn):
            with pytest.raises(RequestError) as refused:
                await conn.load_session(cwd=str(tmp_path), session_id="abc", mcp_servers=[])
    assert str(refused.value).startswith("no Venice API key: set VENICE_API_KEY"), refused.value
