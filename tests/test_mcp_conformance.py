"""The MCP conformance suite's client scenarios, run by its own runner against our session code
(`servers/conformance_client.py` opens an McpToolbox on the URL the runner gives it), in a
loopback-only network namespace where `unshare -n` works.

Every scenario runs once per test session, four at a time (each is a Node runner and a Python
client: run one by one they would take most of a minute); each test then reads its checks.
Under xdist all of them go to one worker (ONE_WORKER in conftest.py), so they run once.
One scenario also runs from the suite's next release, where upstream fixed its mock (BACKCOMPAT).
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from servers.node import (
    MODULES,
    NEXT_MODULES,
    bin_path,
    in_loopback_namespace,
    loopback_only_works,
    node22,
)

SERVERS = Path(__file__).parent / "servers"
SCENARIOS = [
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
    "auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope",
    "auth/offline-access-not-supported", "auth/client-credentials-jwt", "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]  # fmt: skip
# 0.1.16's back-compat mock serves its metadata at the origin's well-known URL naming
# `<origin>/oauth` as issuer; RFC 8414 §3.3 says such a document "MUST NOT be used", and the client
# refuses it (test_mcp_oauth.py shows the refusal). Upstream fixed the mock (conformance PR #359,
# issuer = origin), so far only in 0.2.0 pre-releases: the fixed scenario runs from the next
# release (tests/node/next), and the pinned one is run too, to fail exactly at the issuer check.
BACKCOMPAT = "auth/2025-03-26-oauth-metadata-backcompat"
NEXT = "next:"  # prefix of a scenario run from the next release


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{node22().parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def run(scenario: str, out: Path) -> tuple[subprocess.CompletedProcess, Path]:
    modules = NEXT_MODULES if scenario.startswith(NEXT) else MODULES
    scenario = scenario.removeprefix(NEXT)
    command = [
        str(node22()), str(bin_path("conformance", modules).resolve()), "client",
        "--command", f"{sys.executable} {SERVERS / 'conformance_client.py'}",
        "--scenario", scenario, "--timeout", "120000", "-o", str(out),
    ]  # fmt: skip
    if loopback_only_works():  # its test servers listen on every interface: keep them to ourselves
        command = in_loopback_namespace(command)
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env(), check=False)
    return done, out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Each scenario's run (a future: a suite not installed fails or skips only its own tests)."""
    root = tmp_path_factory.mktemp("conformance")
    with ThreadPoolExecutor(4) as pool:
        runs = [*SCENARIOS, NEXT + BACKCOMPAT]
        futures = {s: pool.submit(run, s, root / str(i)) for i, s in enumerate(runs)}
        wait(futures.values())
        return futures


def checks_of(out: Path) -> tuple[list[dict], str]:
    """The run's checks, and what our client wrote to stderr."""
    (checks_file,) = out.glob("**/checks.json")
    return json.loads(checks_file.read_text()), (checks_file.parent / "stderr.txt").read_text()


def failed(checks: list[dict]) -> set[str]:
    return {check["id"] for check in checks if check["status"] not in ("SUCCESS", "INFO")}


def test_the_pinned_suite_has_these_client_scenarios():
    done = subprocess.run(
        [str(node22()), str(bin_path("conformance").resolve()), "list", "--client"],
        capture_output=True, text=True, timeout=60, env=env(), check=True,
    )  # fmt: skip
    listed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("  - ")]
    assert listed == SCENARIOS


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != BACKCOMPAT] + [NEXT + BACKCOMPAT])
def test_conformance_client_scenario(scenario, results):
    done, out = results[scenario].result()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    checks, _ = checks_of(out)
    assert failed(checks) == set()
    assert any(check["status"] == "SUCCESS" for check in checks)


def test_the_pinned_backcompat_mock_is_refused_at_its_issuer(results):
    """Signing in stops right after the metadata is read, on its issuer, and nowhere else: if the
    pinned mock (or our client) changes, this says so."""
    done, out = results[BACKCOMPAT].result()
    checks, stderr = checks_of(out)
    assert done.returncode != 0
    assert ("authorization-server-metadata", "SUCCESS") in {(c["id"], c["status"]) for c in checks}
    assert failed(checks) == {"client-registration", "authorization-request", "token-request"}
    issuer = r"issuer mismatch: (http://localhost:\d+)/oauth != \1$"
    assert re.search(r"^conformance: sign-in failed: .*" + issuer, stderr, re.M), stderr
