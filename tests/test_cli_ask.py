"""The ask command's front door through Typer's runner: flags, settings, usage errors.

Everything here ends before any network: a settings problem is one readable line and exit
status 2, never a traceback. Questions that reach a model are in `test_cli_oneshot.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from venice_terminal_agent.cli.app import app
from venice_terminal_agent.fronts.terminal.ask import Flags, settings_from

VARIABLES = [
    "VENICE_API_KEY", "VENICE_MODEL", "VENICE_BASE_URL", "VENICE_TEMPERATURE", "APIFY_TOKEN",
    "APIFY_MCP_TRANSPORT", "APIFY_MCP_TOOLS", "APIFY_MCP_URL", "MAX_ROUNDS", "MAX_TOOL_RESULT_CHARS",
    "AUTO_APPROVE_TOOLS", "SAVE_HISTORY", "VENICE_AGENT_DB",
]  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_missing_key_says_what_to_set_and_where_to_get_it() -> None:
    line = one_line_error(invoke("what is MCP?"))
    assert line.startswith("venice-agent: no Venice API key: set VENICE_API_KEY")
    assert "https://venice.ai/settings/api" in line
    assert line.endswith("or try the agent without one: venice-agent demo")


def test_missing_key_is_the_same_for_the_repl() -> None:
    assert "no Venice API key" in one_line_error(invoke())


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("MAX_ROUNDS", "lots", "MAX_ROUNDS"),
        ("MAX_ROUNDS", "0", "MAX_ROUNDS"),
        ("VENICE_TEMPERATURE", "9", "VENICE_TEMPERATURE"),
        ("APIFY_MCP_TRANSPORT", "carrier-pigeon", "APIFY_MCP_TRANSPORT"),
        ("AUTO_APPROVE_TOOLS", "perhaps", "AUTO_APPROVE_TOOLS"),
        ("MAX_TOOL_RESULT_CHARS", "10", "MAX_TOOL_RESULT_CHARS"),
    ],
)
def test_a_bad_value_in_the_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "k")
    monkeypatch.setenv(variable, value)
    line = one_line_error(invoke("question"))
    assert line.startswith("venice-agent: bad setting: ") and named in line


def test_a_bad_value_in_dot_env_is_as_readable(clean_environment: Path) -> None:
    (clean_environment / ".env").write_text("VENICE_API_KEY=k\nMAX_ROUNDS=many\n")
    assert "MAX_ROUNDS" in one_line_error(invoke("question"))


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--max-rounds", "41", "q"], "venice-agent: --max-rounds must be between 1 and 40"),
        (["--max-rounds", "x", "q"], "venice-agent: --max-rounds must be between 1 and 40"),
        (["--budget", "-1", "q"], "venice-agent: --budget must be 0 or more"),
        (["--transport", "ftp", "q"], "venice-agent: --transport: 'ftp' is not one of 'http', 'stdio'."),
        (
            ["-5"],
            'venice-agent: no such option -5; a question that starts with - goes after --: venice-agent -- "-5 …" (see venice-agent --help)',
        ),
        (
            ["what", "is", "MCP"],
            'venice-agent: a question is one argument: put it in quotes, venice-agent "…" (see venice-agent --help)',
        ),
        (["run"], "venice-agent run: PLAN is missing (see venice-agent run --help)"),
        (["logs", "-n", "0"], "venice-agent logs: --count must be 1 or more"),
    ],
)
def test_bad_flags_are_one_line_that_never_names_the_hidden_ask_command(args: list[str], line: str) -> None:
    result = invoke(*args)
    assert one_line_error(result) == line  # no usage block, no "Try 'venice-agent ask -h'"


def test_a_question_starting_with_a_dash_goes_after_double_dash() -> None:
    assert "no Venice API key" in one_line_error(invoke("--", "-5 degrees in Kelvin?"))


def test_version_and_completion_are_options_of_the_command_itself() -> None:
    from venice_terminal_agent import __version__

    version = invoke("--version")
    assert version.exit_code == 0 and version.stdout == f"venice-agent {__version__}\n"
    script = invoke("--show-completion", "bash")
    assert script.exit_code == 0 and "_VENICE_AGENT_COMPLETE" in script.stdout
    assert "--install-completion" in invoke("--help").stdout


def test_the_shell_completes_command_names_and_options() -> None:
    import subprocess

    from cli_support import COMMAND

    def complete(*words: str) -> list[str]:
        env = {"_VENICE_AGENT_COMPLETE": "complete_bash", "COMP_WORDS": " ".join(["venice-agent", *words])}
        env["COMP_CWORD"] = str(len(words))
        done = subprocess.run([COMMAND], env=env, capture_output=True, text=True, timeout=60, check=False)
        return done.stdout.split()

    assert complete("do") == ["doctor"]
    assert complete("doctor", "--j") == ["--json"]
    # The main command's own options are asking's: `venice-agent --<Tab>` offers them all.
    offered = complete("--")
    assert {"--model", "--no-mcp", "--json", "--yes", "--version", "--help"} <= set(offered), offered
    assert len(offered) == len(set(offered))  # --help once, though both the group and ask have it
    assert complete("--mo") == ["--model"]
    assert sorted(complete("--ver")) == ["--verbose", "--version"]
    assert complete("--transport", "") == ["http", "stdio"]
    assert complete("hello", "--j") == ["--json"]  # after a question, asking's options too


def test_json_needs_a_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "k")
    assert "--json needs a question" in one_line_error(invoke("--json"))


def test_an_empty_question_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "k")
    assert "the question is empty" in one_line_error(invoke("  "))


def test_a_missing_mcp_config_file_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "k")
    assert "--mcp-config nowhere.json: no such file" in one_line_error(
        invoke("--mcp-config", "nowhere.json", "q")
    )


def test_flag_beats_environment_beats_dot_env_beats_default(
    monkeypatch: pytest.MonkeyPatch, clean_environment: Path
) -> None:
    (clean_environment / ".env").write_text("VENICE_MODEL=from-dotenv\nMAX_ROUNDS=5\nAPIFY_MCP_TOOLS=docs\n")
    monkeypatch.setenv("VENICE_MODEL", "from-env")
    settings = settings_from(Flags(model="from-flag"))
    assert settings.venice_model == "from-flag"
    settings = settings_from(Flags())
    assert settings.venice_model == "from-env"  # a flag not given never overrides
    assert settings.max_rounds == 5  # .env when the environment is silent
    assert settings.apify_mcp_tools == "docs"
    assert settings.apify_mcp_transport == "http"  # the default
    assert settings_from(Flags(max_rounds=7, transport="stdio", tools="actors")).max_rounds == 7


def test_switches_left_off_keep_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTO_APPROVE_TOOLS", "1")
    monkeypatch.setenv("SAVE_HISTORY", "true")
    settings = settings_from(Flags(yes=False, save_history=False))
    assert settings.auto_approve_tools is True and settings.save_history is True
    assert settings_from(Flags(yes=True)).auto_approve_tools is True
    monkeypatch.delenv("AUTO_APPROVE_TOOLS")
    assert settings_from(Flags()).auto_approve_tools is False


def test_the_key_is_never_shown_in_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "sk-very-secret")
    monkeypatch.setenv("MAX_ROUNDS", "nope")
    result = invoke("q")
    assert result.exit_code == 2 and "sk-very-secret" not in result.output


def test_help_teaches_the_two_ways_to_ask_and_every_option() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())  # help is wrapped to the terminal's width
    assert "# ask once" in text and "# chat" in text and "run" in text
    assert "\n  ask " not in result.stdout  # the default command is hidden: people never type it
    for option in [
        "--model", "--base-url", "--transport", "--tools", "--mcp-config", "--max-rounds",
        "--budget", "--yes", "--save-history", "--json",
    ]:  # fmt: skip
        assert option in text, option
    assert "130 cancelled" in text and "2 a usage or configuration error" in text


def test_subcommands_are_not_taken_for_questions() -> None:
    result = invoke("run", "--help")
    assert result.exit_code == 0 and "JSON plan" in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--transport", "stdio"], "needs an Apify token"),
        (["--tools", "actors"], "serves only with a token"),
    ],
)
def test_apify_choices_that_need_a_token_say_so_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch, clean_environment: Path, args: list[str], said: str
) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "k")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(clean_environment))  # no mcp.json of the user's
    line = one_line_error(invoke(*args, "q"))
    assert said in line and "https://console.apify.com" in line
