"""`venice-agent --help` stays fast: it loads neither the model SDK nor MCP (nor the REPL);
a plain one-shot question (no MCP server) loads none of openai, mcp and prompt_toolkit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import clean_env, fake_venice, mcp_config, modules_after_running, run_probe


def test_help_imports_neither_openai_nor_mcp_nor_the_terminal_libraries() -> None:
    modules = modules_after_running("--help")
    assert "typer" in modules  # the probe really ran the command
    heavy = {"openai", "mcp", "httpx2", "prompt_toolkit", "rich", "pydantic", "pydantic_settings", "asyncio"}
    assert modules.isdisjoint(heavy | DURABLE), modules & (heavy | DURABLE)


# The batch's engine (DBOS, and SQLAlchemy with it): loaded only by `venice-agent batch`.
DURABLE = {"dbos", "sqlalchemy", "psycopg"}


def test_batch_help_loads_no_durable_engine() -> None:
    modules = modules_after_running("batch", "--help")
    assert "typer" in modules
    assert modules.isdisjoint(DURABLE), modules & DURABLE


def test_ask_help_imports_neither_openai_nor_mcp() -> None:
    modules = modules_after_running("ask", "--help")
    assert modules.isdisjoint({"openai", "mcp"})


def test_doctor_help_is_as_light_as_the_main_help() -> None:
    modules = modules_after_running("doctor", "--help")
    assert "typer" in modules
    heavy = {"openai", "mcp", "httpx2", "prompt_toolkit", "rich", "pydantic", "pydantic_settings", "asyncio"}
    assert modules.isdisjoint(heavy), modules & heavy


@pytest.mark.parametrize("servers", ["--no-mcp", "an empty list", "a server that cannot start"])
def test_a_plain_one_shot_imports_neither_openai_nor_mcp_nor_prompt_toolkit(
    tmp_path: Path, servers: str
) -> None:
    """The model client is our own (httpx2), MCP loads only for a server to start, the line
    editor only for the REPL or a consent question, and Rich only for a terminal (the probe's
    stdout and stderr are pipes): none of them for one plain answer."""
    config = tmp_path / "mcp.json"
    if servers == "an empty list":
        config.write_text(json.dumps({"mcpServers": {}}))
    else:  # its only server needs an unset ${VAR}: nothing to start
        config.write_text(json.dumps({"mcpServers": {"none": {"command": "${IMPORT_TEST_NEVER_SET}"}}}))
    flags = ["--no-mcp"] if servers == "--no-mcp" else ["--mcp-config", str(config)]
    with fake_venice([{"text": "Paris."}], tmp_path) as fake:
        loaded = modules_after_running(
            *flags,
            "What is the capital of France?",
            env=clean_env(tmp_path, fake.base_url),
            cwd=tmp_path,
            full=True,
        )
        assert len(fake.chat_bodies()) == 1  # the probe really asked the model
    modules = {name.split(".")[0] for name in loaded}
    assert "httpx2" in modules
    # cryptography (E2EE models) and jsonschema (--schema) load only when they are used; Rich
    # only for a terminal: into a pipe the console is a plain one (fronts/terminal/plain_console.py).
    heavy = {"openai", "mcp", "prompt_toolkit", "cryptography", "jsonschema", "rich", *DURABLE}
    assert modules.isdisjoint(heavy), modules & heavy
    assert "venice_terminal_agent.model.attachments" not in loaded  # read only for -a FILE
    assert "tomllib" not in modules  # no user config file: nothing to parse
    if servers != "a server that cannot start":
        # No server to start: neither its session (transports, OAuth, stdio) nor what a session
        # offers (forms, sampling) is loaded; with --no-mcp not even the MCP config's reader.
        per_server = {
            "venice_terminal_agent.mcp.session",
            "venice_terminal_agent.mcp.stdio",
            "venice_terminal_agent.mcp.oauth.auth",
            "venice_terminal_agent.mcp.sampling_model",
            "venice_terminal_agent.fronts.terminal.elicit_form",
            "venice_terminal_agent.fronts.head_start",
        }
        if servers == "--no-mcp":
            per_server.add("venice_terminal_agent.mcp.servers_file")
        assert not per_server & loaded, per_server & loaded
    if servers != "a server that cannot start":  # no server: no tool list to keep
        assert "venice_terminal_agent.mcp.list_cache" not in loaded


def test_a_stdio_server_is_started_before_the_terminal_and_sdk_libraries_load(tmp_path: Path) -> None:
    """A Python MCP server takes longer to start than the whole plain question (issue 21), so
    it is spawned as soon as the settings name it: before Rich (the spinner), httpx2 and mcp."""
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice([{"text": "Paris."}], tmp_path) as fake:
        modules = modules_after_running(
            "--mcp-config", str(config), "What is the capital of France?",
            env=clean_env(tmp_path, fake.base_url), cwd=tmp_path, at_first_spawn=True,
        )  # fmt: skip
    assert any("time_server.py" in name for name in modules), modules  # mcp-server-time came first
    assert "pydantic_settings" in modules  # its settings were read
    assert modules.isdisjoint({"rich", "httpx2", "mcp", "openai"}), modules & {"rich", "httpx2", "mcp"}


@pytest.mark.parametrize(
    ("argv", "built"),
    [
        (["--help"], {"ask"}),  # asking's options head the main help
        (["doctor", "--help"], {"doctor"}),
        (["tools", "list", "--help"], {"tools"}),
        (["run", "examples/none.json"], {"run"}),
    ],
    ids=" ".join,
)
def test_only_the_command_used_is_built(
    argv: list[str], built: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Typer turns a command's annotations into Click parameters (about 3 ms a command): the
    group builds the one that runs or shows its help, not all of them before each start."""
    import typer.main

    from venice_terminal_agent.cli.app import app

    group = typer.main.get_command(app)
    group.main(args=argv, prog_name="venice-agent", standalone_mode=False)
    assert "venice-agent" in " ".join(capsys.readouterr())  # it ran: a help, or run's refusal
    assert set(group.commands) == built  # type: ignore[attr-defined]  # a group's


def test_help_loads_the_exit_statuses_but_not_what_a_run_needs() -> None:
    """`--help` writes the exit-status table into its text; the receipt it describes (a module of
    dataclasses, costs in Decimal, JSON) is a run's, and the wording of a refused command line
    a refusal's (issue 21: --help within +0.1 s of python)."""
    modules = modules_after_running("--help", full=True)
    assert "venice_terminal_agent.core.exits" in modules  # the statuses came from the one table
    run_only = {"venice_terminal_agent.core.receipt", "venice_terminal_agent.cli.usage_errors", "decimal", "json"}
    assert modules.isdisjoint(run_only), modules & run_only


def test_the_command_imports_its_libraries_with_the_collector_off() -> None:
    """Start-up allocates hundreds of thousands of objects and frees almost none: each pass of
    the garbage collector over them while Typer and the rest import is wasted (about 10 ms of
    --help, issue 21). The installed command's own entry point turns it off before importing,
    and a command that ends with it still off leaves the interpreter's collection at exit
    nothing of start-up's to scan (a sixth of --help's CPU)."""
    probe = (
        "import gc, sys\n"
        "from importlib.metadata import entry_points\n"
        "(command,) = entry_points(group='console_scripts', name='venice-agent')\n"
        "passes = []\n"
        "gc.callbacks.append(lambda phase, info: passes.append(info) if phase == 'start' else None)\n"
        "sys.argv = ['venice-agent', '--help']\n"
        "try:\n    command.load()()\nexcept SystemExit:\n    pass\n"
        "print(len(passes), 'typer' in sys.modules, gc.get_freeze_count() > 10_000)\n"
    )
    done = run_probe(probe)
    # No pass, Typer was really imported, and start-up's objects are out of the last collection.
    assert done.stdout.split()[-3:] == ["0", "True", "True"]


def test_a_question_converts_only_the_options_it_was_given() -> None:
    """Typer builds each parameter's conversion (a pydantic TypeAdapter) before it looks at the
    value, also for the options a question leaves out: 23 for one plain question (issue 21).
    Now only a given value is converted; the others are None or empty, as Typer makes them,
    and a bad value is refused with Typer's own words."""
    import typer.main
    from typer._click.exceptions import BadParameter

    from venice_terminal_agent.cli.app import app
    from venice_terminal_agent.cli.common_options import WebSearch

    group = typer.main.get_command(app)
    given = ["--model", "m", "--budget", "3", "-a", "x.png", "-a", "y.pdf", "--web-search", "on", "What?"]
    with group.make_context("venice-agent", list(given)) as ctx:
        ask = group.get_command(ctx, "ask")  # type: ignore[attr-defined]  # a group's
        with ask.make_context("ask", list(given), parent=ctx) as asked:
            values = asked.params
        converters = {param.name: getattr(param, "_runtime_param", None) for param in ask.params}
        with pytest.raises(BadParameter, match="greater than or equal to 0"):
            ask.make_context("ask", ["--budget", "-1", "q"], parent=ctx)
    assert values["budget"] == 3 and values["model"] == "m" and values["question"] == "What?"
    assert values["attach"] == [Path("x.png"), Path("y.pdf")] and values["web_search"] is WebSearch.on
    assert values["max_usd"] is None and values["resume"] is None and values["schema"] is None
    built = {name for name, converter in converters.items() if getattr(converter, "built", None) is not None}
    assert built == {"model", "budget", "attach", "web_search", "question"}  # and, later, --budget -1


def test_the_settings_are_one_pydantic_model_until_config_set_checks_a_value() -> None:
    """Each pydantic model builds its schema and validator for every field as its class is made:
    the settings module makes one, and the copy that checks a single value for `config set`
    only when it is used."""
    probe = (
        "from pydantic_settings import BaseSettings\n"
        "from venice_terminal_agent.config import check_value\n"
        "def made():\n"
        "    found, todo = [], [BaseSettings]\n"
        "    while todo:\n"
        "        found += (subclasses := todo.pop().__subclasses__())\n"
        "        todo += subclasses\n"
        "    return sorted(model.__qualname__ for model in found)\n"
        "print(made())\n"
        "print(check_value('max-usd', '0.5'), made())\n"
    )
    done = run_probe(probe)
    at_import, after_a_check = done.stdout.splitlines()
    assert at_import == "['Settings']"
    assert after_a_check == "0.5 ['Settings', '_one_value.<locals>._OneValue']"


@pytest.mark.parametrize(
    ("argv", "patched"),
    [
        (["serve", "--offline", "--port", "0"], "venice_terminal_agent.fronts.serve.server:run_server"),
        (["chat", "--offline"], "venice_terminal_agent.fronts.terminal.chat:_converse"),
    ],
    ids=["serve", "chat"],
)
def test_a_command_that_goes_on_running_without_a_model_turns_the_collector_back_on(
    tmp_path: Path, argv: list[str], patched: str
) -> None:
    """Start-up runs with the collector off (cli/start.py); the runtime turns it back on, but
    `serve` and `chat` without a model never open the runtime, and served or chatted on with it
    off: every reference cycle of every request kept for the process's life."""
    module, name = patched.split(":")
    probe = (
        "import gc, importlib, sys\n"
        f"target = importlib.import_module({module!r})\n"
        "async def ready(*args, **kwargs):\n"
        "    print('collector on' if gc.isenabled() else 'collector off')\n"
        f"setattr(target, {name!r}, ready)\n"
        f"sys.argv = {['venice-agent', *argv]!r}\n"
        "from venice_terminal_agent.cli.start import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    env = clean_env(tmp_path, "http://127.0.0.1:9", VENICE_AGENT_DB=str(tmp_path / "bot.db"))
    done = run_probe(probe, env=env, cwd=tmp_path)
    assert "collector on" in done.stdout.splitlines(), done.stdout + done.stderr
