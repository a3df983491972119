"""One error tree: every expected failure is a `VeniceAgentError` with its exit status, and a
bug of ours (here a `KeyError` planted in the stream assembler) is a crash, not a `model_error`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import clean_env, fake_venice
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core import errors
from venice_terminal_agent.core.receipt import EXIT_STATUS, Exit
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.model.stream import Assembler
from venice_terminal_agent.testing import MockVenice


def test_every_error_is_one_tree_and_the_old_names_are_the_same_classes() -> None:
    from venice_terminal_agent import ToolError
    from venice_terminal_agent.core.errors import ConfigError
    from venice_terminal_agent.core.plans import PlanError
    from venice_terminal_agent.mcp.session import ToolListError
    from venice_terminal_agent.model import ModelError, NoModelError
    from venice_terminal_agent.store.sqlite import StoreError
    from venice_terminal_agent.testing import ScriptError

    old = [ToolError, ConfigError, PlanError, StoreError, ModelError, NoModelError, ToolListError]
    assert old == [
        errors.ToolError, errors.ConfigError, errors.PlanError, errors.StoreError,
        errors.ModelError, errors.NoModelError, errors.ServerError,
    ]  # fmt: skip
    assert all(issubclass(kind, errors.VeniceAgentError) for kind in [*old, ScriptError])
    assert issubclass(ScriptError, ValueError)  # what the fake server's users caught before


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.ConfigError("x"), 2),
        (errors.PlanError("x"), 2),
        (errors.StoreError("x"), 2),
        (errors.ToolError("x"), EXIT_STATUS[Exit.TOOL_ERROR]),
        (errors.ModelError("x", status=500), EXIT_STATUS[Exit.MODEL_ERROR]),
        (errors.ModelError("x"), EXIT_STATUS[Exit.MODEL_ERROR]),
        (errors.ModelError("x", status=401), EXIT_STATUS[Exit.KEY_REJECTED]),
        (errors.ModelError("x", status=403), EXIT_STATUS[Exit.KEY_REJECTED]),
        (errors.ModelError("x", status=402), 2),
        (errors.NoModelError("x"), 2),
    ],
)
def test_each_error_carries_its_exit_status(error: errors.VeniceAgentError, status: int) -> None:
    assert error.exit_status == status
    assert error.message == "x"


@pytest.fixture
def planted_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    def feed(self: Assembler, chunk: dict) -> str:
        raise KeyError("planted")

    monkeypatch.setattr(Assembler, "feed", feed)


async def no_sleep(seconds: float) -> None:
    pass


@pytest.mark.usefixtures("planted_bug")
async def test_a_bug_in_the_assembler_goes_up_as_it_is_and_is_not_retried() -> None:
    async with MockVenice([{"text": "hello"}, {"text": "again"}]) as fake:
        async with VeniceClient(
            "k", fake.base_url, retry=RetryPolicy(sleep=no_sleep), http_client=fake.http_client()
        ) as client:
            agent = Agent(client, FunctionToolbox({}), AgentOptions(model="m"))
            with pytest.raises(KeyError, match="planted"):
                await agent.ask("hi")  # not a receipt that says model_error
            assert len(fake.chat_requests) == 1  # a bug is not a failed request: no retry
            assert agent.history == agent.history[:1]  # and the conversation is as it was


PLANTED = """
import sys
from venice_terminal_agent.model.stream import Assembler
def feed(self, chunk):
    raise KeyError("planted")
Assembler.feed = feed
sys.argv = ["venice-agent", *sys.argv[1:]]
from venice_terminal_agent.cli.app import main
main()
"""


def test_the_command_says_a_crash_is_a_bug_in_one_line_with_status_1(tmp_path: Path) -> None:
    servers = tmp_path / "mcp.json"  # a server that cannot start: no MCP needed, nothing dials out
    servers.write_text(json.dumps({"mcpServers": {"ghost": {"command": "no-such-mcp-server"}}}))
    with fake_venice([{"text": "hello"}], tmp_path) as fake:
        done = subprocess.run(
            [sys.executable, "-c", PLANTED, "--mcp-config", str(servers), "--json", "hi"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(tmp_path, fake.base_url),
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert (
        "internal error, this is a bug in venice-agent: KeyError: 'planted'; please report it" in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # no receipt passing the bug off as model_error


HELP_PROBE = """
import sys
import venice_terminal_agent.core.receipt as receipt
receipt.EXIT_STATUS[receipt.Exit.BUDGET] = 33  # a table changed in one place only
sys.argv = ["venice-agent", *sys.argv[1:]]
from venice_terminal_agent.cli.app import main
main()
"""


@pytest.mark.parametrize("command", [["--help"], ["ask", "--help"], ["run", "--help"]])
def test_help_texts_take_their_exit_statuses_from_the_table(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HELP_PROBE, *command], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "33 budget" in text and "3 budget" not in text.replace("33 budget", "")
