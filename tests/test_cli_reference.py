"""docs/cli.md is the commands' own help, current: a flag added, renamed or re-worded without
the page written again fails here, with the command that writes it."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer._click import Context

from venice_terminal_agent.cli.app import app
from venice_terminal_agent.cli.reference import command_paths, reference

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WRITE = "uv run python -m venice_terminal_agent.cli.reference > docs/cli.md"


def test_the_command_reference_is_the_commands_help_as_it_is_now() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), f"docs/cli.md is out of date: {WRITE}"


def test_the_page_says_how_to_write_it_again() -> None:
    assert WRITE in PAGE.read_text(encoding="utf-8")


def sections() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    return dict(re.findall(r"^## (venice-agent[^\n]*)\n\n```text\n(.*?)```", text, flags=re.M | re.S))


def test_every_command_and_each_of_its_options_is_in_the_reference() -> None:
    """The walk misses nothing: each command a person runs has its section, and each of its
    options and arguments is named there."""
    found = sections()
    paths = list(command_paths())
    assert {("tools", "call"), ("serve",), ("sessions", "export"), ()} <= set(paths)
    group = typer.main.get_command(app)
    for path in paths:
        command, context = group, Context(group)
        for name in path:
            command = command.get_command(context, name)
            context = Context(command, parent=context)
        body = found[" ".join(("venice-agent", *path))]
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            names = param.opts if param.param_type_name == "option" else [param.name or ""]
            assert any(name in body for name in names), (path, names)
    assert "--max-usd" in found["venice-agent"]  # the main help carries asking's options
