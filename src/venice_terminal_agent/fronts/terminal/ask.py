"""`venice-agent "question"` (one answer, then exit) and bare `venice-agent` (the REPL).

Any settings problem is one line on stderr and exit status 2, never a traceback. The parts
(model, MCP servers, tools) come from the composition root, `fronts/runtime.py`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ...config import Settings
from ...core.errors import ConfigError, VeniceAgentError
from ...core.receipt import EXIT_STATUS, USAGE_ERROR_STATUS, Exit
from ..failures import fail, path_problem
from ..settings_load import Flags, load, read_instruction, settings_from
from .console_io import cancellable, cancelled_receipt, quiet_type_ahead

if TYPE_CHECKING:
    from ...agent import Agent
    from ...bot.recording import RecordingAgent
    from ...core.receipt import Receipt
    from ...mcp.server_config import ServerConfig
    from ...mcp.stdio import StdioServer
    from ..runtime import Runtime
    from ..saved_sessions import SavingAgent
    from .startup_spinner import StartupSpinner

__all__ = ["Flags", "ask_main", "settings_from"]

NO_FUNCTION_CALLING = "none: /models says this model cannot call tools, so questions run without them"
E2EE_TOOLS = "none: end-to-end encrypted (E2EE), so no tools, web search or attachments (Venice allows none)"
E2EE_LINE = (
    "private: end-to-end encrypted; the attestation is checked before the first request, "
    "and every message and every piece of the answer is encrypted (the receipt says what was verified)"
)


def ask_main(question: str | None, flags: Flags) -> int:
    """The whole command; returns the process exit status."""
    from ..text import as_typed
    from .console_io import piped_material, read_stdin

    question = as_typed(question) if question is not None else None
    if question == "-":  # the whole of stdin is the question
        question = read_stdin().strip()
        if not question.strip():
            return fail("venice-agent - reads the question from stdin, and stdin was empty")
    elif question is not None and (material := piped_material()) and material.strip():
        flags = flags.replace(material=material)
    if question is not None and not question.strip():
        return fail("the question is empty; ask something, or run venice-agent alone to chat")
    if flags.json_output and question is None:
        return fail('--json needs a question: venice-agent --json "question"')
    if problem := path_problem(flags.root, flags.mcp_config):
        return fail(problem)
    if sum(map(bool, (flags.continue_, flags.resume, flags.fork))) > 1:
        return fail("-c, --resume and --fork each name the session to go on from: give one")
    if flags.e2ee and flags.attach:
        from ...agent import E2EE_NO_ATTACHMENTS

        return fail(E2EE_NO_ATTACHMENTS)
    if flags.system is not None and (flags.continue_ or flags.resume or flags.fork):
        return fail("-s adds to a new conversation's system prompt; a resumed session keeps its own")
    try:
        settings, servers = load(flags)
        settings.require_venice_key()
        flags = flags.replace(system=read_instruction(flags.system))
        extras = _extras(flags)  # the files and the schema are read before any request
    except ConfigError as error:
        return fail(error.message)
    if (flags.continue_ or flags.resume or flags.fork) and not settings.venice_agent_sessions:
        from ..saved_sessions import sessions_off

        return fail(sessions_off())

    with quiet_type_ahead():  # from the first moment: keys typed now are read by the first prompt
        return _start(settings, flags, question, servers, extras)


def _start(
    settings: Settings, flags: Flags, question: str | None, servers: list[ServerConfig], extras: Any
) -> int:
    started: list[StdioServer] = []
    if servers:
        from ..head_start import head_start

        # The servers first: a Python server's start-up is the longest wait of all (over a second),
        # and spawning takes a few ms, Rich's import for the spinner 60-80 ms of CPU (issue 21).
        servers, started = head_start(servers)  # they boot while the SDKs import below
    from .render import make_console
    from .startup_spinner import StartupSpinner

    # Then at once, before the SDK imports the spinner waits for: never a blank screen.
    spinner = StartupSpinner(
        make_console(stderr=True),
        base_url=None if settings.venice_model else settings.venice_base_url,
        servers=[server.name for server in servers],
    ).start()
    try:
        return asyncio.run(run_session(settings, flags, question, servers, spinner, extras))
    except VeniceAgentError as error:  # e.g. the model server failed before the first question
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:  # Ctrl+C during start-up: nothing was asked yet
        return fail("interrupted", EXIT_STATUS[Exit.CANCELLED])
    finally:
        spinner.stop()
        for server in started:
            server.discard()


def cached_list_note(server: str, listed_at: float) -> str:
    """The line under the banner when a server's cached tool list stands in for it."""
    import time

    age = max(0, round(time.time() - listed_at))
    ago = f"{age} s" if age < 120 else f"{age // 60} min" if age < 7200 else f"{age // 3600} h"
    return (
        f"{server}: its tools as listed {ago} ago (cached); it starts, and is listed again, before any call"
    )


def _no_tools(agent: Any) -> str | None:
    """Why the banner's tools line says none, when it does."""
    if agent.private is not None:
        return E2EE_TOOLS
    return None if agent.calls_functions else NO_FUNCTION_CALLING


def _extras(flags: Flags) -> dict[str, Any]:
    """The attachments and the schema, read and checked (`ConfigError`), as Agent options."""
    extras: dict[str, Any] = {}
    if flags.attach:
        from ...model.attachments import read_attachment

        extras["attachments"] = [read_attachment(path) for path in flags.attach]
    if flags.schema is not None:
        from ...model.structured import load_schema

        extras["schema"] = load_schema(flags.schema)
    return extras


def _before_asking(runtime: Runtime, flags: Flags, extras: dict[str, Any], warn: Any) -> dict[str, Any]:
    """The Agent options once the model's capabilities are known; `ConfigError` for what the
    model cannot take (said before any request)."""
    facts, model = runtime.facts, runtime.model or ""
    private, _ = runtime.privacy()
    attachments = extras.get("attachments", [])
    if private is not None and (attachments or flags.mcp_config or flags.tools):
        from ...agent import E2EE_NO_ATTACHMENTS

        raise ConfigError(
            E2EE_NO_ATTACHMENTS
            if attachments
            else f"{model} is end-to-end encrypted, and Venice allows no tools with E2EE: "
            "drop --mcp-config / --tools, or use --no-e2ee"
        )
    if attachments and facts is not None:  # the module (mimetypes, base64) only for -a
        from ...model.attachments import refusal

        if (reason := refusal(attachments, model, facts.vision, facts.max_images)) is not None:
            raise ConfigError(reason)
    if "schema" in extras:
        if private is not None:
            warn(
                "--schema: under E2EE the schema goes inside the encrypted question, and the answer is checked"
            )
        elif facts is not None and facts.response_schema is False:
            warn(
                f"--schema: {model} takes no response schema (/models supportsResponseSchema false): "
                "the schema goes in the question instead, and the answer is checked against it"
            )
    return {**extras, "attachments": [item.part for item in attachments]}


async def run_session(
    settings: Settings,
    flags: Flags,
    question: str | None,
    servers: list[ServerConfig],
    spinner: StartupSpinner | None = None,
    extras: dict[str, Any] | None = None,
) -> int:
    """The whole program once settings are loaded; returns the exit status."""
    from ...core.context import window_line
    from ...model.models import balance, deprecation_notice
    from ..runtime import Opening, open_runtime
    from ..text import catalogue_searched, files_line, material_note, safe
    from .person import TerminalPerson
    from .plain_console import say
    from .render import banner, make_console

    # A question asked once keeps stdout for its answer and receipt line (`> answer.txt`), or
    # for the receipt alone under --json; the banner, tool lines and warnings go to stderr.
    console = make_console(stderr=question is not None)
    # Warnings go to stderr always: `venice-agent "q" > answer.txt` holds the answer alone.
    warnings = console if console.stderr else make_console(stderr=True)

    def warn(message: str) -> None:
        say(warnings, f"venice-agent: {safe(message)}", "yellow", soft_wrap=True)

    opened = None
    if flags.continue_ or flags.resume or flags.fork or settings.venice_agent_sessions or question is None:
        from ..saved_sessions import open_session

        opened = await open_session(flags, settings, settings.secrets(servers))
        stored = opened.session.info.model if opened is not None and opened.session is not None else None
        if stored and flags.model is None:  # a resumed session goes on with its model unless --model
            settings = settings.model_copy(update={"venice_model": stored})
    tool_lists = None  # with no server there is no list to keep (nor its module to import)
    if servers:
        from ...mcp.list_cache import default_cache

        # One question: the servers' cached lists open it, and they start only for a call (issue 21).
        tool_lists = default_cache(settings.mcp_list_cache_hours, write=not flags.private)
    person = TerminalPerson(console, for_session=question is None)  # the REPL: a yes may hold
    opening = Opening(root=flags.root, watch=spinner, tool_lists=tool_lists, defer=question is not None)
    async with open_runtime(settings, servers, person, opening) as runtime:
        for failure in runtime.mcp.failures:
            warn(failure)
        runtime.e2ee = flags.e2ee
        try:
            options = _before_asking(runtime, flags, extras or {}, warn)
        except ConfigError as error:
            return fail(error.message)
        base = runtime.agent(
            runtime.consented(),
            instruction=flags.system,
            asking=flags.asking(),
            **options,
        )
        agent: Agent | RecordingAgent | SavingAgent = runtime.recording(base, warn)
        notes: list[str] = []
        if question is None or opened is not None or flags.private:
            from ..saved_sessions import attach

            agent, notes = attach(agent, base, opened, settings, flags, runtime.model or "", warn)
        if not flags.quiet:
            banner(  # on stderr always: a piped REPL's stdout holds its answers and receipts
                warnings,
                model=runtime.model or "",
                apify=runtime.apify,
                tools=base.offered(base.history),  # what the model is shown (none: it cannot call tools)
                repl=question is None,
                balance=balance(runtime.model_client.headers),
                files=None if base.private is not None else files_line(settings.file_tools, flags.root),
                no_tools=_no_tools(base),
                context=window_line(base.context_window, base.context_source),
                searched=catalogue_searched(base.tools),
            )
        if base.private is not None:
            notes.insert(0, E2EE_LINE)
        notes += [cached_list_note(name, entry.listed_at) for name, entry in runtime.mcp.cached.items()]
        for note in notes:
            say(warnings, f"  {safe(note)}", "dim", soft_wrap=True)
        info = runtime.facts.info if runtime.facts is not None else None
        if old := deprecation_notice(runtime.model or "", info, runtime.model_client.headers):
            warn(old)  # at start, once: not again when a response's header says it
            base.deprecation_said = True
        if (above := await cap_above_balance(runtime)) is not None:
            warn(above)
        if flags.material is not None:
            say(warnings, f"  {material_note(flags.material)}", "dim", soft_wrap=True)
        try:
            return await _converse(runtime, flags, question, agent, console)
        finally:
            if hasattr(agent, "close"):
                await agent.close()


async def cap_above_balance(runtime: Runtime) -> str | None:
    """The line said before the question when --max-usd is above the account's USD balance:
    from Venice's balance header of the start-up requests, else `GET /billing/balance` (asked
    only when a cap is set). Nothing when the balance cannot be known."""
    from ...core.errors import ModelError
    from ...core.wording import cap_above_balance as wording
    from ...model.models import Balance

    cap = runtime.settings.max_usd
    if cap is None:
        return None
    headers = runtime.model_client.headers
    balance = Balance(
        usd=_amount(headers.get("x-venice-balance-usd")), diem=_amount(headers.get("x-venice-balance-diem"))
    )
    if balance.usd is None:
        try:
            balance = Balance.from_body(await runtime.model_client.read("billing/balance")) or balance
        except ModelError:
            return None  # the question itself will say what is wrong with the server
    if balance.usd is None or cap <= balance.usd or (balance.diem or 0) > 0 or balance.currency == "DIEM":
        return None  # DIEM pays first: the USD balance alone does not say the cap is out of reach
    return wording(cap, balance.usd)


def _amount(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


async def _converse(runtime: Runtime, flags: Flags, question: str | None, agent: Any, console: Any) -> int:
    """The REPL, or the one question; returns the exit status."""
    from ..text import with_material
    from .render import Renderer, make_console, receipt_json

    if question is None:
        from .console_io import reads_a_pipe, terminal_reader
        from .repl import Repl

        piped = reads_a_pipe()
        reader = terminal_reader(save_history=runtime.settings.save_history)
        repl = Repl(
            agent,
            console,
            reader,
            reload=runtime.mcp.reload,
            mcp=runtime.mcp,
            budget=flags.budget,
            echo=piped,
            warnings=make_console(stderr=True) if piped else None,
        )
        await repl.run()
        # Read from a pipe, the session ends with its last question's status, as a script would.
        return status(runtime, repl.last) if piped and repl.last is not None else 0
    renderer = Renderer(
        console, console if flags.json_output else make_console(), quiet_thinking=flags.quiet_thinking
    )
    try:
        asked = with_material(question, flags.material)
        receipt = await cancellable(
            agent.ask(asked, events=renderer, budget=flags.budget, local_data=flags.material is not None)
        )
    except asyncio.CancelledError:
        receipt = cancelled_receipt()
        renderer.finish(receipt)
    renderer.close()
    if flags.json_output:
        sys.stdout.write(receipt_json(receipt) + "\n")
        sys.stdout.flush()
    return status(runtime, receipt)


def status(runtime: Runtime, receipt: Receipt) -> int:
    """The exit status of a question: a key refused is the receipt's own exit, key_rejected
    (13); money refused (402) on the first request is the person's setup to fix (2)."""
    if receipt.stopped_because is Exit.MODEL_ERROR and runtime.model_client.payment_refused:
        return USAGE_ERROR_STATUS
    return receipt.exit_status
