"""The `venice-agent` command's entry point (`python -m venice_terminal_agent` too).

It turns the garbage collector off before anything heavy is imported: Typer and our command
tree alone allocate tens of thousands of objects and free almost none, so the collector's
passes over them are wasted (17 passes, about 10 ms of `--help`, issue 21). `cli.app.main`
keeps it off; a library user who imports `cli.app` keeps their collector.

A command that never opened the runtime (`--help`, `run`, `config`, `sessions`…; the
runtime freezes start-up's objects and turns the collector back on) ends with it still off,
and the interpreter's last act would be one full collection over every object start-up made:
about a sixth of `--help`'s CPU. Freezing them first leaves that pass nothing to scan; no
command of those keeps anything open that a collection at exit would close.

Python's warnings (a library's deprecation, say) are notes for that library's users, the
developers of this program: a person sees what matters of them in our words (the fixes go to
the causes), and none of them as Python prints them, with a site-packages path. `-W` or
PYTHONWARNINGS shows them again.

What we print holds characters an ASCII or Latin-1 locale cannot write (the receipt's `·`, a
call's `→`, a model's answer). Python's UTF-8 mode covers the C locale on its own, but not an
ISO-8859 locale or `PYTHONUTF8=0`: there, stdout and stderr write a `?` for such a character
instead of ending the run in an internal error after its money was spent.
"""

import gc
import sys
import warnings


def main() -> None:
    gc.disable()
    if not sys.warnoptions:
        warnings.simplefilter("ignore")
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "encoding", None) != "utf-8":  # as a UTF-8 locale names it: nothing to do
            writes_what_it_can(stream)
    try:
        from .app import main as venice_agent

        venice_agent()
    finally:
        if not gc.isenabled():  # never turned back on: the runtime was not opened
            gc.freeze()


def writes_what_it_can(stream: object) -> None:
    """A standard stream whose encoding is not UTF-8 writes `?` for what it cannot encode."""
    from ..core.scrub import writes_utf8  # stdlib only: nothing more on start-up's path

    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and not writes_utf8(stream):
        reconfigure(errors="replace")
