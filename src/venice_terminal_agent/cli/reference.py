"""docs/cli.md, the command reference, written from the commands themselves.

    uv run python -m venice_terminal_agent.cli.reference > docs/cli.md

It walks the command tree as Typer builds it (every command and subcommand, hidden ones left
out: `ask` is the main help's) and prints each one's `--help` as the command prints it, 80
columns wide and without colour, so the page is the same on every machine and a flag changed
without the page fails `tests/test_cli_reference.py` (as simonw/llm checks docs/help.md with
cog). It lives beside the declarations it reads and is imported by no command: `--help` and
start-up never load it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

WIDTH = 80
HEADER = """\
# Command reference

Every command of `venice-agent` and its `--help`, as the command prints it. This page is
generated from the commands themselves and a test fails when it differs from them; after
changing a command, an argument or an option, write it again:

```sh
uv run python -m venice_terminal_agent.cli.reference > docs/cli.md
```

The manual says what the commands are for, task by task: [the README](../README.md#where-to-read-more).
"""


def command_paths() -> Iterator[tuple[str, ...]]:
    """Every command a person can run or list, in the order `--help` lists them, groups before
    their subcommands; hidden ones (the default `ask`, whose options the main help shows) left out."""
    import typer
    from typer._click import Context

    from .app import app

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        if getattr(command, "hidden", False):
            return
        yield path
        if hasattr(command, "list_commands"):  # a group: its commands are built when asked for
            context = Context(command)
            for name in command.list_commands(context):
                yield from walk(command.get_command(context, name), (*path, name))

    yield from walk(typer.main.get_command(app), ())


def help_text(path: tuple[str, ...]) -> str:
    """`venice-agent PATH --help` as printed on a terminal of WIDTH columns, without colour."""
    from typer.testing import CliRunner

    from .app import app

    result = CliRunner().invoke(
        app, [*path, "--help"], prog_name="venice-agent", terminal_width=WIDTH, color=False,
        env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"},
    )  # fmt: skip
    if result.exit_code != 0:
        raise RuntimeError(f"venice-agent {' '.join(path)} --help failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.splitlines())


def reference() -> str:
    """The whole page: a section per command, its help in a text block."""
    sections = [HEADER]
    for path in command_paths():
        name = " ".join(("venice-agent", *path))
        sections.append(f"## {name}\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(sections)


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
