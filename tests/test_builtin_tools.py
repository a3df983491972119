"""Built-in tools: files confined to a root, pages of long results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from venice_terminal_agent import Answer, Call, Exit, ToolError, run_loop
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.tools.builtin import FileTools, builtin_toolbox


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    (root / "docs" / "guide.md").write_text("guide\n")
    (root / ".env").write_text("VENICE_API_KEY=secret\n")
    (root / ".hidden").write_text("x")
    (tmp_path / "outside.txt").write_text("SECRET OUTSIDE\n")
    (tmp_path / "outside-dir").mkdir()
    return root


def test_reads_and_lists_inside_the_root(tree: Path) -> None:
    files = FileTools(tree)
    assert files.read_file("README.md") == "hello\n"
    assert files.read_file("docs/guide.md") == "guide\n"
    assert files.read_file("./docs/guide.md") == "guide\n"
    assert files.list_files(".") == ["README.md", "docs/"]  # hidden files are not listed
    assert files.list_files("docs") == ["guide.md"]


@pytest.mark.parametrize(
    "path", ["../outside.txt", "docs/../../outside.txt", "..", "docs/..", "..\\outside.txt"]
)
def test_parent_traversal_is_refused(tree: Path, path: str) -> None:
    with pytest.raises(ToolError, match=r"'\.\.' is refused"):
        FileTools(tree).read_file(path)


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "//etc/passwd"])
def test_absolute_paths_are_refused(tree: Path, path: str) -> None:
    with pytest.raises(ToolError, match="absolute paths are refused"):
        FileTools(tree).read_file(path)
    with pytest.raises(ToolError, match="absolute paths are refused"):
        FileTools(tree).list_files(path)


def test_absolute_path_inside_the_root_is_refused_too(tree: Path) -> None:
    with pytest.raises(ToolError, match="absolute"):
        FileTools(tree).read_file(str(tree / "README.md"))


def test_symlink_out_of_the_root_is_refused(tree: Path) -> None:
    os.symlink(tree.parent / "outside.txt", tree / "escape.txt")
    os.symlink(tree.parent / "outside-dir", tree / "escape-dir")
    files = FileTools(tree)
    with pytest.raises(ToolError, match="symbolic link"):
        files.read_file("escape.txt")
    with pytest.raises(ToolError, match="symbolic link"):
        files.list_files("escape-dir")


def test_symlink_inside_the_root_is_fine(tree: Path) -> None:
    os.symlink(tree / "docs" / "guide.md", tree / "link.md")
    assert FileTools(tree).read_file("link.md") == "guide\n"


def test_root_that_is_itself_a_symlink_works(tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(tree, alias)
    assert FileTools(alias).read_file("README.md") == "hello\n"


def test_env_files_are_never_read(tree: Path) -> None:
    with pytest.raises(ToolError, match="secrets"):
        FileTools(tree).read_file(".env")


def test_missing_file_binary_file_and_folder_are_readable_errors(tree: Path) -> None:
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02")
    files = FileTools(tree)
    with pytest.raises(ToolError, match="no such file"):
        files.read_file("nope.md")
    with pytest.raises(ToolError, match="binary"):
        files.read_file("blob.bin")
    with pytest.raises(ToolError, match="not a file"):
        files.read_file("docs")
    with pytest.raises(ToolError, match="no such folder"):
        files.list_files("nope")


async def test_traversal_through_the_loop_is_a_tool_error_not_a_crash(tree: Path) -> None:
    receipt = await run_loop([Call("read_file", {"path": "../outside.txt"})], builtin_toolbox(tree))
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert "SECRET" not in str(receipt.to_dict())
    assert "read_file" in receipt.refusal


async def test_page_through_a_long_file(tree: Path) -> None:
    (tree / "long.txt").write_text("".join(f"line {i:04d}\n" for i in range(100)))  # 1000 chars
    pager = Pager(page_chars=400)
    plan = [
        Call("read_file", {"path": "long.txt"}),
        Call("page", {"id": 2}),
        Call("page", {"id": 3}),
        Answer("read it all"),
    ]
    receipt = await run_loop(plan, builtin_toolbox(tree, pager), budget=5, pager=pager)
    assert receipt.stopped_because is Exit.ANSWERED
    first, second, third = (s.result for s in receipt.steps)
    assert "600 more characters in page ids 2-3: call page(id=2)" in first
    assert second.startswith("line 0040")
    assert "last page" in third
    text = "".join(part.split("\n[page")[0] for part in (first, second, third))
    assert text == (tree / "long.txt").read_text()


async def test_page_with_an_unknown_id_is_refused(tree: Path) -> None:
    receipt = await run_loop([Call("page", {"id": 7})], builtin_toolbox(tree))
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert "no page with id 7" in receipt.refusal


def test_builtin_specs_are_read_only_and_describe_their_arguments(tree: Path) -> None:
    specs = {spec.name: spec for spec in builtin_toolbox(tree).specs()}
    assert set(specs) == {"read_file", "list_files", "page"}
    assert all(spec.read_only for spec in specs.values())
    assert specs["read_file"].parameters["required"] == ["path"]
    assert specs["page"].parameters["properties"]["id"] == {"type": "integer"}
    assert specs["page"].openai_function()["function"]["name"] == "page"


def test_a_single_remaining_page_is_named_as_one_id() -> None:
    first = Pager(page_chars=100).cut("y" * 150)
    assert "50 more characters in page id 2: call page(id=2)" in first
