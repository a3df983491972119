"""The `venice-agent` command: Typer app and the routing of its subcommands.

Each command's body lives in its own module, imported only when that command runs, so
`venice-agent --help` and `venice-agent run` never load the model or MCP libraries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

DEFAULT_COMMAND = "ask"


class DefaultCommandGroup(TyperGroup):
    """`venice-agent "question"` and bare `venice-agent` go to the default command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if first is None or (first not in self.commands and first not in ("--help", "-h")):
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=DefaultCommandGroup,
    name="venice-agent",
    help=(
        "A terminal agent on a deterministic loop: every run stops for a named reason "
        "and prints a receipt.\n\n"
        'Ask once: venice-agent "question"  ·  chat: venice-agent  ·  '
        "run a plan offline: venice-agent run examples/tour.json"
    ),
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command()
def run(
    plan: Annotated[str, typer.Argument(help="A JSON plan file, or - to read it from stdin.")],
    budget: Annotated[
        int | None,
        typer.Option(min=0, help="Most tool calls the run may make [default: the plan's, else 5]."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the receipt alone, as JSON, on stdout.")
    ] = False,
    root: Annotated[
        Path | None,
        typer.Option(help="Folder read_file and list_files may see [default: the working folder]."),
    ] = None,
) -> None:
    """Run a plan of tool calls on the built-in tools, offline; show each step and why it stopped.

    Exit status: 0 answered, 3 budget, 4 repeated_call, 5 tool_error, 2 a bad plan.
    """
    from .run_cmd import run_plan

    raise typer.Exit(run_plan(plan, budget=budget, json_output=json_output, root=root))


@app.command(hidden=True)
def ask() -> None:
    """Ask one question, or open the conversation when no question is given."""
    typer.echo("venice-agent: asking the model is not available yet; try `venice-agent run`", err=True)
    raise typer.Exit(2)


def main() -> None:
    app()
