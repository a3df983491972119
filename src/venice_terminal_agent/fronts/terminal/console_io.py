"""Terminal plumbing of the terminal front: Ctrl+C, reading lines, the prompt's history. One-line
errors and crashes, which every front says alike, are `fronts/failures.py`; a sign-in in the
browser, `fronts/person.py`."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from ...core.defaults import APP_NAME
from ...core.receipt import Exit, Receipt

T = TypeVar("T")
HISTORY_FILE = "history"
PROMPT = "› "

ReadLine = Callable[[], Awaitable[str]]  # raises EOFError at the end of the input


async def cancellable(work: Awaitable[T]) -> T:
    """Run `work` as a task that Ctrl+C cancels (instead of killing the whole program).

    The agent absorbs the cancellation and hands back a `cancelled` receipt with the
    conversation rolled back, so the caller carries on (the REPL returns to its prompt).
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        installed = False  # not the main thread, or no signals here: Ctrl+C keeps its default
    try:
        return await task
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, previous)  # asyncio.run's own handler, back in place


def cancelled_receipt() -> Receipt:
    """For a question cancelled before the agent could even start it."""
    return Receipt(steps=(), stopped_because=Exit.CANCELLED, refusal="cancelled before an answer")


def history_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / HISTORY_FILE


def piped_material() -> str | None:
    """All of stdin when it is a pipe or a file (`cat notes.md | venice-agent "…"`, `< notes.md`),
    else None: a terminal, /dev/null, a socket or no stdin bring nothing (and are not waited on)."""
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return read_stdin()


def read_stdin() -> str:
    """The whole of stdin, as text (bytes that are not UTF-8 become U+FFFD)."""
    return sys.stdin.buffer.read().decode("utf-8", "replace")


def reads_a_pipe() -> bool:
    """Questions come from a pipe or a file (`venice-agent < questions.txt`), not a person."""
    return not (sys.stdin.isatty() and sys.stdout.isatty())


@contextmanager
def quiet_type_ahead() -> Iterator[None]:
    """The terminal does not echo keys itself while the command runs; prompts still show them.

    Keys typed while no prompt reads (start-up, a question running) wait in the terminal, and
    the next prompt_toolkit prompt (the REPL's, `chat`'s, a consent question) reads them and
    shows them as its input. Echoed by the terminal as well, over a spinner or an answer, they
    would be on the screen twice. Only when stdin and stdout are the terminal: behind a pipe
    (`| less`) a pager may own the terminal's modes. They come back as they were at the end."""
    if reads_a_pipe() or sys.platform == "win32":
        yield
        return
    import termios

    fd = sys.stdin.fileno()
    try:
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO  # the local modes; ICANON and ISIG stay: Ctrl+C still interrupts
        termios.tcsetattr(fd, termios.TCSANOW, quiet)  # not TCSAFLUSH: keys typed so far are kept
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        with suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def terminal_reader(*, save_history: bool) -> ReadLine:
    """`prompt_async` with history (in memory unless asked) and Ctrl+C that clears or leaves.

    Without a terminal (`venice-agent < questions.txt`) lines are read plainly, one question
    each, with no prompt drawn and no history kept.
    """
    if reads_a_pipe():
        return piped_reader()
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    if save_history:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(path))
    else:
        history = InMemoryHistory()

    keys = KeyBindings()

    @keys.add("c-c")
    def _interrupt(event: Any) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()  # Ctrl+C with something typed: start the line over
        else:
            event.app.exit(exception=KeyboardInterrupt())  # on an empty prompt: leave

    session: Any = PromptSession(history=history, key_bindings=keys)

    async def read_line() -> str:
        return await session.prompt_async(PROMPT)

    return read_line


def piped_reader() -> ReadLine:
    """Lines (without their newline) from a pipe or a file, read on a daemon thread so Ctrl+C
    never waits on it. The one reader of piped input, for the REPL and for `chat`."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\r\n"))
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except (RuntimeError, OSError, ValueError):
            pass  # the program is leaving (loop closed) or stdin went away

    threading.Thread(target=pump, name="stdin lines", daemon=True).start()

    async def read_line() -> str:
        line = await lines.get()
        if line is None:
            raise EOFError
        return line

    return read_line
