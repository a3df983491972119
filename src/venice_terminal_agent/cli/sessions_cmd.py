"""`venice-agent sessions list|show|export|import|delete`: the saved conversations
(docs/sessions.md). None of them creates the sessions file: with none yet, they say so. Exported
files are created readable by you alone (0600). The bot's chats (`chat`, `serve`) are in
their own store and never listed here.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .group import command_group

IdArgument = Annotated[str, typer.Argument(help="The session's id (or a unique start of it), or latest.")]


class Format(StrEnum):
    jsonl = "jsonl"
    md = "md"


SESSIONS_HELP = """The saved conversations: list, show, export, import, delete (docs/sessions.md).

Sessions are off until you turn them on (venice-agent config set sessions on, or --save for
one run); then each conversation is saved, to go on with later.

\b
venice-agent sessions list                     # this folder's, the latest first
venice-agent -c "and then?"                    # go on with the latest of this folder
venice-agent --resume a1b2c3d4 "what next?"    # or with one by its id
venice-agent sessions export latest --format md > talk.md
venice-agent sessions delete --older-than 30d
"""


def add_sessions_commands(app: typer.Typer) -> None:
    group = command_group(app, "sessions", SESSIONS_HELP)
    group.command("list")(sessions_list)
    group.command("show")(sessions_show)
    group.command("export")(sessions_export)
    group.command("import")(sessions_import)
    group.command("delete")(sessions_delete)


def sessions_list(
    all_folders: Annotated[
        bool, typer.Option("--all", help="Every folder's sessions, not only this folder's.")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
) -> None:
    """List this folder's saved sessions, the latest first (--all: every folder's).

    Each line: id, title (the first question), model, questions, tokens, cost, last used.

    \b
    venice-agent sessions list
    venice-agent sessions list --all --json | jq '.[0].id'

    Exit status: 0 (also when there are none), 2 the sessions file cannot be read.
    """
    raise typer.Exit(_run(_list(all_folders, json_output)))


def sessions_show(session: IdArgument) -> None:
    """Show a saved session: what it is, then its conversation with tool calls and receipts.

    \b
    venice-agent sessions show a1b2c3d4
    venice-agent sessions show latest

    Exit status: 0 shown, 2 no such session or the file cannot be read.
    """
    raise typer.Exit(_run(_show(session)))


def sessions_export(
    session: IdArgument,
    format: Annotated[
        Format, typer.Option("--format", help="jsonl (to import again) or md (to read).")
    ] = Format.jsonl,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (0600) instead of stdout.")
    ] = None,
) -> None:
    """Export a saved session: JSONL (a header line with the model and receipts, then one
    OpenAI-format message per line) or a Markdown transcript.

    \b
    venice-agent sessions export a1b2c3d4 --format jsonl -o talk.jsonl
    venice-agent sessions export latest --format md > talk.md

    Exit status: 0 exported, 2 no such session, or the file cannot be read or written.
    """
    raise typer.Exit(_run(_export(session, format, output)))


def sessions_import(
    file: Annotated[Path, typer.Argument(help="A JSONL file written by sessions export.")],
) -> None:
    """Import a session from our JSONL export, as a new session (its id is printed).

    \b
    venice-agent sessions import talk.jsonl
    venice-agent --resume "$(venice-agent sessions import talk.jsonl)" "and then?"

    Exit status: 0 imported, 2 the file is not our export or cannot be read.
    """
    from ..core.errors import StoreError
    from ..core.files import IMPORT_LIMIT, read_text

    try:
        text = read_text(file, str(file), IMPORT_LIMIT, StoreError)
    except StoreError as problem:
        raise typer.Exit(_run(_raise(problem))) from None
    raise typer.Exit(_run(_import(text, str(file))))


def sessions_delete(
    session: Annotated[str | None, typer.Argument(help="The session's id (or a unique start of it).")] = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="AGE", help="Every session last used before AGE: 30d, 12h, 2w."),
    ] = None,
) -> None:
    """Delete a saved session, or every session not used for a while.

    \b
    venice-agent sessions delete a1b2c3d4
    venice-agent sessions delete --older-than 30d

    Exit status: 0 deleted (also none), 2 no such session, a bad AGE, or the file cannot be written.
    """
    raise typer.Exit(_run(_delete(session, older_than)))


# ---- bodies ----


def _run(work: Any) -> int:
    import asyncio  # here: the helps never import it

    from ..core.errors import VeniceAgentError
    from ..fronts.failures import fail

    try:
        result: int = asyncio.run(work)
        return result
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status, command="venice-agent sessions")


def _store() -> Any:
    """The sessions file, or None when there is none yet (it is never created here)."""
    from ..fronts.saved_sessions import sessions_path
    from ..store.sessions import SessionStore

    path = sessions_path()
    return SessionStore(path) if path.exists() else None


def _none_yet() -> int:
    from ..fronts.saved_sessions import ENABLE, sessions_path

    print(f"no saved sessions yet (they are kept in {sessions_path()} once on: {ENABLE})")
    return 0


async def _list(all_folders: bool, json_output: bool) -> int:
    import json

    from ..core.costs import spent
    from ..fronts.saved_sessions import folder, short_tokens
    from ..fronts.text import safe

    store = _store()
    if store is None:
        if json_output:
            print("[]")
            return 0
        _none_yet()
        _point_to_logs()
        return 0
    async with store:
        found = await store.listing(None if all_folders else folder())
    if json_output:
        print(json.dumps([info.to_dict() for info in found], ensure_ascii=False, indent=2))
        return 0
    if not found:
        print("no saved sessions in this folder (sessions list --all shows every folder's)")
        _point_to_logs()
        return 0
    for info in found:
        where = f" · {safe(info.folder)}" if all_folders else ""
        print(
            f"{info.id}  {safe(info.title)}  · {safe(info.model or '?')} · {info.questions} q · "
            f"{short_tokens(info.tokens)} · {spent(info.cost, info.cost_unknown)} · {_when(info.updated)}{where}"
        )
    _point_to_logs()
    return 0


def _point_to_logs() -> None:
    """The runs store (the chat bot's, and the agent's with --db) is another history: said when
    it is there."""
    import sys

    from ..store.schema import resolve_db_path

    if resolve_db_path().exists():
        print(
            "the chat bot's runs (and the agent's with --db) are not listed here: venice-agent logs",
            file=sys.stderr,
        )


async def _load(ref: str) -> Any:
    from ..core.errors import StoreError

    store = _store()
    if store is None:
        raise StoreError("no saved sessions yet")
    async with store:
        info = await store.find(ref)
        return await store.load(info.id)


async def _show(ref: str) -> int:
    from ..fronts.text import safe

    print(safe(markdown(await _load(ref))), end="")
    return 0


async def _export(ref: str, format: Format, output: Path | None) -> int:
    from ..store.session_export import export_jsonl

    session = await _load(ref)
    text = export_jsonl(session) if format is Format.jsonl else markdown(session)
    if output is None:
        print(text, end="")
    else:
        write_private(output, text)
        print(f"exported {session.info.id} to {output}", flush=True)
    return 0


async def _raise(error: Exception) -> int:
    raise error


async def _import(text: str, where: str) -> int:
    from ..fronts.saved_sessions import sessions_path
    from ..store.session_export import parse_jsonl
    from ..store.sessions import SessionStore

    header, messages, receipts = parse_jsonl(text, where)
    async with SessionStore(sessions_path()) as store:
        print(await store.import_session(header, messages, receipts))
    return 0


async def _delete(ref: str | None, older_than: str | None) -> int:
    import time

    from ..core.errors import ConfigError

    if (ref is None) == (older_than is None):
        raise ConfigError("give a session's id or --older-than AGE (one of them)")
    age = parse_age(older_than) if older_than is not None else None
    store = _store()
    if store is None:
        return _none_yet() if age is not None else await _load(ref or "")
    async with store:
        if age is None:
            ids = [(await store.find(ref or "")).id]
        else:
            cutoff = time.time() - age
            ids = [info.id for info in await store.listing() if info.updated < cutoff]
        count = await store.delete(ids)
    print(
        f"deleted {count} session"
        + ("" if count == 1 else "s")
        + (f" ({', '.join(ids)})" if 0 < count <= 5 else "")
    )
    return 0


AGE = re.compile(r"^(\d+)([mhdw])$")
UNITS = {"m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}


def parse_age(text: str) -> float:
    from ..core.errors import ConfigError

    found = AGE.match(text.strip())
    if found is None:
        raise ConfigError(f"--older-than {text!r}: give a number and a unit, e.g. 30d, 12h, 2w, 90m")
    return int(found.group(1)) * UNITS[found.group(2)]


def write_private(path: Path, text: str) -> None:
    """`text` into `path`, readable and writable by you alone (0600), even if it existed."""
    import os

    from ..core.errors import StoreError

    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as error:
        raise StoreError(f"cannot write {path}: {error.strerror or error}") from None


def _when(at: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def markdown(session: Any) -> str:
    """A readable transcript: the questions, answers, tool calls and results, and each
    question's receipt line."""
    import json

    from ..core.context import MARKER, compacted_line
    from ..core.costs import spent
    from ..core.wording import plural

    info = session.info
    lines = [
        f"# {info.title}",
        "",
        f"session {info.id} · {info.folder} · model {info.model or '?'} · {plural(info.questions, 'question')} · "
        f"{info.tokens:,} tokens · {spent(info.cost, info.cost_unknown)} · last used {_when(info.updated)}",
        "",
    ]
    receipts = iter(session.receipts)
    users = 0
    for message in session.messages:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            continue
        if role == "user":
            if users:
                lines += _receipt_line(next(receipts, None))
            users += 1
            lines += [f"## › {content}", ""]
        elif role == "assistant":
            for tool_call in message.get("tool_calls") or []:
                function = tool_call.get("function") or {}
                lines += [f"→ `{function.get('name')}({function.get('arguments') or ''})`", ""]
            if content:
                lines += [str(content), ""]
        elif role == "tool":
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            lines += ["```", text, "```", ""]
        elif role == MARKER:  # the rounds above stay here; the model went on from a summary of them
            line = compacted_line(message["rounds"], message["tokens_before"], message["tokens_after"])
            lines += [
                f"_{line}_",
                "",
                "> " + str(message["summary"].get("content", "")).replace("\n", "\n> "),
                "",
            ]
    if users:
        lines += _receipt_line(next(receipts, None))
    return "\n".join(lines)


def _receipt_line(item: Any) -> list[str]:
    from ..core.wording import plural

    if not item:
        return []
    receipt = item.get("receipt") or {}
    parts = [f"stopped: {receipt.get('stopped_because', '?')}"]
    if receipt.get("partial"):
        parts[0] += " (partial answer)"
    parts.append(plural(receipt.get("calls", 0), "call"))
    if receipt.get("cost_usd") is not None:
        from ..core.costs import usd

        parts.append(usd(receipt["cost_usd"]))
    elif "cost_usd" in receipt:  # the model was asked, and what it cost is not known
        parts.append("cost unknown")
    return ["_" + " · ".join(parts) + "_", ""]
