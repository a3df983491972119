"""The `venice-agent` command's entry point (`python -m venice_terminal_agent` too).

Its one job is to turn the garbage collector off before anything heavy is imported: Typer and
our command tree alone allocate tens of thousands of objects and free almost none, so the
collector's passes over them are wasted (17 passes, about 10 ms of `--help`, issue 21).
`cli.app.main` keeps it off; a library user who imports `cli.app` keeps their collector.
"""

import gc


def main() -> None:
    gc.disable()
    from .app import main as venice_agent

    venice_agent()
