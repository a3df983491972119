"""The README as a reader meets it: examples run as pasted (the shell block itself, through
bash), and no paragraph said twice.

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

from cli_support import COMMAND
from servers.net import free_port

README = Path(__file__).resolve().parent.parent / "README.md"


def sh_block_after(heading: str) -> str:
    """The first ```sh block after the paragraph that starts with `heading`."""
    text = README.read_text(encoding="utf-8")
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
    block = sh_block_after("**Tokens.**")
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


def test_no_paragraph_is_said_twice_in_a_section() -> None:
    """A paragraph's bold lead-in ("**Retries**:") names its subject once per `##` section; a
    second one is an older copy left behind by a merge, soon saying something else."""
    for section in re.split(r"^## ", README.read_text(encoding="utf-8"), flags=re.M):
        leads = Counter(re.findall(r"^\*\*([^*]+)\*\*", section, flags=re.M))
        twice = [lead for lead, count in leads.items() if count > 1]
        assert not twice, f"said twice in '## {section.splitlines()[0]}': {twice}"


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


def test_each_setting_has_one_row_and_no_section_points_to_a_work_branch() -> None:
    text = README.read_text()
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| `")]
    variables = [row for row in rows if row.strip("`").isupper()]
    assert len(variables) == len(set(variables)), [row for row in variables if variables.count(row) > 1]
    assert not re.search(r"\(see i\d+", text)  # a note left for another change, not for readers
