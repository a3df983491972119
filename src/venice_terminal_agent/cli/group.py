"""The command group behind `venice-agent`: the default command, one-line usage errors, the
options read before Typer parses (`--version`, completion), and commands built only when used."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # the annotations only; importing click itself would slow `--help` down
    from typer._click import Context, HelpFormatter

DEFAULT_COMMAND = "ask"


class DefaultCommandGroup(TyperGroup):
    """`venice-agent "question"` and bare `venice-agent` go to the default command.

    Its commands are built lazily (Click's lazy group): Typer turns a command's annotations
    into Click parameters when the command runs, shows its help or is completed, not all 23 at
    start-up (two thirds of what `--help` cost over its imports, issue 21). The list under
    "Commands:" is written from their declarations (`declare_lazily`).
    """

    declared: ClassVar[dict[str, _Declared]] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        # In the order declared, whichever were built already (`--help` builds `ask` first).
        return [*(name for name in self.commands if name not in self.declared), *self.declared]

    def get_command(self, ctx: Context, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in self.declared:
            command = self.declared[cmd_name].build()
            for param in command.params:
                if getattr(param, "_runtime_param", "") is None:  # Typer's, not built yet
                    param._runtime_param = _WhenGiven(param.type_descriptor)
            self.commands[cmd_name] = command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        # TyperGroup's list, from each command's help text without building the command.
        shown = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name) or self.declared[name].stand_in(name)
            if not command.hidden:
                shown.append((name, command))
        if shown:
            limit = formatter.width - 6 - max(len(name) for name, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in shown])

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if first in OWN_OPTIONS:
            _own_option(ctx, first, args[1] if len(args) > 1 else None)
        if first is None and ctx.resilient_parsing:
            return super().parse_args(ctx, args)  # completing a command's name: offer them all
        if first is None or (first not in self.list_commands(ctx) and first not in ("--help", "-h")):
            if not ctx.resilient_parsing:
                self._refuse_a_slip(ctx, args)
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def _refuse_a_slip(self, ctx: Context, args: list[str]) -> None:
        """`venice-agent docter`: a command's name with a slip of the keys is not a question to
        pay for; the line names the command meant. After `--` a word is asked as it is."""
        word = _question_word(self.get_command(ctx, DEFAULT_COMMAND), args)
        if word is None:
            return
        from ..core.wording import near_misses

        shown = [name for name in self.list_commands(ctx) if not self._hidden(name)]
        if close := near_misses(word, shown):
            from .usage_errors import NoSuchCommand

            raise NoSuchCommand(word, close, ctx)

    def _hidden(self, name: str) -> bool:
        command = self.commands.get(name) or self.declared[name].info
        return bool(command.hidden)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Click's main, except that a usage error is one line of ours, never Typer's usage
        block naming the hidden default command."""
        if os.environ.get("_VENICE_AGENT_COMPLETE"):  # the shell asks for completions
            from typer._completion_classes import completion_init

            completion_init()
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[misc]  # click's own signature
        from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

        try:
            status = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[misc]  # click's own signature
        except NoArgsIsHelpError as error:  # `venice-agent tools`: its help, as Typer shows it
            error.show()
            sys.exit(error.exit_code)
        except UsageError as error:
            from .usage_errors import usage_line  # only for a refused command line

            print(usage_line(error, DEFAULT_COMMAND), file=sys.stderr)
            sys.exit(error.exit_code)
        except ClickException as error:
            print(f"venice-agent: {error.format_message()}", file=sys.stderr)
            sys.exit(error.exit_code)
        except typer.Abort:
            print("venice-agent: aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)

    def shell_complete(self, ctx: Context, incomplete: str) -> list[Any]:
        """`venice-agent --<Tab>`: the command names and the group's --help (Click's), and also
        the options of the default command and our own, which work in that place too."""
        results = super().shell_complete(ctx, incomplete)
        if not incomplete.startswith("-"):
            return results
        from typer._click.shell_completion import CompletionItem

        seen = {item.value for item in results}
        default = self.get_command(ctx, DEFAULT_COMMAND)
        options = [
            (name, getattr(param, "help", None))  # options have help; mypy types the base class
            for param in (default.get_params(ctx) if default is not None else [])
            if param.param_type_name == "option" and not getattr(param, "hidden", False)
            for name in (*param.opts, *param.secondary_opts)
        ]
        for name, help in [*options, *OWN_OPTIONS.items()]:
            if name.startswith(incomplete) and name not in seen:
                seen.add(name)
                results.append(CompletionItem(name, help=help))
        return results

    def get_help_option(self, ctx: Context) -> Any:
        # Typer converts even this switch's absent value through pydantic, an import that
        # costs every subcommand (`doctor --help`, `run`) 0.1 s; a switch is only true or false.
        option = super().get_help_option(ctx)
        if option is not None and getattr(option, "_runtime_param", "") is None:
            option._runtime_param = _Switch()  # type: ignore[assignment]  # duck-typed: convert() only
        return option

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        # The default command's options are the ones people use most: show them at the top, in
        # the panels their declarations name (Typer's rich_help_panel, written here without Rich).
        default = self.get_command(ctx, DEFAULT_COMMAND)
        if default is not None:
            for panel, rows in _panels(default, ctx):
                with formatter.section(panel):
                    formatter.write_dl(rows)
        with formatter.section("Options"):
            formatter.write_dl([*OWN_OPTIONS.items(), *_option_rows(self, ctx)])
        self.format_commands(ctx, formatter)


def _question_word(command: Any, args: list[str]) -> str | None:
    """The question in the default command's `args` when it is one word (letters and dashes)
    before any `--`: what a command's name with a slip in it looks like."""
    takes_value = {
        name
        for param in command.params
        if param.param_type_name == "option" and not param.is_flag and not param.count
        for name in param.opts
    }
    after_option = False
    for arg in args:
        if after_option:
            after_option = False
        elif arg == "--":
            return None
        elif arg.startswith("-") and len(arg) > 1:
            after_option = arg in takes_value
        else:
            return arg if arg.replace("-", "").replace("_", "").isalpha() else None
    return None


class SubcommandGroup(TyperGroup):
    """A command with subcommands (`tools`, `sessions`): a name with a slip in it gets the one
    wording of the main group ("no such command lst; did you mean list?")."""

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        name = args[0] if args else "-"
        if not name.startswith("-") and self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            from ..core.wording import near_misses
            from .usage_errors import NoSuchCommand

            shown = [name for name, command in self.commands.items() if not command.hidden]
            raise NoSuchCommand(name, near_misses(name, shown), ctx)
        return super().resolve_command(ctx, args)


class _Declared:
    """A command as declared to Typer, and how Typer would build it."""

    def __init__(self, build: Callable[[], Any], help: str | None, info: Any) -> None:
        self.build = build
        self.help = help
        self.info = info  # its short_help, hidden and deprecated, as given to Typer

    def stand_in(self, name: str) -> Any:
        """What the list of commands needs of it: its name and help (Click shortens them)."""
        info = self.info
        return TyperCommand(
            name, help=self.help, short_help=info.short_help, hidden=info.hidden, deprecated=info.deprecated
        )


def declare_lazily(app: typer.Typer) -> None:
    """Hand app's commands and groups to DefaultCommandGroup, to build one by one when used,
    with the same Typer functions and settings that would have built them all at start-up."""
    short, markup = app.pretty_exceptions_short, app.rich_markup_mode
    declared: dict[str, _Declared] = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or typer.main.get_command_name(info.callback.__name__)
        help = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
        build: Callable[[], Any] = partial(
            typer.main.get_command_from_info, info, pretty_exceptions_short=short, rich_markup_mode=markup
        )
        declared[name] = _Declared(build, help, info)
    for group_info in app.registered_groups:
        solved = typer.main.solve_typer_info_defaults(group_info)
        build = partial(
            typer.main.get_group_from_info,
            group_info,
            pretty_exceptions_short=short,
            suggest_commands=app.suggest_commands,
            rich_markup_mode=markup,
        )
        declared[solved.name or ""] = _Declared(build, solved.help, solved)
    app.registered_commands, app.registered_groups = [], []
    app.callback()(_group_options)  # Typer makes a group of an app with a callback, commands or not
    DefaultCommandGroup.declared = declared


def _group_options() -> None:
    pass  # the group's own options are OWN_OPTIONS, read before parsing, and --help


def _panels(command: Any, ctx: Context) -> list[tuple[str, list[tuple[str, str]]]]:
    """The command's options as help rows, by panel: PANELS' order, each panel's rows in the
    order declared; an option that names no panel goes last, under "More options"."""
    from .common_options import PANELS

    rows: dict[str, list[tuple[str, str]]] = {panel: [] for panel in (*PANELS, "More options")}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None and param.param_type_name == "option" and "--help" not in record[0]:
            rows.setdefault(getattr(param, "rich_help_panel", None) or "More options", []).append(record)
    return [(panel, found) for panel, found in rows.items() if found]


def _option_rows(command: Any, ctx: Context) -> list[tuple[str, str]]:
    records = (
        param.get_help_record(ctx) for param in command.get_params(ctx) if param.param_type_name == "option"
    )
    return [record for record in records if record is not None]


class _WhenGiven:
    """Typer's runtime conversion of one parameter, built when it has a value to convert.

    Typer builds a parameter's conversion (a pydantic TypeAdapter, ~2 ms each) before it looks
    at the value, also for an option that was not given, whose None every Typer conversion
    hands back as it is (`RuntimeParam.coerce`: None, or () for a repeatable one). A question
    gives two or three of `ask`'s 33 options: it built 23 adapters (issue 21).
    """

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self.built: Any = None

    def coerce(self, value: Any, param: Any, ctx: Context) -> Any:
        if value is None:  # what RuntimeParam.coerce returns for it, without an adapter
            return () if param.multiple or param.nargs == -1 else None
        if self.built is None:
            from typer._coercion import build_runtime_param

            self.built = build_runtime_param(self.descriptor)
        return self.built.coerce(value, param=param, ctx=ctx)


class _Switch:
    """Typer's runtime conversion for the group's --help: a switch is true or false."""

    def coerce(self, value: Any, **_: Any) -> bool:
        return bool(value)


# Options of the command itself, read before Typer parses anything: as Typer parameters they
# would be converted on every run, which imports pydantic and costs `doctor --help` 0.1 s.
OWN_OPTIONS = {
    "--version": "Print the version and exit.",
    "--install-completion": "Install shell completion for the current shell (or bash, zsh, fish).",
    "--show-completion": "Print the completion script, to copy it or customise the installation.",
}


def _own_option(ctx: Context, option: str, shell: str | None) -> None:
    if option == "--version":
        from .. import __version__

        print(f"venice-agent {__version__}")
        ctx.exit()
    from typer.completion import install_callback, show_callback  # Typer's own completion

    callback = install_callback if option == "--install-completion" else show_callback
    callback(ctx, None, shell or True)  # type: ignore[arg-type]


def add_crash_status(app: typer.Typer) -> None:
    """End each command's help, whose last paragraph is its "Exit status: …." sentence, with
    the status any command may end with: 1, a crash. Written once here, not in every docstring."""
    from ..core.errors import CRASHED

    for command in _commands(app):
        if "Exit status" in (command.epilog or ""):
            continue  # `ask`: its statuses are in its epilog, written with CRASHED already
        doc = command.callback.__doc__ or ""
        statuses = doc.rstrip()
        last = statuses.rsplit("\n\n", 1)[-1]
        if "Exit status:" not in last or not statuses.endswith("."):
            raise AssertionError(f"{command.callback.__name__}'s help must end with its exit statuses")
        if CRASHED not in last:
            command.callback.__doc__ = f"{statuses[:-1]}, {CRASHED}.\n"


def _commands(app: typer.Typer) -> list[Any]:
    found = [info for info in app.registered_commands if info.callback is not None]
    for group in app.registered_groups:
        if group.typer_instance is not None:
            found += _commands(group.typer_instance)
    return found


def command_group(parent: typer.Typer, name: str, help: str) -> typer.Typer:
    """A command with subcommands (`tools`, `store`) added to `parent`: alone, it shows its help."""
    group = typer.Typer(
        cls=SubcommandGroup,
        name=name,
        help=help,
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    parent.add_typer(group)
    return group
