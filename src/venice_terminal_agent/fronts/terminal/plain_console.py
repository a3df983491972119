"""The console for a pipe or a file: Rich's bytes, without importing Rich (issue 21).

Into a pipe, a Rich console made by `render.make_console` (markup, emoji and highlighting off,
`soft_wrap` on) writes each line as it is: no colour, no wrapping, no cropping. What it does
change is small and copied here exactly: it drops five control characters (Rich's
`control.strip_control_codes`: BEL, BS, VT, FF, CR), writes each `print` in one `write` and
flushes, and on a broken pipe points stdout at /dev/null and exits with 1. That is the whole
one-shot path into a pipe, and importing `rich.console` and `rich.text` for it cost 30-40 ms of
a 0.5 s answer.

Anything else goes to a real Rich console made the same way, on first use: a tab (Rich expands
it to the next stop by cell width), a renderable other than a string (a Rich `Text`, a table),
an option such as `overflow`, and every other attribute (`width`, `status`…). So the bytes are
always Rich's; tests/test_plain_console.py compares them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import IO, Any

# rich.control.STRIP_CONTROL_CODES: the characters Rich's Text removes from what it prints.
_STRIP = dict.fromkeys((7, 8, 11, 12, 13))
# print() options that change what Rich writes into a pipe: left to Rich itself.
_RICH_ONLY = ("justify", "overflow", "no_wrap", "width", "height", "new_line_start")

Pieces = str | Sequence[tuple[str, str]]  # one text, or (text, style) pieces of one line


def plain_target(file: IO[str] | None, stderr: bool) -> bool:
    """Whether Rich would write to this file as to a pipe, with nothing of its own to decide:
    `isatty()` says no, and no environment variable, notebook, IDLE or Windows console
    could make Rich think otherwise (rich/console.py: `is_terminal`, `_write_buffer`)."""
    import builtins

    if sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False  # Windows' legacy console writer; IPython or Jupyter (Rich's _is_jupyter)
    # FORCE_COLOR and TTY_COMPATIBLE make Rich treat a pipe as a terminal (colour, wrapping).
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    stdin_module = getattr(sys.stdin, "__module__", None)
    if isinstance(stdin_module, str) and stdin_module.startswith("idlelib"):
        return False
    target = file or (sys.stderr if stderr else sys.stdout)
    if target is None or hasattr(target, "rich_proxied_file"):
        return False  # pythonw's missing stream; Rich's own redirection while it draws
    isatty = getattr(target, "isatty", None)
    if isatty is None:
        return False
    try:
        return not isatty()
    except ValueError:  # a closed file: Rich's business
        return False


class PlainConsole:
    """What `make_console` returns for a pipe or a file: `print` of strings, `.file`,
    `.stderr`, `.soft_wrap` and `.is_terminal` (False) of its own; the rest is Rich's."""

    is_terminal = False

    def __init__(
        self, file: IO[str] | None = None, *, stderr: bool = False, width: int | None = None
    ) -> None:
        self._file = file
        self.stderr = stderr
        self.soft_wrap = True  # as make_console sets it when Rich's is not a terminal
        self._width = width
        self._console: Any = None

    @property
    def file(self) -> IO[str]:
        """Looked up at each use, as Rich does: sys.stdout may be replaced after we are made."""
        return self._file or (sys.stderr if self.stderr else sys.stdout)

    @file.setter
    def file(self, new_file: IO[str]) -> None:
        self._file = new_file
        if self._console is not None:
            self._console.file = new_file

    def rich(self) -> Any:
        """The Rich console this one stands for, made as make_console makes it (once)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self._file,
                stderr=self.stderr,
                width=self._width,
                markup=False,
                emoji=False,
                highlight=False,
            )
        self._console.soft_wrap = self.soft_wrap
        return self._console

    def __getattr__(self, name: str) -> Any:  # only for what is not defined here
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.rich(), name)

    def print(
        self,
        *objects: Any,
        sep: str = " ",
        end: str = "\n",
        style: Any = None,
        markup: bool | None = None,
        emoji: bool | None = None,
        highlight: bool | None = None,
        soft_wrap: bool | None = None,
        crop: bool = True,
        **options: Any,
    ) -> None:
        wrap = self.soft_wrap if soft_wrap is None else soft_wrap
        if (
            not wrap  # Rich wraps and crops at its width
            or markup or emoji or highlight
            or any(options.get(name) is not None for name in _RICH_ONLY)
            or set(options) - set(_RICH_ONLY)
            or not all(type(item) is str for item in objects)
            or "\t" in sep
            or any("\t" in item for item in objects)
        ):  # fmt: skip
            self.rich().print(
                *objects, sep=sep, end=end, style=style, markup=markup, emoji=emoji, highlight=highlight,
                soft_wrap=soft_wrap, crop=crop, **options,
            )  # fmt: skip
            return
        if objects:
            text = sep.join(objects).translate(_STRIP) + end
        else:
            text = end  # Rich: a NewLine for "\n", else an empty text and `end`
        self._write(text)

    def _write(self, text: str) -> None:
        file = self.file
        try:
            try:
                file.write(text)
            except UnicodeEncodeError as error:  # Rich's hint, word for word
                error.reason = (
                    f"{error.reason}\n*** You may need to add PYTHONIOENCODING=utf-8 to your environment ***"
                )
                raise
            file.flush()
        except BrokenPipeError:  # Rich's on_broken_pipe: `venice-agent q | head -1` ends quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(1) from None


def say(console: Any, text: Pieces, style: str = "", **options: Any) -> None:
    """Print one line of ours on either console: `text` in `style`, or (text, style) pieces
    over a line in `style`. A Rich console gets the `Text` it always got; a plain one the bare
    string (a style writes nothing into a pipe), so the one-shot path never imports Rich."""
    if isinstance(console, PlainConsole):
        console.print(text if isinstance(text, str) else "".join(piece for piece, _ in text), **options)
        return
    from rich.text import Text

    console.print(
        Text(text, style=style) if isinstance(text, str) else Text.assemble(*text, style=style), **options
    )
