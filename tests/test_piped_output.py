"""Output that pipes cleanly, and consent asked on the person's terminal even then. The real
CLI in a pseudo-terminal (which is its controlling terminal, /dev/tty) with its streams
redirected, against the fake model server and a real stdio MCP server with paid tools."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pexpect

from cli_support import COMMAND, clean_env, fake_venice, mcp_config


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def shell(tmp_path: Path, base_url: str, line: str) -> pexpect.spawn:
    return pexpect.spawn(
        "/bin/sh",
        ["-c", line],
        cwd=str(tmp_path),
        env=clean_env(tmp_path, base_url),
        encoding="utf-8",
        dimensions=(40, 160),
        timeout=60,
    )


def test_consent_is_asked_on_the_terminal_when_both_output_streams_are_redirected(tmp_path: Path) -> None:
    script = [call("charge", amount=5), {"text": "Charged 5."}]
    with fake_venice(script, tmp_path) as fake:
        config = shlex.quote(str(mcp_config(tmp_path)))
        child = shell(tmp_path, fake.base_url, f"{COMMAND} --mcp-config {config} 'charge 5' >out.txt 2>err.txt")
        child.expect_exact("[y/N]")
        assert 'Run charge({"amount": 5})?' in child.before
        child.sendline("y")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0, (tmp_path / "err.txt").read_text()
    assert (tmp_path / "out.txt").read_text().splitlines() == [
        "Charged 5.",
        "stopped: answered · 1 call · 2 rounds",
    ]
    assert "charged 5" in (tmp_path / "err.txt").read_text()  # the tool line, with its result
