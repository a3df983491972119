"""The manual holds together: every page of docs/ is reachable from the README, and every
relative link of the README and the pages (a file, a folder, a heading's anchor) leads somewhere.

Anchors are GitHub's: a heading lower-cased, its punctuation dropped, spaces made dashes, and
`-1`, `-2` added to a repeated one.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose(text: str) -> str:
    """`text` without its fenced code blocks and inline code: what renders as links and headings."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return re.sub(r"`[^`\n]*`", lambda code: code.group(0).strip("`"), "\n".join(lines))


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page`."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*#*$", prose(page.read_text(encoding="utf-8")), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


def links(page: Path) -> list[str]:
    return LINK.findall(prose(page.read_text(encoding="utf-8")))


def test_the_anchors_are_githubs() -> None:
    assert {"private-models-e2ee", "venice-agent-run-plan", "checking-the-setup-venice-agent-doctor"} <= (
        anchors(DOCS / "models.md") | anchors(DOCS / "loop.md") | anchors(DOCS / "configuration.md")
    )


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_each_relative_link_leads_to_a_file_and_an_anchor_there(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not ours to check offline
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / unquote(path)).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (destination.is_dir() or anchor not in anchors(destination)):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


def test_every_page_of_the_manual_is_linked_from_the_readme() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in links(README)}
    unlinked = [page.name for page in sorted(DOCS.glob("*.md")) if page.resolve() not in linked]
    assert not unlinked, f"docs pages the README's 'Where to read more' does not link: {unlinked}"


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_each_source_file_a_page_names_is_there(page: Path) -> None:
    """`fronts/terminal/repl.py`, `tests/test_x.py`: a module named by its path is where the page
    says (from the repository, or from the package), so a move that leaves a page behind fails."""
    named = re.findall(r"`([\w./]+/[\w]+\.(?:py|html|jinja))`", page.read_text(encoding="utf-8"))
    package = REPO / "src" / "venice_terminal_agent"
    gone = [
        path for path in named if not any((root / path).exists() for root in (REPO, REPO / "src", package))
    ]
    assert not gone, f"{page.relative_to(REPO)} names files that are not there: {gone}"
