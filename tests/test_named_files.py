"""Files a person names (`--schema @FILE`, `-s @FILE`, `-a FILE`, `run PLAN`, `sessions import`,
`--mcp-config`, the user config, `serve --token-file`): each is read with a size limit, and a
device, a FIFO, a folder, a file too big or a name no file can have is refused in one line with
status 2 before anything is sent.

The real command against the fake server; nothing may reach it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_support import fake_venice, run_cli

MIB = 1024 * 1024


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as out:
        out.truncate(size)  # nothing is written
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def folder(path: Path) -> Path:
    path.mkdir()
    return path


KINDS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a device": (lambda _: Path("/dev/zero"), "a character device, not a file"),
    "a FIFO": (lambda tmp: fifo(tmp / "pipe"), "a FIFO (named pipe), not a file"),
    "a folder": (lambda tmp: folder(tmp / "box"), "a folder, not a file"),
    "too big": (lambda tmp: sparse(tmp / "big", 300 * MIB), "over "),
    "a name too long": (lambda tmp: tmp / ("n" * 300), "cannot read it (File name too long)"),
    "not UTF-8": (lambda tmp: (tmp / "latin").write_bytes(b"caf\xe9 {}") and tmp / "latin", "not UTF-8"),
}
# How each surface names its file, and whether it reads it as text (an attachment may be bytes).
SURFACES: dict[str, tuple[Callable[[str], list[str]], bool]] = {
    "--schema @FILE": (lambda name: ["--no-mcp", "--schema", f"@{name}", "q"], True),
    "-s @FILE": (lambda name: ["--no-mcp", "-s", f"@{name}", "q"], True),
    "-a FILE": (lambda name: ["--no-mcp", "-a", name, "q"], False),
    "run PLAN": (lambda name: ["run", name], True),
    "sessions import": (lambda name: ["sessions", "import", name], True),
    "--mcp-config": (lambda name: ["--mcp-config", name, "q"], True),
    "serve --token-file": (lambda name: ["serve", "--port", "0", "--token-file", name], True),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("surface", SURFACES)
def test_a_named_file_that_is_not_a_readable_file_is_one_line_and_status_2(
    tmp_path: Path, surface: str, kind: str
) -> None:
    make, reason = KINDS[kind]
    argv, text = SURFACES[surface]
    if kind == "not UTF-8" and not text:
        pytest.skip("an attachment's bytes go as they are")
    name = str(make(tmp_path))
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, *argv(name), timeout=60)
        assert fake.chat_bodies() == []
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    # a name no file can have is no file (`--mcp-config` is looked for before it is read)
    assert reason in lines[0] or (kind == "a name too long" and lines[0].endswith(": no such file"))


@pytest.mark.parametrize("kind", ["a device", "a FIFO", "a folder", "too big"])
def test_the_user_config_that_is_not_a_readable_file_is_one_line_and_status_2(
    tmp_path: Path, kind: str
) -> None:
    make, reason = KINDS[kind]
    config = tmp_path / "config" / "venice-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    target = make(tmp_path)
    if kind == "a folder":
        config.mkdir()
    else:
        config.symlink_to(target)
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "q", timeout=60)
        assert fake.chat_bodies() == []
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"the user config {config}: " in done.stderr
    assert reason in done.stderr


def test_a_plan_piped_in_is_bounded_as_a_plan_file_is(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "run", "-", stdin=" " * (2 * MIB))
    assert done.returncode == 2 and "stdin: over 1.0 MB, the most a plan may be" in done.stderr


def test_a_dotenv_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """pydantic-settings reads a FIFO `.env` (for `<(…)`) and waited for a writer for ever."""
    fifo(tmp_path / ".env")
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "q", timeout=60)
    assert (
        done.returncode == 2 and done.stderr.strip() == "venice-agent: .env: a FIFO (named pipe), not a file"
    )


@pytest.mark.parametrize("surface", ["--schema @FILE", "--mcp-config", "run PLAN"])
def test_json_nested_too_deep_is_refused_in_one_line(tmp_path: Path, surface: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    argv, _ = SURFACES[surface]
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, *argv(str(deep)), timeout=60)
        assert fake.chat_bodies() == []
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "nested too deeply" in done.stderr, done.stderr


def test_a_user_config_nested_too_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config" / "venice-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "q", timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "is not TOML: nested too deeply" in done.stderr


LONG = "/tmp/" + "n" * 300 + "/x.db"


@pytest.mark.parametrize(
    "argv",
    [
        ["logs", "--db", LONG],
        ["logs", "--db", "~no-such-user-here/x.db"],
        ["chat", "--db", "~no-such-user-here/x.db", "--chat", "me"],
        ["--no-mcp", "--db", "~no-such-user-here/x.db", "q"],
        ["--no-mcp", "--root", "/tmp/" + "n" * 300, "q"],
        ["config", "set", "mcp-config", "~no-such-user-here/m.json"],
    ],
    ids=lambda argv: " ".join(argv)[:40],
)
def test_a_path_no_file_can_have_is_said_not_raised(tmp_path: Path, argv: list[str]) -> None:
    """A name longer than a file name may be made Path.exists raise (Errno 36), an unknown
    `~user` made Path.expanduser raise: both ended exit 1. They are names of nothing."""
    with fake_venice([{"text": "fine"}], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, *argv, stdin="", timeout=60)
    assert done.returncode in (0, 2), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
