"""`venice-agent batch FILE`, `batch status`, `batch resume ID`: declarations only; the bodies
are the batch front's (fronts/batch/run.py), which alone imports DBOS."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.exits import EXIT_STATUS, UNANSWERED_STATUS, USAGE_ERROR_STATUS, Exit
from .common_options import (
    BaseUrlOption,
    MaxRoundsOption,
    McpConfigOption,
    ModelOption,
    NoFilesOption,
    NoMcpOption,
    RootOption,
)
from .group import SubcommandGroup

STATUSES = (
    f"0 every question answered, {UNANSWERED_STATUS} every question has its receipt and not every one "
    f"ended answered (the receipts say why), {USAGE_ERROR_STATUS} a bad file or setting, "
    f"{EXIT_STATUS[Exit.CANCELLED]} stopped (batch resume goes on)"
)


class BatchGroup(SubcommandGroup):
    """`batch FILE …` runs a file and `batch resume NAME …` goes on with a batch (both the
    hidden `run`, with the same options); `batch status` is a subcommand."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] == "resume":
            args = (
                ["run", "--resume", *args[1:]] if args[1:2] not in (["--help"], ["-h"]) else ["run", "--help"]
            )
        elif args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="The batch database: a SQLite file, or a postgresql:// URL that workers on several hosts "
        "share [env VENICE_AGENT_BATCH_DB; default: a SQLite file in the user's data folder].",
    ),
]
WorkersOption = Annotated[
    int, typer.Option("--workers", "-w", min=1, max=256, help="Questions this process works on at once.")
]
YesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Run the tools that need a yes (a batch has no one to ask: without it they do not run).",
    ),
]
ProgressOption = Annotated[
    bool | None,
    typer.Option("--progress/--no-progress", help="The progress line on stderr [default: on a terminal]."),
]


def add_batch_commands(app: typer.Typer) -> None:
    group = typer.Typer(
        cls=BatchGroup,
        name="batch",
        help=(
            "Many questions, many workers, one money cap: a JSONL file of questions, durable "
            "(kill it and resume: nothing paid twice). See docs/batch.md.\n\n"
            "\b\n"
            "venice-agent batch questions.jsonl --max-usd 5 --workers 8 --yes -o receipts.jsonl\n"
            "venice-agent batch FILE --help     # its options\n"
            "venice-agent batch status          # each batch: done, to go, spent of its cap\n"
            "venice-agent batch resume NAME     # go on after a crash or Ctrl+C"
        ),
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(group)
    group.command("run", hidden=True)(batch_run)
    group.command("status")(batch_status)


def batch_run(
    file: Annotated[
        Path | None,
        typer.Argument(help='A JSONL file: one {"id": …, "question": …} a line.', show_default=False),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="NAME",
            help="Go on with this batch instead (batch resume NAME): its questions are in its database.",
        ),
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option("--max-usd", help="Most USD the whole batch may spend, every worker together."),
    ] = None,
    workers: WorkersOption = 4,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Append the receipts (JSONL) to this file, not stdout."),
    ] = None,
    db: DbOption = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The batch's name [default: from the file's digest].")
    ] = None,
    call_usd: Annotated[
        float,
        typer.Option(
            "--call-usd",
            help="USD reserved and charged for each tool call (paid tools) [default: 0].",
        ),
    ] = 0.0,
    yes: YesOption = False,
    progress: ProgressOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    mcp_config: McpConfigOption = None,
    no_mcp: NoMcpOption = False,
    max_rounds: MaxRoundsOption = None,
    root: RootOption = None,
    no_files: NoFilesOption = False,
) -> None:
    from ..fronts.batch.run import Options, resume_batch, run

    flags = _flags(model, base_url, mcp_config, no_mcp, max_rounds, yes, root, no_files)
    options = Options(workers, max_usd, call_usd, output, db, name or resume, yes, progress)
    if (file is None) == (resume is None):
        typer.echo("venice-agent batch: give a FILE of questions, or resume NAME", err=True)
        raise typer.Exit(USAGE_ERROR_STATUS)
    raise typer.Exit(
        run(str(file), options, flags) if resume is None else resume_batch(resume, options, flags)
    )


batch_run.__doc__ = f"""Answer every question of FILE, durably, under one money cap.

    One question a line: {{"id": "q1", "question": "…"}}, plus "model", "system", "max_rounds",
    "budget" and "max_usd" (that question's own cap) when wanted. Receipts go to stdout as JSONL
    (or -o FILE), one per question with its id, in the order they finish; the summary on stderr.
    The same command on another host with the same --db joins the batch and shares its cap.

    \b
    venice-agent batch questions.jsonl --max-usd 5 --workers 8 --yes -o receipts.jsonl
    venice-agent batch questions.jsonl --db postgresql://agent@db.internal/venice_batch  # one more host
    venice-agent batch resume b-3f2a9c1d0e4b

    venice-agent batch resume NAME goes on with a batch after a crash, Ctrl+C or on one more host:
    what finished is not repeated, a call that was in flight is not sent again (its question
    ends interrupted); its --max-usd and --call-usd are the ones it started with.

    Exit status: {STATUSES}.
    """


def batch_status(
    batch: Annotated[str | None, typer.Argument(help="The batch's name [default: every batch].")] = None,
    db: DbOption = None,
) -> None:
    """Each batch in the database: questions done (by exit), to go, spent of its cap.

    \b
    venice-agent batch status
    venice-agent batch status b-3f2a9c1d0e4b --db postgresql://agent@db.internal/venice_batch

    Exit status: 0 shown, 2 no such batch or a database that cannot be used.
    """
    from ..fronts.batch.run import status

    raise typer.Exit(status(batch, db))


def _flags(
    model: str | None,
    base_url: str | None,
    mcp_config: Path | None,
    no_mcp: bool,
    max_rounds: int | None,
    yes: bool,
    root: Path | None,
    no_files: bool,
) -> Any:
    from ..fronts.settings_load import Flags

    return Flags(
        model=model,
        base_url=base_url,
        mcp_config=mcp_config,
        no_mcp=no_mcp,
        max_rounds=max_rounds,
        yes=yes,
        root=root,
        no_files=no_files,
    )
