"""The loop core stays pure: importing it loads no provider, MCP, storage or terminal code."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["openai", "mcp", "rich", "typer", "prompt_toolkit", "sqlite3", "httpx2", "pydantic"]


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_package_root_and_loop_import_nothing_heavy() -> None:
    modules = loaded_after(
        "import venice_terminal_agent\n"
        "from venice_terminal_agent import run_loop, Call, Answer, Receipt, Step, Exit, ToolError\n"
        "import venice_terminal_agent.core.loop, venice_terminal_agent.tools.builtin"
    )
    assert modules.isdisjoint(HEAVY), modules & set(HEAVY)


def test_run_command_imports_neither_openai_nor_mcp(tmp_path) -> None:
    modules = loaded_after(
        "import sys\n"
        "sys.argv = ['venice-agent', 'run', '-', '--json']\n"
        "sys.stdin = __import__('io').StringIO('[{\"answer\": \"x\"}]')\n"
        "from venice_terminal_agent.cli.app import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass"
    )
    assert "typer" in modules  # the probe really ran the command
    assert modules.isdisjoint({"openai", "mcp"}), modules & {"openai", "mcp"}
