"""Every command's --help teaches: an example to copy, and the exit statuses a script can test.

The commands are found by walking the app, so a command added later is held to the same rule.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer._click import Context
from typer.testing import CliRunner

from venice_terminal_agent.cli.app import app

CRASHED = "1 a crash (a bug in venice-agent: please report it)"


def leaf_commands() -> list[tuple[str, ...]]:
    """The path of every command a person runs (groups only list theirs; `ask` is the main help's)."""
    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        # A group (Typer's own click): its commands are built when asked for, so ask for them.
        if hasattr(command, "list_commands"):
            context = Context(command)
            for name in command.list_commands(context):
                walk(command.get_command(context, name), (*path, name))
        elif not command.hidden:
            found.append(path)

    walk(typer.main.get_command(app), ())
    return found


def test_the_walk_finds_the_commands() -> None:
    assert {("run",), ("serve",), ("tools", "call"), ("store", "copy"), ("login",)} <= set(leaf_commands())


@pytest.mark.parametrize("path", leaf_commands(), ids=" ".join)
def test_each_command_help_has_an_example_and_its_exit_statuses(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0
    lines = [line.strip() for line in result.stdout.splitlines()]
    usage = "venice-agent " + " ".join(path)
    assert any(line.startswith(usage + " ") for line in lines), f"no example line starting {usage!r}"
    assert "Exit status:" in " ".join(result.stdout.split())
    assert CRASHED in " ".join(result.stdout.split())  # every command may crash, and says how it shows


@pytest.mark.parametrize("command", [[], ["ask"]], ids=["main", "ask"])
def test_the_main_help_lists_the_crash_status_too(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert f"{CRASHED}." in " ".join(result.stdout.split())


def test_the_main_help_lists_the_commands_as_typer_would() -> None:
    """The list under Commands: is written without building each command: it is Typer's own
    list (which builds them all) word for word."""
    from typer.core import TyperGroup

    group = typer.main.get_command(app)
    context = Context(group, info_name="venice-agent", terminal_width=80)
    formatter = context.make_formatter()
    TyperGroup.format_commands(group, context, formatter)  # type: ignore[arg-type]
    typers = formatter.getvalue()
    assert "  tools     See and call the MCP tools" in typers  # the list of every command
    assert typers in CliRunner().invoke(app, ["--help"], terminal_width=80).stdout


def test_the_main_help_groups_the_options_of_asking_into_panels() -> None:
    """Typer's rich_help_panel on each of asking's options, written without Rich: the panels in
    PANELS' order, before the command's own options, and no option left outside a panel."""
    from venice_terminal_agent.cli.common_options import PANELS

    group = typer.main.get_command(app)
    ask = group.get_command(Context(group), "ask")
    outside = [param.name for param in ask.params if param.param_type_name == "option"
               and getattr(param, "rich_help_panel", None) not in PANELS]  # fmt: skip
    assert not outside, f"options of asking in no panel: {outside}"
    lines = CliRunner().invoke(app, ["--help"], terminal_width=80).stdout.splitlines()
    headings = [line for line in lines if line.endswith(":") and not line.startswith(" ")]
    assert headings == [*(f"{panel}:" for panel in PANELS), "Options:", "Commands:"], headings
    money = lines[lines.index("Money and caps:") + 1 : lines.index("Tools and MCP servers:")]
    assert any(line.lstrip().startswith("--max-usd ") for line in money)


def test_the_main_help_ends_with_where_the_manual_is() -> None:
    from pathlib import Path

    last = CliRunner().invoke(app, ["--help"], terminal_width=80).stdout.strip().split("\n\n")[-1]
    said = " ".join(last.split())
    assert "README.md" in said and "docs/cli.md" in said, said
    repo = Path(__file__).resolve().parent.parent
    for named in ("docs/cli.md", "docs/configuration.md"):
        assert (repo / named).is_file(), named


@pytest.mark.parametrize("group", ["sessions", "serve"])
def test_sessions_and_serve_help_teach_by_example_not_by_internals(group: str) -> None:
    said = CliRunner().invoke(app, [group, "--help"], terminal_width=80).stdout
    examples = [
        line.strip() for line in said.splitlines() if line.strip().startswith(f"venice-agent {group} ")
    ]
    assert len(examples) >= 3, said
    for internal in ("descriptor", "1,000 open connections", "oldest still waiting", "soft limit"):
        assert internal not in said, internal
