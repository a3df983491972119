"""`venice-agent --help` stays fast: it loads neither the model SDK nor MCP (nor the REPL)."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_after_running(*argv: str) -> set[str]:
    probe = (
        "import sys, json\n"
        f"sys.argv = {['venice-agent', *argv]!r}\n"
        "from venice_terminal_agent.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_help_imports_neither_openai_nor_mcp_nor_the_terminal_libraries() -> None:
    modules = modules_after_running("--help")
    assert "typer" in modules  # the probe really ran the command
    heavy = {"openai", "mcp", "httpx2", "prompt_toolkit", "rich", "pydantic", "pydantic_settings", "asyncio"}
    assert modules.isdisjoint(heavy), modules & heavy


def test_ask_help_imports_neither_openai_nor_mcp() -> None:
    modules = modules_after_running("ask", "--help")
    assert modules.isdisjoint({"openai", "mcp"})


def test_doctor_help_is_as_light_as_the_main_help() -> None:
    modules = modules_after_running("doctor", "--help")
    assert "typer" in modules
    heavy = {"openai", "mcp", "httpx2", "prompt_toolkit", "rich", "pydantic", "pydantic_settings", "asyncio"}
    assert modules.isdisjoint(heavy), modules & heavy
