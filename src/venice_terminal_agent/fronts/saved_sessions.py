"""Sessions in the terminal: which stored conversation a run goes on from (`-c`, `--resume`,
`--fork`), and the conversation saved after each question that kept something.

Sessions are off by default (nothing on disk); on with `config set sessions on`,
VENICE_AGENT_SESSIONS=1, `--save`, or `/save` in the REPL; `--private` keeps a run out of them.
What is saved is the agent's own history after a question ends, so a rolled-back question
(the agent leaves its history as it was) is never saved; only its cost is added to the
session's spend, which `--session-max-usd` counts across resumes. The store is
`store/sessions.py`, imported only when a session is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError, StoreError
from ..core.receipt import Receipt

if TYPE_CHECKING:
    from ..config import Settings
    from ..store.sessions import Session, SessionStore
    from .settings_load import Flags

ENABLE = "venice-agent config set sessions on (or VENICE_AGENT_SESSIONS=1, or --save for one run)"


def sessions_path() -> Path:
    from ..store.sessions import default_sessions_path

    return default_sessions_path()


def sessions_off() -> str:
    """The one line for `-c` (or `--resume`, `--fork`) while sessions are off."""
    return f"sessions are off, so there is no saved conversation to go on from: turn them on with {ENABLE}; they would be kept in {sessions_path()}"


def wanted(flags: Flags) -> str | None:
    """The stored session a run asks for: `latest` (of this folder, `-c`), an id, or None."""
    return "latest" if flags.continue_ else flags.resume or flags.fork


def folder() -> str:
    return str(Path.cwd().resolve())


def short_tokens(count: int) -> str:
    from ..core.context import short

    return f"{short(count)} tokens"


@dataclass
class Opened:
    """The session a run goes on in: its store (None until something is saved), id and past."""

    store: SessionStore
    id: str
    session: Session | None = None  # the stored Session it goes on from, None for a new one
    notes: list[str] = field(default_factory=list)  # said once, after the banner
    claimed: bool = False


async def open_session(flags: Flags, settings: Settings, secrets: list[str]) -> Opened | None:
    """The session this run saves to or goes on from; None when it neither saves nor resumes.
    `ConfigError` (one line, status 2) when the asked-for session cannot be found."""
    ref = wanted(flags)
    saving = bool(settings.venice_agent_sessions) and not flags.private
    if ref is None and not saving:
        return None
    from ..store.sessions import SessionStore, alive, new_id

    store = SessionStore(sessions_path(), secrets=secrets)
    if ref is None:
        return Opened(store, new_id())
    if not store.path.exists():
        raise ConfigError(f"no saved session yet (sessions are kept in {store.path})")
    try:
        await store.open()
        info = await store.find(ref, folder() if flags.continue_ else None)
        notes = []
        session_id = info.id
        if flags.fork:
            session_id = await store.fork(info.id, folder=folder())
            notes.append(f"forked {info.id} as {session_id}: this copy goes its own way")
        elif saving:
            holder = await store.claim(info.id)
            if holder is not None and alive(holder):
                session_id = await store.fork(info.id, folder=folder())
                notes.append(
                    f"session {info.id} is open in another terminal (process {holder}): "
                    f"this run goes on in a fork, {session_id}"
                )
        opened = Opened(store, session_id, await store.load(session_id), notes)
        if saving:
            opened.claimed = await store.claim(session_id) is None
        return opened
    except StoreError as error:
        await store.close()
        raise ConfigError(error.message) from None


def resumed_line(opened: Opened, session: Session) -> str:
    """`resumed a1b2c3 · 12 questions · 48k tokens · $0.031 so far` (`at least $0.031 so far`,
    or `cost unknown`, on a server that does not always say it), for `session` going on."""
    from ..core.costs import spent
    from ..core.wording import plural

    info = session.info
    so_far = "" if info.cost_unknown and not info.cost else " so far"  # not "cost unknown so far"
    return (
        f"resumed {opened.id} · {plural(info.questions, 'question')} · {short_tokens(info.tokens)} · "
        f"{spent(info.cost, info.cost_unknown)}{so_far}"
    )


class SavingAgent:
    """An agent whose conversation is saved after each question that kept something; every
    other attribute is the agent's own. `enabled` False (the REPL with sessions off): nothing
    is saved, nothing is opened, until `/save`."""

    def __init__(
        self,
        agent: Any,
        opened: Opened,
        *,
        enabled: bool,
        base_url: str,
        warn: Callable[[str], None],
        private: bool = False,
    ) -> None:
        self.agent, self.opened, self.enabled, self.private = agent, opened, enabled, private
        self.base_url, self.warn = base_url, warn
        self.base = len(opened.session.messages) if opened.session is not None else 0
        self.questions = len(opened.session.receipts) if opened.session is not None else 0  # this line's
        self.folder = folder()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    @property
    def id(self) -> str:
        return self.opened.id

    @property
    def saved(self) -> bool:
        return self.base > 0

    async def ask(self, question: str, **options: Any) -> Receipt:
        before = len(self.agent.record)
        receipt = await self.agent.ask(question, **options)
        if self.enabled:
            if len(self.agent.record) > before:
                await self.save(question, receipt)
            else:  # rolled back: nothing of it is kept, only what it spent
                await self.save()
        return receipt

    async def save(self, question: str | None = None, receipt: Receipt | None = None) -> bool:
        """Save what is new in the conversation (and the question's receipt); True when saved.
        A store that fails is said through `warn`: saving never fails a question."""
        from ..core.costs import tokens
        from ..store.sessions import Conflict, Save

        history = self.agent.record  # every message as it was, and where it was compacted
        first = next((m.get("content") for m in history if m.get("role") == "user"), None)
        if len(history) <= self.base or first is None:  # nothing new, or nothing asked yet
            if not self.saved:
                return False  # a session is made by the first question kept, never empty
        try:
            await self.opened.store.open()
            if len(history) <= self.base:  # rolled back: only the money counts
                await self.opened.store.spent(self.id, self.agent.spent, self.agent.spent_unknown)
                return False
            save = Save(
                messages=history,
                base=self.base,
                question=question if question is not None else (first if not self.saved else None),
                receipt=receipt.to_dict() if receipt is not None else None,
                model=(receipt.model if receipt is not None else None) or self.agent.model,
                base_url=self.base_url,
                folder=self.folder,
                cost=self.agent.spent,
                cost_unknown=self.agent.spent_unknown,
                tokens=tokens(receipt.usage or {}) if receipt is not None else 0,
                local_data=bool(self.agent.tools.local_data),
                pages=self.agent.pager.next_id,
            )
            try:
                await self.opened.store.save(self.id, save)
            except Conflict:
                moved = self.id
                await self._save_apart(save, first)
                self.warn(
                    f"session {moved} went on in another terminal: this conversation is saved as {self.id}"
                )
            self.base = len(history)
            self.questions += save.receipt is not None and save.question is not None
            return True
        except StoreError as error:
            self.warn(f"the conversation was not saved: {error.message}")
            return False
        except OSError as error:  # the store says its own; a safety net for the disk under it
            self.warn(f"the conversation was not saved: {error.strerror or error}")
            return False

    async def _save_apart(self, save: Any, first: Any) -> None:
        """The session went on elsewhere: this conversation goes on in a fork of the session as
        this terminal last saw it (its messages and receipts), or whole in a new one when that
        session is gone."""
        from ..store.sessions import new_id

        store = self.opened.store
        if self.saved:
            try:
                self.opened.id = await store.fork(
                    self.id, folder=self.folder, upto=(self.base, self.questions)
                )
                await store.save(self.id, save)
                return
            except StoreError:
                pass  # deleted meanwhile: saved whole below
        self.opened.id, self.questions = new_id(), 0
        await store.save(self.id, _whole(save, first))

    async def save_command(self) -> str:
        """`/save`: save the conversation so far and keep saving it; what to say."""
        if self.private:
            return "this run is --private: nothing of it is saved"
        self.enabled = True
        if await self.save():
            return f"saved as session {self.id} in {self.opened.store.path}; saved after each question from now on"
        if self.saved:
            return f"session {self.id} is saved; saved after each question from now on"
        return f"nothing asked yet: session {self.id} is saved from the first question on"

    async def title_command(self, text: str) -> str:
        """`/title TEXT`: the saved session's title."""
        if not text.strip():
            return "/title needs a title, e.g. /title Actors for news"
        if not self.saved:
            return "this conversation is not saved: /save first"
        try:
            await self.opened.store.retitle(self.id, text)
        except StoreError as error:
            return f"the title was not saved: {error.message}"
        return f"session {self.id} is now titled {text.strip()!r}"

    async def sessions_command(self) -> list[str]:
        """`/sessions`: this folder's saved sessions, one line each (this one marked)."""
        from ..core.costs import spent

        if not self.opened.store.path.exists():
            return [f"no saved sessions yet (/save saves this one in {self.opened.store.path})"]
        try:
            await self.opened.store.open()
            found = await self.opened.store.listing(self.folder)
        except StoreError as error:
            return [error.message]
        if not found:
            return ["no saved sessions in this folder yet (/save saves this one)"]
        return [
            f"{'*' if info.id == self.id else ' '} {info.id}  {info.title}  · {info.questions} q · "
            f"{short_tokens(info.tokens)} · {spent(info.cost, info.cost_unknown)}"
            for info in found
        ]

    def clear(self) -> None:
        """A cleared conversation is a new session (the saved one stays as it was)."""
        from ..store.sessions import new_id

        self.agent.clear()
        self.opened.id, self.opened.session, self.base = new_id(), None, 0

    async def close(self) -> None:
        if self.opened.claimed:
            try:
                await self.opened.store.release(self.id)
            except StoreError:
                pass  # the mark of a process that is gone is ignored by the next one anyway
        await self.opened.store.close()


def _whole(save: Any, first: Any) -> Any:
    """`save` as a new session holding the whole conversation."""
    import dataclasses

    return dataclasses.replace(save, base=0, question=save.question or first)


def attach(
    agent: Any,
    base: Any,
    opened: Opened | None,
    settings: Settings,
    flags: Any,
    model: str,
    warn: Callable[[str], None],
) -> tuple[SavingAgent, list[str]]:
    """`agent` going on from the stored session (if any) and saving to it (if sessions are
    on); the lines to say after the banner. `base` is the `Agent` itself (its history)."""
    from ..agent import without_reasoning
    from ..store.sessions import SessionStore, new_id

    enabled = bool(settings.venice_agent_sessions) and not flags.private
    if opened is None:  # the REPL with sessions off: nothing opened unless /save
        opened = Opened(SessionStore(sessions_path(), secrets=settings.secrets()), new_id())
    notes = list(opened.notes)
    if opened.session is not None:
        messages, before = opened.session.messages, opened.session.info.model
        if before and model and before != model:
            messages = without_reasoning(messages)
            notes.append(
                f"this session was with {before}; it goes on with {model} (its reasoning fields left out)"
            )
        info = opened.session.info
        if info.base_url and info.base_url.rstrip("/") != settings.venice_base_url.rstrip("/"):
            notes.append(  # another server may hold other models and prices: said, not refused
                f"this session was with the server at {info.base_url}; it goes on with {settings.venice_base_url}"
            )
        base.resume(messages, spent=info.cost, spent_unknown=info.cost_unknown, local_data=info.local_data)
        base.pager.expire_until(info.pages)  # their pages were not kept: asking says they expired
        notes.insert(0, resumed_line(opened, opened.session))
    if flags.private:
        notes.append("private: nothing of this run is saved")
    elif enabled and opened.session is None:
        notes.append(f"session {opened.id} · saved after each question in {opened.store.path}")
    saving = SavingAgent(
        agent, opened, enabled=enabled, base_url=settings.venice_base_url, warn=warn, private=flags.private
    )
    return saving, notes
