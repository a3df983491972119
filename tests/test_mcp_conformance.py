"""The MCP conformance suite's client scenarios, run by its own runner against the real CLI
(`servers/conformance_cli.py`: `venice-agent tools list --json`, then `tools call` for each
tool on a pseudo-terminal, a person answering y and keeping a form's defaults), in a
loopback-only network namespace where `unshare -n` works.

Two releases are pinned: 0.1.16 (tests/node) and 0.2.0-alpha.12 (tests/node/next). Each
scenario is its own test (xdist spreads them over its workers); the next release's two frozen
requirement sets (`--requirements 2025-11-25`, `--requirements 2026-07-28`, each run at its
own wire) are run whole, as the runner runs them, and so are the scenarios outside both.
"""

import json
import os
import re
import subprocess
import sys
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
# The next release's 48 client scenarios, with the revisions (or extension) each belongs to.
NEXT_SCENARIOS = {
    "initialize": "2025-06-18,2025-11-25", "tools_call": "2025-06-18,2025-11-25,2026-07-28",
    "elicitation-sep1034-client-defaults": "2025-11-25", "sse-retry": "2025-11-25",
    "request-metadata": "2026-07-28",
    **{f"auth/{name}": "2025-11-25,2026-07-28" for name in (
        "metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
        "scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined",
        "scope-step-up", "scope-retry-limit")},
    **{f"auth/token-endpoint-auth-{how}": "2025-06-18,2025-11-25,2026-07-28" for how in ("basic", "post", "none")},
    "auth/pre-registration": "2025-11-25,2026-07-28",
    "auth/2025-03-26-oauth-metadata-backcompat": "2025-03-26", "auth/2025-03-26-oauth-endpoint-fallback": "2025-03-26",
    **{f"auth/{name}": "2026-07-28" for name in (
        "resource-mismatch", "offline-access-scope", "offline-access-not-supported",
        "authorization-server-migration", "iss-supported", "iss-not-advertised", "iss-supported-missing",
        "iss-wrong-issuer", "iss-unexpected", "iss-normalized", "metadata-issuer-mismatch")},
    **{f"auth/{name}": "extension" for name in (
        "client-credentials-jwt", "client-credentials-basic", "enterprise-managed-authorization",
        "dpop", "dpop-nonce", "wif-jwt-bearer")},
    "sep-2322-client-request-state": "2026-07-28", "http-standard-headers": "2026-07-28",
    "http-custom-headers": "2026-07-28", "http-invalid-tool-headers": "2026-07-28",
    "json-schema-ref-no-deref": "2026-07-28", "json-schema-2020-12-preservation": "2025-11-25,2026-07-28",
    **{f"sep-2640-client-{name}": "extension" for name in (
        "no-prefetch", "verify-digest", "verify-size", "verify-frontmatter")},
}  # fmt: skip
REVISIONS = ("2025-11-25", "2026-07-28")
# Every scenario of the next release runs: the requirement sets whole (they run the extensions
# too, unscored), and the rest one by one.
OUTSIDE = [s for s, revs in NEXT_SCENARIOS.items() if not set(revs.split(",")) & {*REVISIONS, "extension"}]
# 0.1.16's back-compat mock serves its metadata at the origin's well-known URL naming
# `<origin>/oauth` as issuer; RFC 8414 §3.3 says such a document "MUST NOT be used", and the client
# refuses it (test_mcp_oauth.py shows the refusal). Upstream fixed the mock (conformance PR #359,
# issuer = origin) in the 0.2.0 pre-releases, where the fixed scenario passes (OUTSIDE); the
# pinned one is run too, to fail exactly at the issuer check.
BACKCOMPAT = "auth/2025-03-26-oauth-metadata-backcompat"
# The SEP-2640 skills scenarios are extensions: the requirement sets run them unscored, where a
# client without skills passes as SKIPPED. Run here one by one, each must end in SUCCESS.
SKILLS = [s for s in NEXT_SCENARIOS if s.startswith("sep-2640-client-")]
CLIENT = f"{sys.executable} {SERVERS / 'conformance_cli.py'}"
pytestmark = pytest.mark.slow  # a second line behind test_mcp_oauth.py & co: 26 minutes of CPU


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{node22().parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def conformance(modules: Path, *args: str, out: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The suite's runner of `modules` driving our CLI, its results in `out`."""
    command = [
        str(node22()), str(bin_path("conformance", modules).resolve()), "client",
        "--command", CLIENT, *args, "--timeout", f"{int(timeout * 1000) - 30000}", "-o", str(out),
    ]  # fmt: skip
    if loopback_only_works():  # its test servers listen on every interface: keep them to ourselves
        command = in_loopback_namespace(command)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env(), check=False)


def checks_of(out: Path) -> tuple[list[dict], str]:
    """The run's checks, and what our client wrote to stderr."""
    (checks_file,) = out.glob("**/checks.json")
    return json.loads(checks_file.read_text()), (checks_file.parent / "stderr.txt").read_text()


def failed(checks: list[dict]) -> set[str]:
    return {check["id"] for check in checks if check["status"] not in ("SUCCESS", "INFO", "SKIPPED")}


def listed(modules: Path, *args: str) -> list[str]:
    done = subprocess.run(
        [str(node22()), str(bin_path("conformance", modules).resolve()), "list", "--client", *args],
        capture_output=True, text=True, timeout=60, env=env(), check=True,
    )  # fmt: skip
    return [line.split()[1] for line in done.stdout.splitlines() if line.startswith("  - ")]


def test_the_pinned_suites_have_these_client_scenarios():
    assert listed(MODULES) == SCENARIOS
    assert listed(NEXT_MODULES) == list(NEXT_SCENARIOS)


@pytest.mark.parametrize(
    ("modules", "scenario"),
    [pytest.param(MODULES, s, id=f"0.1.16:{s}") for s in SCENARIOS if s != BACKCOMPAT]
    + [pytest.param(NEXT_MODULES, s, id=f"next:{s}") for s in OUTSIDE],
)
def test_conformance_client_scenario(modules, scenario, tmp_path):
    done = conformance(modules, "--scenario", scenario, out=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    checks, _ = checks_of(tmp_path)
    assert failed(checks) == set()
    assert any(check["status"] == "SUCCESS" for check in checks)


@pytest.mark.parametrize("scenario", SKILLS)
def test_a_skills_scenario_succeeds(scenario, tmp_path):
    """Listing reads no skill file; a tampered SKILL.md (digest, size, front matter) is read
    when the skill is loaded, refused, and its supporting file never read."""
    done = conformance(NEXT_MODULES, "--scenario", scenario, out=tmp_path)
    checks, stderr = checks_of(tmp_path)
    assert [check["status"] for check in checks] == ["SUCCESS"], checks
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # `tools list --json` shows the skill tool like any other: read-only, the skill to choose.
    assert re.search(
        r'"name": "load_skill",\s+"original_name": "load_skill",\s+"server": "conformance",'
        r'\s+"needs_consent": false',
        stderr,
    ), stderr[-3000:]
    assert re.search(r'"enum": \[\s+"pdf-processing"\s+\]', stderr), stderr[-3000:]
    if scenario != "sep-2640-client-no-prefetch":
        assert "load_skill: skill pdf-processing was not loaded: " in stderr, stderr[-3000:]


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_requirement_set_passes_whole(revision, tmp_path, monkeypatch):
    """`conformance client --requirements REV`: every scenario the revision requires, at its
    wire (and the extensions, which it runs unscored), passes: none is an expected failure."""
    required = listed(NEXT_MODULES, "--requirements", revision)
    slots = tmp_path / "slots"  # its scenarios start at once: a few of our commands at a time
    slots.mkdir()
    monkeypatch.setenv("CONFORMANCE_SLOTS", str(slots))
    done = conformance(NEXT_MODULES, "--requirements", revision, out=tmp_path / "out", timeout=900)
    tmp_path = tmp_path / "out"
    ran = {path.parent for path in tmp_path.glob("**/checks.json")}
    problems = {
        str(run.relative_to(tmp_path)): sorted(failed(json.loads((run / "checks.json").read_text())))
        for run in ran
    }
    assert {name: ids for name, ids in problems.items() if ids} == {}, done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len(ran) >= len([s for s in required if s in NEXT_SCENARIOS])


def test_the_pinned_backcompat_mock_is_refused_at_its_issuer(tmp_path):
    """Signing in stops right after the metadata is read, on its issuer, and nowhere else: if the
    pinned mock (or our client) changes, this says so."""
    done = conformance(MODULES, "--scenario", BACKCOMPAT, out=tmp_path)
    checks, stderr = checks_of(tmp_path)
    assert done.returncode != 0
    assert ("authorization-server-metadata", "SUCCESS") in {(c["id"], c["status"]) for c in checks}
    assert failed(checks) == {"client-registration", "authorization-request", "token-request"}
    issuer = r"issuer mismatch: (http://localhost:\d+)/oauth != \1"
    assert re.search(r"conformance: sign-in failed: .*" + issuer, stderr), stderr
