"""The README and the manual (docs/) as a reader meets them: examples run as pasted (the shell
block itself, through bash), and no paragraph said twice.

Only what a test machine forces is changed (a free port instead of 8080), and the test checks
that each change found its place, so an edited example cannot slip past it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from cli_support import COMMAND, PYTHON, fake_venice
from servers.net import free_port

README = Path(__file__).resolve().parent.parent / "README.md"
DOCS = README.parent / "docs"


def pages() -> list[Path]:
    """The README and every page of the manual."""
    return [README, *sorted(DOCS.glob("*.md"))]


def sh_block_after(heading: str, page: Path = README) -> str:
    """The first ```sh block after the paragraph that starts with `heading` in `page`."""
    text = page.read_text(encoding="utf-8")
    rest = text[text.index(heading) :]
    start = rest.index("```sh\n") + len("```sh\n")
    return rest[start : rest.index("```", start)]


def needs(program: str) -> None:
    if shutil.which(program) is None:
        message = f"{program} is not installed (apt-get install -y {program})"
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(message)


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"the README example no longer holds {old!r}"
    return text.replace(old, new)


def test_the_token_example_answers_alice_as_written(tmp_path: Path) -> None:
    needs("curl")
    needs("openssl")
    port = free_port()
    block = sh_block_after("**Tokens.**", DOCS / "bot.md")
    block = replaced(block, "--token-file tokens &", f"--token-file tokens --port {port} &")
    block = replaced(block, "localhost:8080/", f"localhost:{port}/")
    env = {
        "PATH": f"{Path(COMMAND).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),  # the default store, away from the user's
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }  # no VENICE_API_KEY: the bot plans from commands, and `help` costs no call
    script = f"set -e\n{block}\nkill %1\nwait\n"
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    reply = json.loads(done.stdout.splitlines()[0])  # curl's output; serve's line goes to stderr
    assert reply["status"] == "stopped: answered · 0 calls · 5 left this hour", reply
    assert (tmp_path / "tokens").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_no_paragraph_is_said_twice_in_a_section(page: Path) -> None:
    """A paragraph's bold lead-in ("**Retries**:") names its subject once per `##` section; a
    second one is an older copy left behind by a merge, soon saying something else."""
    for section in re.split(r"^## ", page.read_text(encoding="utf-8"), flags=re.M):
        leads = Counter(re.findall(r"^\*\*([^*]+)\*\*", section, flags=re.M))
        twice = [lead for lead, count in leads.items() if count > 1]
        assert not twice, f"said twice in {page.name}, '## {section.splitlines()[0]}': {twice}"


def test_the_install_section_names_the_package_to_uninstall_and_how_to_find_the_command() -> None:
    import tomllib

    section = README.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    package = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["name"]
    assert f"uv tool uninstall {package} " in section  # the command's name would be refused
    assert "uv tool update-shell" in section
    assert "OWNER" not in section  # a placeholder that looks like part of a real URL
    # The commands it gives are uv's: an older or newer uv that renamed one would fail here.
    for words in (["tool", "update-shell"], ["tool", "uninstall"], ["tool", "install"]):
        done = subprocess.run(["uv", *words, "--help"], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_the_readme_is_short_and_leaves_the_rest_to_the_manual() -> None:
    """A newcomer reads the README in five minutes (issue 36): what the agent is, trying it,
    installing it, the first question, your own servers, the fronts, where to read more."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    sections = re.findall(r"^## (.+)$", text, flags=re.M)
    assert sections == ["What it does", "Install", "Where to read more"], sections
    for front in ('`venice-agent "question"`', "`venice-agent run PLAN`", "`venice-agent serve`"):
        assert front in text.split("## What it does", 1)[1], front


def first_screen() -> str:
    """What a reader sees first: the README up to its first `##` section."""
    return README.read_text(encoding="utf-8").split("\n## ", 1)[0]


def run_block(
    block: str, folder: Path, bin_folder: Path | str, **env: str
) -> subprocess.CompletedProcess[str]:
    """A README shell block run as pasted, in `folder`, with the command from `bin_folder`, no
    key and nothing of the user's (`env` adds to it)."""
    variables = {
        "PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(folder),
        "XDG_DATA_HOME": str(folder / "data"),
        "XDG_CONFIG_HOME": str(folder / "config"),
        **env,
    }
    return subprocess.run(
        ["bash", "-c", f"set -e\n{block}"],
        cwd=folder, env=variables, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def check_the_demo_block(folder: Path, bin_folder: Path) -> None:
    """The first screen's "Try it without a key" block, as written, in a folder that is no clone,
    with no key and the model server's URL where nothing listens."""
    block = sh_block_after("**Try it without a key**")
    assert block.splitlines()[0].startswith("venice-agent demo --tour ")
    done = run_block(block, folder, bin_folder, VENICE_BASE_URL="http://127.0.0.1:9")
    assert done.returncode == 0, done.stderr
    assert "stopped: answered · 3 calls · 4 rounds" in done.stdout  # the tour
    assert "played by a stand-in" in done.stdout  # the question
    assert "stopped: answered · 2 calls proposed: 1 ran, 1 not run (no one to ask)" in done.stdout
    assert "/help for commands" in done.stderr  # and the REPL, which left at once: no input


def test_the_first_screen_says_what_it_is_how_to_install_try_ask_and_add_servers(tmp_path: Path) -> None:
    screen = first_screen()
    assert len(screen.splitlines()) <= 50
    for lead in ("A terminal agent", "**Install**", "**Try it without a key**", "**Ask a real model**"):
        assert f"\n{lead}" in screen, lead
    assert "**Add your own MCP servers**" in screen
    install = README.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    for command in re.findall(r"`(uv tool install [^`]+)`", screen):  # as the Install section says
        assert command in install, command
    check_the_demo_block(tmp_path, Path(COMMAND).parent)


def test_the_first_screen_asks_and_adds_an_mcp_server_as_written(tmp_path: Path) -> None:
    """Against the fake Venice; `uvx` would download mcp-server-time and Apify is on the
    network, which a test machine has not: a stand-in `uvx` runs the copy the tests installed,
    and Apify's URL is one where nothing listens (its tools are then left out, as said)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    uvx = tools / "uvx"
    uvx.write_text(f'#!/bin/sh\n[ "$1" = mcp-server-time ] && shift\nexec {PYTHON} -m mcp_server_time "$@"\n')
    uvx.chmod(0o755)
    asking = sh_block_after("**Ask a real model**")
    servers = sh_block_after("**Add your own MCP servers**")
    script = [
        {"text": "Website Content Crawler, or apify/hacker-news-scraper."},
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]},
        {"text": "I could not ask the clock."},
    ]
    with fake_venice(script, tmp_path) as fake:
        env = {"VENICE_BASE_URL": fake.base_url, "APIFY_MCP_URL": "http://127.0.0.1:9/mcp"}
        path = f"{tools}{os.pathsep}{Path(COMMAND).parent}"
        asked = run_block(asking, tmp_path, path, **env)
        added = run_block(servers, tmp_path, path, VENICE_API_KEY="test-key", **env)
        bodies = fake.chat_bodies()
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("Website Content Crawler")
    assert added.returncode == 0, added.stderr
    assert "get_current_time" in added.stdout  # tools list, then the question's receipt
    assert "stopped: answered" in added.stdout and "skipped get_current_time" in added.stderr
    assert len(bodies) == 3 and bodies[1]["messages"][-1]["content"] == "What time is it in Tokyo?"


def test_each_setting_has_one_row_and_no_section_points_to_a_work_branch() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages())
    assert "| `VENICE_API_KEY` |" in (DOCS / "configuration.md").read_text(encoding="utf-8")  # the table
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| `")]
    variables = [row for row in rows if row.strip("`").isupper()]
    assert len(variables) == len(set(variables)), [row for row in variables if variables.count(row) > 1]
    assert not re.search(r"\(see i\d+", text)  # a note left for another change, not for readers
