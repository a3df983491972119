"""The weekly challenge as tests: `Bot.respond(text, chat)` with its per-chat budget.

The clock is a plain number the test moves; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from venice_terminal_agent import Answer, Bot, Call, Exit, Receipt, ToolError, run_loop
from venice_terminal_agent.bot.bot import human_wait


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Counter:
    """An extra tool that counts how often it really ran."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def tools(self) -> dict:
        def lookup(word: str) -> str:
            self.runs.append(word)
            if word == "forbidden":
                raise ToolError("that word is not in the dictionary")
            return f"{word}: found"

        return {"lookup": lookup}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def counter() -> Counter:
    return Counter()


@pytest.fixture
async def bot(tmp_path: Path, clock: Clock, counter: Counter):
    (tmp_path / "README.md").write_text("# hello\n" + "x" * 500)
    async with Bot(counter.tools(), clock=clock, root=tmp_path, page_chars=100) as bot:
        yield bot


async def test_a_command_runs_one_call_and_the_reply_shows_how_the_loop_ended(
    bot: Bot, counter: Counter
) -> None:
    reply = await bot.respond("lookup word=apple", "alice")
    assert reply.receipt is not None
    assert reply.receipt.stopped_because is Exit.ANSWERED
    assert counter.runs == ["apple"]
    assert reply.text == "apple: found\nstopped: answered · 1 call · 4 left this hour"
    assert reply.left == 4


async def test_five_calls_then_come_back_in_one_hour_and_nothing_runs(bot: Bot, counter: Counter) -> None:
    for n in range(5):
        reply = await bot.respond(f"lookup word=w{n}", "alice")
        assert reply.receipt is not None and reply.receipt.calls == 1
    assert reply.status.endswith("0 left this hour")

    refused = await bot.respond("lookup word=one-more", "alice")
    assert refused.receipt is None and refused.left == 0
    assert refused.text == (
        "All 5 tool calls this hour are spent; come back in 1 hour.\n"
        "not run: no calls left this hour · 0 calls"
    )
    assert refused.retry_after == pytest.approx(3600)
    assert counter.runs == [f"w{n}" for n in range(5)]  # the sixth never ran


async def test_the_wait_is_the_real_one_and_the_budget_recovers(
    bot: Bot, clock: Clock, counter: Counter
) -> None:
    for n in range(5):
        await bot.respond(f"lookup word=w{n}", "alice")
        clock.now += 60  # one call a minute: the oldest ages out first
    # The oldest call was made 5 minutes ago: it frees its slot in 55 minutes.
    reply = await bot.respond("lookup word=late", "alice")
    assert "come back in 55 minutes" in reply.text
    clock.now += 48 * 60 + 30  # 6.5 minutes before the oldest call ages out
    assert "come back in 7 minutes" in (await bot.respond("lookup word=late", "alice")).text

    clock.now += 6.5 * 60  # exactly one hour after the first call: one call free again
    reply = await bot.respond("lookup word=late", "alice")
    assert reply.receipt is not None and reply.receipt.stopped_because is Exit.ANSWERED
    assert reply.status == "stopped: answered · 1 call · 0 left this hour"
    assert counter.runs[-1] == "late"

    clock.now += 3600  # a quiet hour later everything is back
    assert await bot.calls_left("alice") == 5


async def test_budgets_are_per_conversation(bot: Bot, counter: Counter) -> None:
    for n in range(5):
        await bot.respond(f"lookup word=a{n}", "alice")
    assert "come back" in (await bot.respond("lookup word=more", "alice")).text
    reply = await bot.respond("lookup word=b", "bob")
    assert reply.status == "stopped: answered · 1 call · 4 left this hour"


async def test_a_repeated_message_costs_no_call_and_gets_the_previous_answer(
    bot: Bot, counter: Counter
) -> None:
    first = await bot.respond("lookup word=apple", "alice")
    again = await bot.respond("lookup word=apple", "alice")
    assert counter.runs == ["apple"]
    assert again.receipt is None and again.repeated
    assert again.text.startswith("apple: found\n")
    assert (
        again.status
        == "same message as before: previous answer (stopped: answered), no call · 4 left this hour"
    )
    assert await bot.calls_left("alice") == 4
    # Only the *previous* message counts: after another one, the same text runs again.
    await bot.respond("lookup word=pear", "alice")
    third = await bot.respond("lookup word=apple", "alice")
    assert third.receipt is not None and counter.runs == ["apple", "pear", "apple"]
    assert first.text == third.text.replace("2 left", "4 left")


async def test_a_repeat_is_free_even_when_the_hour_is_spent(bot: Bot, counter: Counter) -> None:
    for n in range(5):
        last = await bot.respond(f"lookup word=w{n}", "alice")
    again = await bot.respond("lookup word=w4", "alice")
    assert again.repeated and again.text.startswith(last.text.split("\n")[0])
    assert len(counter.runs) == 5


async def test_page_refuses_an_unknown_id_with_a_tool_error(bot: Bot) -> None:
    reply = await bot.respond("page id=3", "alice")
    assert reply.receipt is not None
    assert reply.receipt.stopped_because is Exit.TOOL_ERROR
    assert "no page with id 3" in reply.receipt.refusal
    assert "page" in reply.receipt.refusal
    assert reply.status.startswith("stopped: tool_error · 1 call")
    assert "no page with id 3" in reply.text


async def test_page_reads_the_rest_of_a_long_result_in_a_later_message(bot: Bot) -> None:
    first = await bot.respond("read_file path=README.md", "alice")
    assert "call page(id=2)" in first.text
    second = await bot.respond("page id=2", "alice")
    assert second.receipt is not None and second.receipt.stopped_because is Exit.ANSWERED
    assert second.text.startswith("x" * 50)
    # Pages belong to their conversation.
    other = await bot.respond("page id=2", "bob")
    assert other.receipt is not None and other.receipt.stopped_because is Exit.TOOL_ERROR


async def test_an_unknown_tool_is_refused_cleanly_with_the_exit_visible(bot: Bot) -> None:
    reply = await bot.respond("weather city=Paris", "alice")
    assert reply.receipt is not None
    assert reply.receipt.stopped_because is Exit.TOOL_ERROR
    assert reply.receipt.steps == ()  # refused before it counts
    assert "there is no tool named 'weather'" in reply.text
    assert reply.status == "stopped: tool_error · 1 call proposed: 0 ran, 1 invalid · 5 left this hour"
    assert await bot.calls_left("alice") == 5


async def test_a_tool_that_refuses_ends_on_tool_error_naming_it(bot: Bot) -> None:
    reply = await bot.respond("lookup word=forbidden", "alice")
    assert reply.receipt is not None and reply.receipt.stopped_because is Exit.TOOL_ERROR
    assert "lookup refused: that word is not in the dictionary" in reply.text
    assert reply.status == "stopped: tool_error · 1 call · 4 left this hour"


async def test_each_run_gets_what_is_left_as_its_loop_budget(bot: Bot, counter: Counter) -> None:
    await bot.respond("lookup word=a", "alice")
    await bot.respond("lookup word=b", "alice")
    many = "\n".join(f"lookup word=m{n}" for n in range(6))
    reply = await bot.respond(many, "alice")
    assert reply.receipt is not None and reply.receipt.stopped_because is Exit.BUDGET
    assert reply.receipt.calls == 3
    assert "the budget of 3 tool calls is spent" in reply.text
    assert "m2: found" in reply.text  # what did run is shown
    assert reply.status == "stopped: budget · 3 calls · 0 left this hour"
    assert counter.runs == ["a", "b", "m0", "m1", "m2"]


async def test_commands_json_arguments_help_and_prose(bot: Bot, counter: Counter) -> None:
    reply = await bot.respond('lookup {"word": "json"}', "alice")
    assert counter.runs == ["json"] and reply.text.startswith("json: found")
    help_reply = await bot.respond("help", "alice")
    assert "page id=3" in help_reply.text and "lookup" in help_reply.text
    assert help_reply.status == "stopped: answered · 0 calls · 4 left this hour"
    prose = await bot.respond("what is the weather like?", "alice")
    assert "did not understand" in prose.text and prose.receipt.calls == 0
    bad = await bot.respond("lookup {not json", "alice")
    assert bad.receipt.stopped_because is Exit.TOOL_ERROR
    assert "could not read the arguments" in bad.text and bad.receipt.calls == 0


async def test_key_value_arguments_are_read_as_json_when_they_are(bot: Bot) -> None:
    seen: list[dict] = []

    def probe(**arguments: object) -> str:
        seen.append(arguments)
        return "ok"

    async with Bot({"probe": probe}) as local:
        await local.respond('probe n=3 flag=true name="two words" path=README.md', "c")
    assert seen == [{"n": 3, "flag": True, "name": "two words", "path": "README.md"}]


class ScriptedAgent:
    """A stand-in with the LLM agent's `ask` signature: plays a script on real `run_loop`."""

    def __init__(self, tools: dict, steps: Sequence[Call | Answer]) -> None:
        self.tools, self.steps = tools, steps
        self.asked: list[tuple[str, int | None]] = []

    async def ask(self, question: str, *, events=None, budget: int | None = None) -> Receipt:
        self.asked.append((question, budget))
        return await run_loop(
            list(self.steps), self.tools, budget if budget is not None else 99, events=events
        )


async def test_with_an_agent_the_model_plans_with_what_is_left(counter: Counter, clock: Clock) -> None:
    plan = [Call("lookup", {"word": f"w{n}"}) for n in range(4)] + [Answer("four words looked up")]
    agent = ScriptedAgent(counter.tools(), plan)
    async with Bot(clock=clock, agent=agent) as bot:
        first = await bot.respond("look up four words", "alice")
        assert first.text == "four words looked up\nstopped: answered · 4 calls · 1 left this hour"
        second = await bot.respond("and four more", "alice")
        assert second.receipt.stopped_because is Exit.BUDGET and second.receipt.calls == 1
        assert second.status == "stopped: budget · 1 call · 0 left this hour"
        third = await bot.respond("and more", "alice")
    assert "come back in 1 hour" in third.text and third.receipt is None
    assert agent.asked == [("look up four words", 5), ("and four more", 1)]


async def test_an_agent_factory_gets_one_agent_per_chat(counter: Counter) -> None:
    made: list[str] = []

    def factory(chat: str) -> ScriptedAgent:
        made.append(chat)
        return ScriptedAgent({}, [Answer(f"hello {chat}")])

    async with Bot(agent=factory) as bot:
        assert (await bot.respond("hi", "a")).text.startswith("hello a")
        assert (await bot.respond("hi again", "a")).text.startswith("hello a")
        assert (await bot.respond("hi", "b")).text.startswith("hello b")
    assert made == ["a", "b"]


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (3600, "1 hour"),
        (3599.5, "1 hour"),
        (720, "12 minutes"),
        (661, "12 minutes"),
        (59.2, "1 minute"),
        (12.1, "13 seconds"),
        (1, "1 second"),
        (5400, "1 hour 30 minutes"),
        (7200, "2 hours"),
    ],
)
def test_waits_are_said_as_people_say_them_never_too_early(seconds: float, words: str) -> None:
    assert human_wait(seconds) == words


async def test_a_window_of_another_length_says_so(clock: Clock, counter: Counter) -> None:
    async with Bot(counter.tools(), clock=clock, calls_per_window=1, window=600) as bot:
        first = await bot.respond("lookup word=a", "c")
        assert first.status == "stopped: answered · 1 call · 0 left in this 10 minutes window"
        refused = await bot.respond("lookup word=b", "c")
        assert refused.text.startswith(
            "The 1 tool call in this 10 minutes window is spent; come back in 10 minutes."
        )
        assert "a chat may make 1 tool call every 10 minutes" in (await bot.respond("help", "c")).text


async def test_help_says_the_budget_per_hour(bot: Bot) -> None:
    reply = await bot.respond("help", "alice")
    assert "a chat may make 5 tool calls an hour (the last line" in reply.text


async def test_a_repeat_says_how_the_run_behind_the_previous_answer_ended(bot: Bot) -> None:
    await bot.respond("weather city=Paris", "alice")
    again = await bot.respond("weather city=Paris", "alice")
    assert again.repeated and "there is no tool named 'weather'" in again.text
    assert (
        again.status
        == "same message as before: previous answer (stopped: tool_error), no call · 5 left this hour"
    )


async def test_a_bot_with_no_calls_at_all_says_so_instead_of_a_wait(counter: Counter) -> None:
    async with Bot(counter.tools(), calls_per_window=0) as bot:
        reply = await bot.respond("lookup word=a", "c")
    assert reply.receipt is None and reply.retry_after is None and counter.runs == []
    assert reply.text.startswith("This bot makes no tool calls")


async def test_help_still_answers_when_the_hour_is_spent(bot: Bot, counter: Counter) -> None:
    for n in range(5):
        await bot.respond(f"lookup word=w{n}", "alice")
    reply = await bot.respond("help", "alice")
    assert reply.receipt is not None and reply.receipt.calls == 0
    assert "come back" not in reply.text
    assert reply.status == "stopped: answered · 0 calls · 0 left this hour"
    refused = await bot.respond("lookup word=late", "alice")
    assert "come back in 1 hour" in refused.text and counter.runs == [f"w{n}" for n in range(5)]


async def test_without_files_the_bot_reads_no_local_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("private", encoding="utf-8")
    async with Bot(root=tmp_path, files=False) as bot:
        reply = await bot.respond("read_file path=notes.txt", "c")
        assert "read_file" not in [spec.name for spec in bot.toolbox("c").specs()]
    assert reply.receipt is not None and reply.receipt.stopped_because is Exit.TOOL_ERROR
    assert "private" not in reply.text


@pytest.mark.parametrize(("text", "chat"), [(None, "c"), ("hi", 7), (b"hi", "c")])
async def test_respond_refuses_anything_but_two_strings_saying_so(
    bot: Bot, text: object, chat: object
) -> None:
    with pytest.raises(TypeError, match=r"^respond\(text, chat\) takes two strings$"):
        await bot.respond(text, chat)  # type: ignore[arg-type]
    assert await bot.calls_left("c") == 5


async def test_a_repeat_shows_the_previous_answer_as_it_was_shown(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n\n")  # the answer ends in blank lines: shown without them
    async with Bot(root=tmp_path) as bot:
        first = await bot.respond("read_file path=a.txt", "c")
        again = await bot.respond("read_file path=a.txt", "c")
    assert first.text == "alpha\nstopped: answered · 1 call · 4 left this hour"
    assert (
        again.text
        == "alpha\nsame message as before: previous answer (stopped: answered), no call · 4 left this hour"
    )


async def test_a_reply_s_run_id_is_the_run_its_exchange_names(bot: Bot) -> None:
    reply = await bot.respond("lookup word=apple", "alice")
    again = await bot.respond("lookup word=apple", "alice")
    history = await bot.history("alice")
    assert reply.run_id is not None and [h["run"] for h in history] == [reply.run_id, None]
    assert again.run_id is None


async def test_a_command_reply_streams_its_tool_events(bot: Bot) -> None:
    seen: list[str] = []
    await bot.respond("lookup word=apple", "alice", events=lambda event: seen.append(type(event).__name__))
    assert "ToolStarted" in seen and "ToolFinished" in seen


SECRET = "sk-live-0123456789abcdef"


class Crashes:
    async def ask(self, question: str, *, events=None, budget: int | None = None) -> Receipt:
        raise RuntimeError("the agent broke")


@pytest.mark.parametrize("agent", [None, Crashes()], ids=["answered", "failed"])
async def test_a_secret_in_a_message_is_masked_in_what_the_store_keeps(
    counter: Counter, agent: Crashes | None
) -> None:
    async with Bot(counter.tools(), secrets=[SECRET], agent=agent) as bot:
        try:
            reply = await bot.respond(f"lookup word={SECRET}", "alice")
            assert SECRET not in reply.text
        except RuntimeError:
            assert agent is not None
        history = await bot.history("alice")
    assert [h["text"] for h in history] == ["lookup word=***"]
