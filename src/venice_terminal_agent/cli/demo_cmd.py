"""`venice-agent demo`: the agent at work with no key and no network, from any folder.

A stand-in model (the scripted fake of `testing.fake_venice`, in a thread of this process, on
127.0.0.1) answers every question the same way: it calls a pretend paid tool of a stand-in MCP
server (`testing.demo_server`, started by the command's own Python), lists the working folder
with a built-in tool, then answers. So the REPL, a question with tools, consent and the receipt
are the real ones, and nothing is paid, sent anywhere or saved. `--tour` runs the plan shipped
in the package (`testing/demo_tour.json`) on the package's own files, with no model, as `run`
runs any plan. The fake's HTTP parser, h11, comes with uvicorn, a dependency of the agent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

PACKAGE = Path(__file__).resolve().parent.parent  # the tour reads the package's own files
TOUR = PACKAGE / "testing" / "demo_tour.json"
MODEL = "stand-in"
# This process's own settings for the demo, over the environment's: the stand-in takes any key
# (a real one is never sent to it; MCP servers never get the key), and no store of the user's
# (VENICE_AGENT_DB, for `logs`) records the stand-in's runs.
DEMO_ENVIRONMENT = {"VENICE_API_KEY": "stand-in", "VENICE_AGENT_DB": ""}
TOOL = "pretend_purchase"
ANSWER = (
    "That was the agent's loop, played by a stand-in: a model on 127.0.0.1 that answers every "
    "question this way, so no key was needed, nothing was paid and nothing left this machine. "
    f"It called `{TOOL}`, a tool of an MCP server that is not known to be read-only, so the call "
    "needed a yes (asked here, or --yes; a no is kept, and the model is told). Then `list_files`, "
    "a built-in read-only tool, ran without asking. The line below is the receipt: why the run "
    "stopped, the calls, the rounds, the tokens and the cost. With a Venice key (VENICE_API_KEY), "
    "`venice-agent` asks a real model the same way."
)
SCRIPT: dict[str, Any] = {
    "loop": "question",  # each question plays the three replies from the first
    "models": [MODEL],
    "model_spec": {
        "name": "Stand-in (scripted, on 127.0.0.1)",
        "availableContextTokens": 32_768,
        "maxCompletionTokens": 2_048,
        "pricing": {"input": {"usd": 0.5}, "output": {"usd": 2.0}},
    },
    "replies": [
        {
            "text": "First a tool that may cost money, so the agent asks you.",
            "tool_calls": [{"name": TOOL, "arguments": {"item": "a coffee"}}],
        },
        {
            "text": "Then a read-only one, which runs without asking.",
            "tool_calls": [{"name": "list_files", "arguments": {}}],
        },
        {"text": ANSWER},
    ],
}
INTRO = (
    f"a stand-in model on 127.0.0.1 plays a script: each question asks to run {TOOL} (a pretend "
    "paid tool), lists this folder, then answers. No key, nothing paid, no conversation saved."
)


def add_demo_command(app: typer.Typer) -> None:
    app.command(name="demo")(demo)


def demo(
    question: Annotated[
        str | None,
        typer.Argument(help="Ask this once and exit; without it, chat (REPL).", show_default=False),
    ] = None,
    tour: Annotated[
        bool,
        typer.Option("--tour", help="Run the built-in tour plan instead: the loop alone, no model."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help=f"Run {TOOL} without asking.")] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the receipt alone, as JSON, on stdout.")
    ] = False,
) -> None:
    """Try the agent with no key and no network: a stand-in model on 127.0.0.1 plays a script.

    Everything but the model is real: the REPL, the tools, consent, the receipt. The stand-in
    answers every question the same way: it calls pretend_purchase on a stand-in MCP server
    (not known to be read-only, like a paid Apify Actor: the agent asks you first, y or n),
    lists this folder with list_files (built in and read-only: it runs without asking), then
    answers. Nothing is bought, nothing leaves this machine, no conversation is saved.

    \b
    venice-agent demo                  # chat: type anything; /receipt, /help; Ctrl+D leaves
    venice-agent demo "any question"   # once: the steps, the consent question, the receipt
    venice-agent demo --yes --json "q" # no asking; the receipt alone, as JSON
    venice-agent demo --tour           # the loop alone on a built-in plan, no model at all

    With a key (VENICE_API_KEY), venice-agent "question" asks Venice; your own MCP servers go
    in an mcp.json (venice-agent --mcp-config mcp.json; docs/tools.md).

    Exit status: 0 answered, 2 a usage error, or what a question or a plan ends with
    (venice-agent --help, venice-agent run --help).
    """
    raise typer.Exit(demo_main(question, tour=tour, yes=yes, json_output=json_output))


def demo_main(question: str | None, *, tour: bool, yes: bool, json_output: bool) -> int:
    from ..fronts.failures import fail

    if tour:
        if question is not None or yes:
            return fail("demo --tour runs a plan: it takes no question and asks nothing")
        from ..fronts.terminal.run import run_plan

        return run_plan(str(TOUR), budget=None, json_output=json_output, root=PACKAGE)
    if json_output and question is None:
        return fail('demo --json needs a question: venice-agent demo --json "question"')
    import json
    import os
    import tempfile
    from contextlib import ExitStack

    from ..fronts.terminal.ask import Flags, ask_main

    with ExitStack() as started:
        try:
            folder = started.enter_context(tempfile.TemporaryDirectory(prefix="venice-agent-demo-"))
            base_url = started.enter_context(stand_in_model())
            config = Path(folder) / "mcp.json"
            server = {"command": sys.executable, "args": ["-m", "venice_terminal_agent.testing.demo_server"]}
            config.write_text(json.dumps({"mcpServers": {"demo": server}}), encoding="utf-8")
        except OSError as error:  # no loopback port, no temporary folder
            return fail(f"demo: the stand-ins cannot start: {error.strerror or error}")
        os.environ.update(DEMO_ENVIRONMENT)
        print(f"venice-agent demo: {INTRO}", file=sys.stderr)
        flags = Flags(
            model=MODEL, base_url=base_url, mcp_config=config, yes=yes, json_output=json_output, private=True
        )
        return ask_main(question, flags)


@contextmanager
def stand_in_model() -> Iterator[str]:
    """The scripted model server, on 127.0.0.1 in a thread of its own; its base URL."""
    import asyncio
    import threading

    from ..testing.fake_venice import FakeVenice

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="stand-in model", daemon=True)
    thread.start()
    server = FakeVenice(SCRIPT)
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result()
        yield server.base_url
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
