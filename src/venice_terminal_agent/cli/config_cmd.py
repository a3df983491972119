"""`venice-agent config set|get|unset|list`: the settings a person sets once, in the user config
file (`config.py` reads it below `.env` and above the defaults). A key or a token is refused
with a line that says where it goes instead; it is never written to the file.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .group import command_group

KeyArgument = Annotated[
    str, typer.Argument(help="The setting, e.g. model, sessions, max-usd (config list shows all).")
]


def add_config_commands(app: typer.Typer) -> None:
    group = command_group(
        app,
        "config",
        "The settings you set once (model, base URL, sessions, caps, MCP config), in the user config file.",
    )
    group.command("set")(config_set)
    group.command("get")(config_get)
    group.command("unset")(config_unset)
    group.command("list")(config_list)


def config_set(
    key: KeyArgument,
    value: Annotated[str, typer.Argument(help="Its value, checked as the setting would be.")],
) -> None:
    """Keep a setting in the user config file (a flag, the environment and .env still win).

    \b
    venice-agent config set model venice-uncensored
    venice-agent config set sessions on
    venice-agent config set max-usd 0.05

    Keys and tokens are refused: VENICE_API_KEY and APIFY_TOKEN stay in the environment or .env.

    Exit status: 0 done, 2 an unknown key, a secret, or a bad value.
    """
    from ..config import check_value, read_user_config, write_user_config
    from ..core.errors import ConfigError
    from ..fronts.failures import fail

    try:
        checked = check_value(key, value)
        values = read_user_config()
        values[key] = checked
        path = write_user_config(values)
    except ConfigError as error:
        raise typer.Exit(fail(error.message)) from None
    print(f"{key} = {_shown(checked)} (in {path})")


def config_get(key: KeyArgument) -> None:
    """Print the value a setting has now, wherever it comes from (config list says where).

    \b
    venice-agent config get model
    venice-agent config get sessions

    Exit status: 0 the setting has a value, 1 it has none, 2 an unknown key or a bad setting.
    """
    from ..config import KEYS, load_settings
    from ..core.errors import ConfigError
    from ..fronts.failures import fail

    if key not in KEYS:
        raise typer.Exit(fail(f"no setting {key!r}; the settings are: {', '.join(KEYS)}"))
    try:
        value = getattr(load_settings(), KEYS[key])
    except ConfigError as error:
        raise typer.Exit(fail(error.message)) from None
    if value is None:
        raise typer.Exit(1)
    print(_shown(value))


def config_unset(key: KeyArgument) -> None:
    """Take a setting out of the user config file (its default, or the environment's, applies).

    \b
    venice-agent config unset model

    Exit status: 0 done (also when it was not set), 2 an unknown key or an unreadable file.
    """
    from ..config import KEYS, read_user_config, user_config_file, write_user_config
    from ..core.errors import ConfigError
    from ..fronts.failures import fail

    if key not in KEYS:
        raise typer.Exit(fail(f"no setting {key!r}; the settings are: {', '.join(KEYS)}"))
    try:
        values = read_user_config()
        if key in values:
            del values[key]
            write_user_config(values)
    except ConfigError as error:
        raise typer.Exit(fail(error.message)) from None
    print(f"{key} unset (in {user_config_file()})")


def config_list() -> None:
    """Every setting, its value now, and where that value comes from.

    The sources, strongest first: a flag, the environment, .env in this folder, the user
    config file, the default.

    \b
    venice-agent config list            # every setting, its value and its source

    Exit status: 0 done, 2 a bad setting or an unreadable file.
    """
    from dotenv import dotenv_values

    from ..config import KEYS, load_settings, origin, read_user_config, user_config_file
    from ..core.errors import ConfigError
    from ..fronts.failures import fail
    from ..fronts.text import safe

    try:
        settings = load_settings()
        user = read_user_config()
    except ConfigError as error:
        raise typer.Exit(fail(error.message)) from None
    dotenv = dotenv_values(".env") if _has_dotenv() else {}
    path = user_config_file()
    print(f"user config: {path}" + ("" if path.is_file() else " (none yet)"))
    width = max(len(key) for key in KEYS)
    for key, field in KEYS.items():
        value = getattr(settings, field)
        shown = "(none)" if value is None else _shown(value)
        print(f"{key:<{width}}  {safe(shown)}  [{origin(key, dotenv, user)}]")


def _has_dotenv() -> bool:
    from pathlib import Path

    return Path(".env").is_file()


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
