"""`venice-agent doctor`: what the agent would use, and whether each part works.

A short checklist, ✓ or ✗, with one line of advice under each ✗: the settings files in use,
the key (masked), the model server, the model and whether it calls functions, each MCP server
(started or not, its tools, how long it took), Node where a server needs it, and the store
when one is configured. Exit status 0 only when every check passes; `--json` for scripts.
`--probe` adds two tiny model requests: does the server stream tool calls and usage, do the
tools reach the model, is the output limit honoured (`doctor_probe.py`).
It starts the same servers with the same settings as asking would, and asks nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.receipt import USAGE_ERROR_STATUS
from ..core.wording import plural
from ..fronts.text import safe, server_place

if TYPE_CHECKING:
    from ..config import Settings
    from ..mcp.server_config import ServerConfig
    from ..mcp.session import ServerStatus
    from ..model.models import ModelFacts


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    advice: str | None = None  # one line, only for a failed check


def doctor_main(flags: Any, *, json_output: bool, probe: bool = False) -> int:
    checks = asyncio.run(run_checks(flags, probe=probe))
    if json_output:
        report = {"ok": all(check.ok for check in checks), "checks": [asdict(check) for check in checks]}
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            print(f"{'✓' if check.ok else '✗'} {check.name:<{width}}  {safe(check.detail)}")
            if not check.ok and check.advice:
                print(f"  {' ' * width}  → {safe(check.advice)}")
    return 0 if all(check.ok for check in checks) else USAGE_ERROR_STATUS


async def run_checks(flags: Any, *, probe: bool = False) -> list[Check]:
    from ..config import VENICE_KEY_HELP
    from ..core.errors import ConfigError
    from ..fronts.settings_load import load
    from ..mcp.servers_file import default_config_path

    checks = [_settings_files(flags, default_config_path())]

    def bad_mcp_config(error: ConfigError) -> None:
        checks.append(Check("mcp config", False, error.message, "fix the MCP config file named above"))

    try:
        settings, servers = load(flags, on_server_error=bad_mcp_config)  # as every command loads them
    except ConfigError as error:
        return [*checks, Check("settings", False, error.message, "fix the setting named above")]
    key = settings.venice_key_value() or ""
    checks.append(
        Check("key", True, f"VENICE_API_KEY set ({mask(key)})")
        if key
        else Check("key", False, "VENICE_API_KEY is not set", VENICE_KEY_HELP)
    )
    model_checks = _model_checks(settings, key, probe) if key else _no_model()
    (said, facts), (started, catalogue) = await asyncio.gather(model_checks, _mcp_checks(servers, settings))
    checks += said + started
    if catalogue is not None:  # as a question would decide it, with the model's window when known
        checks.append(_search_check(catalogue, settings, getattr(facts, "context_window", None)))
    checks += _node_checks(servers) + await _store_check(settings)
    checks.append(_editor_check(settings, started, model_found=facts is not None))
    checks.append(await _sessions_check(settings))
    from .mcp_front_app import front_line

    checks.append(Check("as MCP server", True, front_line(settings)))
    checks.append(_tracing_check())
    return checks


def _tracing_check() -> Check:
    """Whether runs are traced (the OTEL_* variables) and where the spans and metrics go."""
    from ..telemetry import describe, installed, plan

    asked, said = plan(), describe()
    problems = [line for line in said if "not supported" in line]
    if asked.on and not installed():
        return Check("tracing", False, " · ".join(said), "pip install 'venice-terminal-agent[otel]'")
    if problems:
        return Check("tracing", False, " · ".join(said), "see docs/tracing.md for the variables taken")
    if not asked.on:
        why = "OTEL_SDK_DISABLED=true" if asked.disabled else "set OTEL_EXPORTER_OTLP_ENDPOINT to send traces"
        return Check("tracing", True, f"off ({why}; docs/tracing.md)")
    return Check("tracing", True, " · ".join(said))


def mask(secret: str) -> str:
    """Enough of a key to tell two apart, never enough to use: `sk-…b2c4`."""
    if len(secret) <= 8:
        return "…" * bool(secret)
    return f"{secret[:3]}…{secret[-4:]}"


def _settings_files(flags: Any, user_config: Path) -> Check:
    env = Path(".env")
    parts = [f".env: {env.resolve()}" if env.is_file() else ".env: none in this folder"]
    if flags.no_mcp:
        parts.append("MCP servers: none (--no-mcp)")
    elif flags.mcp_config is not None:
        parts.append(f"MCP servers: {flags.mcp_config} (--mcp-config)")
    elif user_config.is_file():
        parts.append(f"MCP servers: {user_config}")
    else:
        parts.append(f"MCP servers: Apify (no {user_config})")
    parts.append(f"user config folder: {user_config.parent}")
    from ..config import user_config_file

    settings_file = user_config_file()  # `venice-agent config set` writes it
    parts.append(
        f"user config: {settings_file}" if settings_file.is_file() else f"user config: none ({settings_file})"
    )
    return Check("settings", True, " · ".join(parts))


async def _no_model() -> tuple[list[Check], None]:
    return [Check("model", False, "not checked: no key", "set VENICE_API_KEY first")], None


async def _model_checks(settings: Settings, key: str, probe: bool = False) -> tuple[list[Check], Any]:
    """The model's checks, and its facts (its window, as a question reads it) when it was found."""
    from ..core.errors import ConfigError, ModelError
    from ..model.client import VeniceClient
    from ..model.models import ModelFacts

    where = settings.venice_base_url
    async with VeniceClient(key, base_url=where) as client:
        try:
            models = await client.discovery.list_models()
        except ModelError as error:
            advice = "check VENICE_API_KEY" if error.status in (401, 403) else "check VENICE_BASE_URL"
            return [Check("model server", False, f"{where}: {error.message}", advice)], None
        served = plural(len(models), "model") if models else "no model list"
        checks = [Check("model server", True, f"{where} answers ({served})")]
        try:
            model = await client.discovery.resolve_model(settings.venice_model)
        except (ModelError, ConfigError) as error:  # none found, or one the server does not list
            return [*checks, Check("model", False, error.message, "pass --model or set VENICE_MODEL")], None
        facts = await client.discovery.model_facts(
            model
        )  # the window as the agent reads it (llama.cpp: /props)
        account = await _account_checks(client, model)
    calls = ModelFacts.from_listing(models, model).function_calling  # what the agent itself reads
    if calls is False:
        advice = "choose a model that supports function calling (--model or VENICE_MODEL)"
        return [
            *checks,
            Check("model", False, f"{model} does not support function calling", advice),
            *account,
        ], facts
    said = "supports function calling" if calls else "function calling not stated by the server"
    checks += [Check("model", True, f"{model}, {said}"), _context_check(facts, settings), *account]
    if probe:  # what the server really does with a tool (doctor_probe.py)
        from .doctor_probe import probe as run_probe

        checks += [Check(*found) for found in await run_probe(where, key, model)]
    return checks, facts


def _context_check(facts: ModelFacts, settings: Settings) -> Check:
    """The window the agent will count against: an unknown one is said, never guessed."""
    from ..core.context import choose_window, window_line

    window, source = choose_window(facts.context_window, facts.context_source, settings.context_tokens)
    return Check("context window", True, window_line(window, source))


async def _account_checks(client: Any, model: str) -> list[Check]:
    """The balance (`GET /billing/balance`) and the key's rate limits (`GET /api_keys/rate_limits`)
    where the server has them (Venice) and the key may read them; a server without either route
    gets no line, a key that may not read one gets a line that says so."""
    from ..core.errors import ModelError
    from ..core.wording import VENICE_API_SETTINGS
    from ..model.models import Balance, rate_limit_line

    checks = []
    for name, path in (("balance", "billing/balance"), ("rate limits", "api_keys/rate_limits")):
        try:
            body = await client.read(path)
        except ModelError as error:
            if error.status in (401, 403):
                checks.append(Check(name, True, f"this key may not read it ({error.status})"))
            else:
                checks.append(Check(name, False, error.message, "try again later"))
            continue
        if body is None:
            continue  # not Venice: no such route
        if name == "balance":
            balance = Balance.from_body(body)
            if balance is None:
                continue
            empty = balance.can_consume is False
            advice = f"top up at {VENICE_API_SETTINGS}" if empty else None
            detail = balance.line() + (" · cannot pay for requests" if empty else "")
            checks.append(Check(name, not empty, detail, advice))
        elif (line := rate_limit_line(body, model)) is not None:
            checks.append(Check(name, True, line))
    return checks


async def _mcp_checks(servers: list[ServerConfig], settings: Settings) -> tuple[list[Check], list[Any] | None]:
    """A check per server, and the catalogue a question would have (the built-ins and these
    servers' tools); None without servers."""
    if not servers:
        return [], None
    import mcp.client.stdio  # noqa: F401 - imported before the clock starts: times are the servers'

    from ..core.toolbox import CombinedToolbox
    from ..mcp.toolbox import McpToolbox
    from ..tools.builtin import builtin_toolbox
    from ..tools.search import ToolSearch

    started = time.monotonic()
    took: dict[str, float] = {}

    def timed(status: ServerStatus) -> None:
        if status.state in ("ready", "failed"):
            took.setdefault(status.name, time.monotonic() - started)

    checks = []
    async with McpToolbox.open(
        servers, max_result_chars=settings.max_tool_result_chars, on_status=timed
    ) as box:
        for status in box.servers:
            seconds = f"{took.get(status.name, time.monotonic() - started):.2f} s"
            place = server_place(status)  # named as `tools list` names it: the URL it tried
            if status.state == "ready":
                detail = f"started, {plural(status.tools, 'tool')}, {seconds} ({place})"
                checks.append(Check(f"mcp {status.name}", True, detail))
            else:
                reason, _, hint = (status.error or "did not start").partition("; ")
                detail = f"{reason} ({place}; {seconds})"
                checks.append(Check(f"mcp {status.name}", False, detail, hint or None))
        catalogue = ToolSearch(CombinedToolbox(builtin_toolbox(files=settings.file_tools), box)).catalogue()
    return checks, catalogue


def _search_check(catalogue: list[Any], settings: Settings, window: int | None) -> Check:
    """Whether asking would search `catalogue`, and why: the rule a question uses, on the
    model's window (`window`, from its model list or /props) when known."""
    from ..fronts.runtime import search_rule
    from ..fronts.text import searched_line

    rule = search_rule(settings, window)
    why = rule.why(catalogue)
    if rule.searched(catalogue):
        return Check("tools", True, f"{searched_line(len(catalogue))}; {why}")
    return Check("tools", True, f"{plural(len(catalogue), 'tool')}, sent whole with each request; {why}")


def _node_checks(servers: list[ServerConfig]) -> list[Check]:
    needing = [s for s in servers if s.needs_node or Path(s.command or "").name in ("npx", "node")]
    if not needing:
        return []
    names = ", ".join(server.name for server in needing)
    least = max((server.needs_node or 0) for server in needing)
    node = shutil.which("node")
    if node is None:
        return [
            Check(
                "node",
                False,
                f"no `node` on PATH (needed by {names})",
                "install Node.js from https://nodejs.org",
            )
        ]
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return [Check("node", False, f"{node} --version failed ({error})", "reinstall Node.js")]
    major = int(version.lstrip("v").split(".")[0]) if version.lstrip("v")[:1].isdigit() else 0
    if least and major < least:
        advice = f"install Node.js {least} or later and put it first on PATH"
        return [Check("node", False, f"{version or 'unknown version'} at {node}, needed by {names}", advice)]
    return [Check("node", True, f"{version} at {node} (needed by {names})")]


def _editor_check(settings: Settings, started: list[Check], *, model_found: bool) -> Check:
    """What `venice-agent acp` would give an editor: the same parts as asking here, as the
    checks above found them (the model, the MCP servers that started)."""
    from ..core.costs import usd
    from ..core.wording import plural

    if not model_found:
        return Check(
            "editor (ACP)", False, "venice-agent acp: no model to answer with", "fix the model above first"
        )
    servers = [check for check in started if check.name.startswith("mcp ")]
    failed = [check.name.removeprefix("mcp ") for check in servers if not check.ok]
    ready = plural(len(servers) - len(failed), "MCP server")
    if failed:
        ready += f" ({', '.join(failed)} did not start)"

    caps = f"at most {usd(settings.max_usd)} a question" if settings.max_usd is not None else "no money cap"
    consent = (
        "--yes approves every call"
        if settings.auto_approve_tools
        else "calls that need a yes ask in the editor"
    )
    sessions = (  # session/load (initialize says loadSession) only with sessions on
        "each session saved, saved ones can be loaded (session/load)"
        if settings.venice_agent_sessions
        else "sessions off: none can be loaded (session/load)"
    )
    detail = f"venice-agent acp: this model, {ready} and the built-in tools; {caps}; {consent}; {sessions}"
    return Check("editor (ACP)", True, detail)


async def _store_check(settings: Settings) -> list[Check]:
    if not settings.venice_agent_db:
        return []  # the agent keeps nothing unless asked; the chat bot's default store is its own
    from ..core.errors import StoreError
    from ..store.sqlite import Store

    path, missing = _store_path(settings.venice_agent_db)
    if missing is not None:
        return [missing]
    if path is None:
        return [Check("store", True, f"{settings.venice_agent_db} (created on first use)")]
    try:
        async with Store(path, create=False):
            pass
    except StoreError as error:
        return [Check("store", False, error.message, "move the file away or choose another --db")]
    return [Check("store", True, str(path))]


async def _sessions_check(settings: Settings) -> Check:
    """Whether conversations are saved, and where (`-c` finds nothing while they are off)."""
    from ..core.wording import plural
    from ..fronts.saved_sessions import ENABLE, sessions_path

    path = sessions_path()
    state = "on" if settings.venice_agent_sessions else f"off (turn on with {ENABLE})"
    if not path.is_file():
        return Check("sessions", True, f"{state} · {path} (none saved yet)")
    from ..core.errors import StoreError
    from ..store.sessions import SessionStore

    try:
        async with SessionStore(path) as store:
            held = len(await store.listing())
    except StoreError as error:
        return Check("sessions", False, f"{state} · {error.message}", "move the file away")
    return Check("sessions", True, f"{state} · {path} ({plural(held, 'session')} saved)")


def _store_path(chosen: str) -> tuple[Path | None, Check | None]:
    """The existing store file to open, or None when it is yet to be created (or cannot be)."""
    path = Path(os.path.expanduser(chosen))
    if os.path.exists(path):
        return path, None
    folder = path.parent
    if os.path.isdir(folder) and os.access(folder, os.W_OK):
        return None, None
    return None, Check(
        "store", False, f"{path}: its folder is missing or not writable", "choose another --db"
    )
