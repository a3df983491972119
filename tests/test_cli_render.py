"""What the terminal shows for a question, rendered to a string (no terminal needed)."""

from __future__ import annotations

import io

from venice_terminal_agent.core.events import (
    ConsentAsked,
    Finished,
    RoundStarted,
    TextDelta,
    TextDiscarded,
    ToolFinished,
    ToolStarted,
)
from venice_terminal_agent.core.receipt import Call, Exit, Receipt, Step
from venice_terminal_agent.core.toolbox import ToolSpec
from venice_terminal_agent.fronts.terminal.render import Renderer, banner, make_console, tools_table


def screen() -> tuple[Renderer, io.StringIO]:
    out = io.StringIO()
    return Renderer(make_console(file=out, width=80)), out


def answered(text: str, steps: tuple[Step, ...] = (), rounds: int = 1) -> Receipt:
    return Receipt(steps=steps, stopped_because=Exit.ANSWERED, answer=text, rounds=rounds)


def test_streamed_text_prints_brackets_and_emoji_codes_literally() -> None:
    show, out = screen()
    text = "Use [bold]x[/bold] and [red] or :smile: like `a[0]`"
    show(RoundStarted(1))
    for piece in (text[:10], text[10:]):
        show(TextDelta(piece))
    show(Finished(answered(text)))
    lines = out.getvalue().splitlines()
    assert lines[0] == text
    assert lines[1] == "stopped: answered · 0 calls · 1 round"


def test_control_sequences_from_the_model_or_a_tool_are_shown_not_obeyed() -> None:
    show, out = screen()
    call = Call("fetch", {"url": "x\x1b]0;pwned\x07"})
    show(ToolStarted(call))
    show(ToolFinished(call, result="\x1b[2J\x1b[31mred\x1b[0m"))
    show(TextDelta("done \x1b[1Abye\x9b"))
    show(Finished(answered("done", (Step("fetch", {}, "r"),), 2)))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "\\x1b[2J\\x1b[31mred" in text
    assert "done \\x1b[1Abye\\x9b" in text


def test_each_tool_call_is_one_arrow_line_with_its_arguments_and_outcome() -> None:
    show, out = screen()
    ok = Call("search-actors", {"search": "hacker news", "limit": 5})
    bad = Call("read_file", {"path": "nope"})
    show(RoundStarted(1))
    show(ToolStarted(ok))
    show(ToolStarted(bad))
    show(ToolFinished(ok, result=[{"name": "scraper"}]))
    show(ToolFinished(bad, error="no such file: nope"))
    lines = out.getvalue().splitlines()
    assert lines[0] == '→ search-actors({"search": "hacker news", "limit": 5})'
    assert lines[1] == '→ read_file({"path": "nope"})'
    assert lines[2] == '  ✓ [{"name": "scraper"}]'
    assert lines[3] == "  ✗ no such file: nope"


def test_text_before_a_tool_call_ends_its_line_first() -> None:
    show, out = screen()
    show(TextDelta("Let me look."))
    show(ToolStarted(Call("list_files", {})))
    assert out.getvalue().splitlines()[:2] == ["Let me look.", "→ list_files({})"]


def test_an_answer_that_was_not_streamed_is_printed_once() -> None:
    show, out = screen()
    show(RoundStarted(1))
    show(TextDelta("thinking aloud"))
    show(ToolStarted(Call("list_files", {})))
    show(ToolFinished(Call("list_files", {}), result=[]))
    show(RoundStarted(2))
    show(Finished(answered("the answer")))
    text = out.getvalue()
    assert text.count("the answer") == 1
    show2, out2 = screen()
    show2(RoundStarted(1))
    show2(TextDelta("the answer"))
    show2(Finished(answered("the answer")))
    assert out2.getvalue().count("the answer") == 1


def test_a_retried_stream_says_so_on_its_own_line() -> None:
    show, out = screen()
    show(TextDelta("half a sen"))
    show(TextDiscarded())
    show(TextDelta("A whole sentence."))
    lines = out.getvalue().splitlines()
    assert lines[0] == "half a sen"
    assert "retrying" in lines[1]
    assert lines[2] == "A whole sentence."


def test_a_stop_that_is_not_an_answer_shows_its_refusal_and_the_receipt_line() -> None:
    show, out = screen()
    show(TextDelta("partial"))
    show(ConsentAsked(Call("x", {})))
    receipt = Receipt(
        steps=(Step("a", {}, 1), Step("b", {}, 2)),
        stopped_because=Exit.BUDGET,
        refusal="stopped before call 3: the budget of 2 tool calls is spent",
        rounds=3,
    )
    show(Finished(receipt))
    lines = out.getvalue().splitlines()
    assert lines == [
        "partial",
        "stopped before call 3: the budget of 2 tool calls is spent",
        "stopped: budget · 2 calls · 3 rounds",
    ]


def test_no_spinner_characters_reach_a_file() -> None:
    show, out = screen()
    show(RoundStarted(1))
    show(ToolStarted(Call("slow", {})))
    show(ToolFinished(Call("slow", {}), result="ok"))
    assert "thinking" not in out.getvalue() and "running" not in out.getvalue()


def test_banner_names_model_apify_mode_and_tools() -> None:
    out = io.StringIO()
    specs = [ToolSpec("search-actors", read_only=True), ToolSpec("call-actor")]
    banner(make_console(file=out, width=80), model="m[1]", apify="anonymous Apify tools only", tools=specs)
    text = out.getvalue()
    assert "model  m[1]" in text
    assert "apify  anonymous Apify tools only" in text
    assert "tools  search-actors, call-actor" in text


def test_tools_table_marks_which_tools_ask_first() -> None:
    out = io.StringIO()
    specs = [
        ToolSpec("read_file", "Read a text file", read_only=True),
        ToolSpec("call-actor", "Run an Actor [paid]", server="apify"),
    ]
    tools_table(make_console(file=out, width=100), specs)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("free read_file") and "Read a text file" in lines[0]
    assert lines[1].startswith("asks call-actor") and "[apify] Run an Actor [paid]" in lines[1]


def test_tool_lines_stay_one_line_in_a_pipe_whatever_the_width() -> None:
    # Piped output has no terminal to wrap it: a preview broken by inserted newlines would
    # make `grep '→ '` and log readers see half a call.
    out = io.StringIO()
    renderer = Renderer(make_console(file=out, width=40))
    call = Call("get_current_time", {"timezone": "Europe/Prague", "note": "x" * 60})
    renderer(ToolStarted(call))
    renderer(ToolFinished(call, {"datetime": "2026-11-30T00:45:11+01:00", "day_of_week": "Monday"}))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("→ get_current_time(") and lines[0].endswith(")")
    assert lines[1].startswith("  ✓ {") and "Monday" in lines[1]
