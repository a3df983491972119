"""A usage error as one line: what was wrong and how to say it, never Typer's usage block.

`venice-agent -5` is routed to the default command, whose name people never typed; so the
line speaks of `venice-agent`, and a question that starts with `-` is told to follow `--`. A
name with a slip of the keys in it (an option, a command) is answered with the one it is near.
"""

from __future__ import annotations

from typing import Any

from typer._click.exceptions import UsageError

from ..core.wording import did_you_mean, near_misses


class NoSuchCommand(UsageError):
    """`venice-agent docter`, `venice-agent sessions lst`: no command of that name; `close`,
    the ones it is a slip away from (`near_misses`)."""

    def __init__(self, name: str, close: list[str], ctx: Any) -> None:
        super().__init__(f"no such command {name}", ctx)
        self.name, self.close = name, close


def usage_line(error: Any, default_command: str) -> str:
    """The whole line for a click `UsageError`: bad value, unknown option, missing or extra argument."""
    from typer._click.exceptions import BadParameter, MissingParameter, NoSuchOption

    ctx = error.ctx
    command = ctx.command_path if ctx is not None else "venice-agent"
    asking = ctx is not None and ctx.info_name == default_command
    if asking:  # the hidden default command: people typed `venice-agent` alone
        command = ctx.parent.command_path if ctx.parent is not None else "venice-agent"
    see = f"see {command} --help"
    if isinstance(error, NoSuchCommand):
        if ctx is not None and ctx.parent is None:  # where a question goes: `--` asks it
            ask = f"to ask it, put it after --: {command} -- {error.name}"
            if error.close == [error.name]:  # `venice-agent --json doctor`: options came first
                return (
                    f"{command}: {error.name} is a command: name it first, {command} {error.name} … ({ask})"
                )
            return f"{command}: no such command {error.name}; {did_you_mean(error.close)} ({ask})"
        return f"{command}: {_nearly(error.message, error.close)} ({see})"
    if isinstance(error, NoSuchOption):
        options = (
            [] if ctx is None else [name for param in ctx.command.get_params(ctx) for name in _opts(param)]
        )
        if close := near_misses(error.option_name, options):
            return f"{command}: no such option {error.option_name}; {did_you_mean(close)} ({see})"
        if asking:
            return (
                f"{command}: no such option {error.option_name}; a question that starts with - goes "
                f'after --: {command} -- "{error.option_name} …" ({see})'
            )
        return f"{command}: no such option {error.option_name} ({see})"
    if isinstance(error, MissingParameter) and error.param is not None:
        return f"{command}: {_name(error.param)} is missing ({see})"
    if isinstance(error, BadParameter) and error.param is not None:
        name, low, high = (
            _name(error.param),
            getattr(error.param, "min", None),
            getattr(error.param, "max", None),
        )
        if low is not None and high is not None:
            return f"{command}: {name} must be between {low} and {high}"
        if low is not None:
            return f"{command}: {name} must be {low} or more"
        return f"{command}: {name}: {error.message.removeprefix('Value error, ')}"
    if asking and error.message.startswith("Got unexpected extra argument"):
        return f'{command}: a question is one argument: put it in quotes, {command} "…" ({see})'
    message = error.format_message()
    return f"{command}: {message[:1].lower()}{message[1:]} ({see})"


def _name(param: Any) -> str:
    """An option as people type it (its long form), or an argument's name as help shows it."""
    if param.param_type_name == "argument":
        return (param.name or "argument").upper()
    opts = [opt for opt in param.opts if opt.startswith("--")] or list(param.opts)
    return opts[0]


def _nearly(message: str, close: list[str]) -> str:
    """The refusal, and the names it was nearly (`did_you_mean`) when there are some."""
    return f"{message}; {did_you_mean(close)}" if close else message


def _opts(param: Any) -> list[str]:
    """An option's names as people may type them; none for an argument or a hidden option."""
    if param.param_type_name != "option" or getattr(param, "hidden", False):
        return []
    return [*param.opts, *param.secondary_opts]
