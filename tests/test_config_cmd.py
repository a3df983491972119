"""`venice-agent config`: the settings a person sets once, kept in the user config file, read
below the flags, the environment and `.env`, and never holding a key or a token. The real
CLI as a process, with its own config folder (XDG_CONFIG_HOME), against the fake model server."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_support import fake_venice, run_cli


def run(
    tmp_path: Path, *args: str, base_url: str = "http://127.0.0.1:9", cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    variables: dict[str, str | None] = {"VENICE_MODEL": None, **env}  # the model: from the settings
    return run_cli(tmp_path, base_url, *args, cwd=cwd, **variables)


def config_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "venice-agent" / "config.toml"


def test_set_get_unset_keep_the_value_in_the_user_config_file(tmp_path: Path) -> None:
    done = run(tmp_path, "config", "set", "model", "venice-uncensored")
    assert done.returncode == 0, done.stderr
    assert str(config_file(tmp_path)) in done.stdout
    assert 'model = "venice-uncensored"' in config_file(tmp_path).read_text()
    assert run(tmp_path, "config", "get", "model").stdout == "venice-uncensored\n"
    assert run(tmp_path, "config", "set", "sessions", "on").returncode == 0
    assert run(tmp_path, "config", "get", "sessions").stdout == "on\n"
    assert run(tmp_path, "config", "unset", "model").returncode == 0
    gone = run(tmp_path, "config", "get", "model")
    assert (gone.returncode, gone.stdout) == (1, "")  # no value: nothing printed, status 1
    assert "sessions = true" in config_file(tmp_path).read_text()  # the other value stays


def test_keys_and_tokens_are_refused_with_where_they_go(tmp_path: Path) -> None:
    for key in ("venice-api-key", "api-key", "apify-token"):
        done = run(tmp_path, "config", "set", key, "sk-secret-value-123")
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1
        assert "environment or .env" in done.stderr and "never in the config file" in done.stderr
    assert not config_file(tmp_path).exists()  # nothing was written


def test_a_bad_value_or_an_unknown_key_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    done = run(tmp_path, "config", "set", "max-usd", "0")
    assert (
        done.returncode == 2
        and done.stderr.strip() == "venice-agent: bad setting: max-usd: must be more than 0, not 0"
    )
    done = run(tmp_path, "config", "set", "sessions", "maybe")  # the values it takes, said
    assert done.returncode == 2 and done.stderr.strip() == (
        "venice-agent: bad setting: sessions: must be on or off (also true/false, yes/no, 1/0), not 'maybe'"
    )
    done = run(tmp_path, "config", "set", "colour", "blue")
    assert done.returncode == 2 and "no setting 'colour'; the settings are: model, base-url" in done.stderr
    assert not config_file(tmp_path).exists()


def test_list_says_where_each_value_comes_from_flag_env_dotenv_user_default(tmp_path: Path) -> None:
    run(tmp_path, "config", "set", "model", "from-user-config")
    run(tmp_path, "config", "set", "max-rounds", "7")
    run(tmp_path, "config", "set", "max-usd", "0.5")
    run(tmp_path, "config", "set", "temperature", "0.3")
    (tmp_path / ".env").write_text("MAX_ROUNDS=9\nMAX_USD=0.25\n")
    done = run(tmp_path, "config", "list", MAX_USD="0.125")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in done.stdout.splitlines()[1:]}
    assert rows["model"] == "from-user-config  [user config]"
    assert rows["max-rounds"] == "9  [.env (MAX_ROUNDS)]"  # .env over the user config
    assert rows["max-usd"] == "0.125  [environment (MAX_USD)]"  # the environment over .env
    assert rows["temperature"] == "0.3  [user config]"
    assert rows["sessions"] == "off  [default]"
    assert done.stdout.splitlines()[0] == f"user config: {config_file(tmp_path)}"


def test_a_question_uses_the_user_config_below_the_environment_and_the_flag(tmp_path: Path) -> None:
    run(tmp_path, "config", "set", "model", "beta")
    script = {
        "models": ["alpha", "beta", "gamma"],
        "replies": [{"text": "one"}, {"text": "two"}, {"text": "three"}],
    }
    with fake_venice(script, tmp_path) as fake:
        asked = [
            run(tmp_path, "hello", base_url=fake.base_url),
            run(tmp_path, "hello", base_url=fake.base_url, VENICE_MODEL="gamma"),
            run(tmp_path, "--model", "alpha", "hello", base_url=fake.base_url, VENICE_MODEL="gamma"),
        ]
        assert all(done.returncode == 0 for done in asked), [done.stderr for done in asked]
        assert [body["model"] for body in fake.chat_bodies()] == ["beta", "gamma", "alpha"]


def test_a_bad_value_in_the_file_is_a_setting_error_before_any_request(tmp_path: Path) -> None:
    config_file(tmp_path).parent.mkdir(parents=True)
    config_file(tmp_path).write_text("max-rounds = 99\n")
    with fake_venice([], tmp_path) as fake:
        done = run(tmp_path, "hello", base_url=fake.base_url)
        assert done.returncode == 2 and "MAX_ROUNDS" in done.stderr
        assert fake.chat_bodies() == []


def test_doctor_shows_the_user_config_file(tmp_path: Path) -> None:
    run(tmp_path, "config", "set", "sessions", "on")
    done = run(tmp_path, "doctor", VENICE_API_KEY="")
    assert f"user config: {config_file(tmp_path)}" in done.stdout


def test_mcp_config_in_the_user_config_names_the_servers_and_the_flag_wins(tmp_path: Path) -> None:
    from cli_support import mcp_config

    servers = mcp_config(tmp_path, paid_server=False)  # the time server alone
    (tmp_path / "sub").mkdir()
    done = run(tmp_path, "config", "set", "mcp-config", "../mcp.json", cwd=tmp_path / "sub")
    assert done.returncode == 0, done.stderr
    assert run(tmp_path, "config", "get", "mcp-config").stdout == f"{servers}\n"  # kept whole
    listed = run(tmp_path, "tools", "list")
    assert listed.returncode == 0, listed.stderr
    assert "get_current_time" in listed.stdout and "search-actors" not in listed.stdout
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    flagged = run(tmp_path, "tools", "list", "--mcp-config", "none.json")
    shown = flagged.stdout + flagged.stderr
    assert "get_current_time" not in shown and "no MCP server" in shown  # the flag's file, empty
