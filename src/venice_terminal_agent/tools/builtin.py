"""Built-in tools that make the agent useful with no network: files under one root, and pages.

`read_file` and `list_files` see only what lies under their root folder: absolute paths, `..`
and symbolic links that lead out of the root are refused with a `ToolError`.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.errors import ToolError
from ..core.pager import Pager
from ..core.toolbox import FunctionToolbox

MAX_FILE_BYTES = 2_000_000
MAX_LISTED = 500


class FileTools:
    """`read_file` and `list_files`, confined to `root`."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root if root is not None else Path.cwd()).resolve()

    def resolve(self, path: str) -> Path:
        """The real path of `path` under the root, or a `ToolError` saying why not."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string")
        if "\x00" in path:
            raise ToolError("path contains a NUL byte")
        pure = PurePosixPath(path.replace("\\", "/"))
        if pure.is_absolute() or Path(path).is_absolute():
            raise ToolError(f"absolute paths are refused ({path}); give a path under the root")
        if ".." in pure.parts:
            raise ToolError(f"'..' is refused ({path}); paths stay under the root")
        real = (self.root / pure).resolve()
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolError(f"{path} leads out of the root through a symbolic link")
        return real

    def read_file(self, path: str) -> str:
        """Read a text file under the working folder."""
        real = self.resolve(path)
        if real.name == ".env" or real.name.startswith(".env."):
            raise ToolError(f"{path} holds secrets and is never read")
        if not real.exists():
            raise ToolError(f"no such file: {path}")
        if not real.is_file():
            raise ToolError(f"{path} is not a file")
        size = real.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(f"{path} is {size} bytes, over the {MAX_FILE_BYTES} limit")
        data = real.read_bytes()
        if b"\x00" in data[:8192]:
            raise ToolError(f"{path} is a binary file")
        return data.decode("utf-8", errors="replace")

    def list_files(self, path: str = ".") -> list[str]:
        """List a folder under the working folder (folders end with '/')."""
        real = self.resolve(path)
        if not real.is_dir():
            raise ToolError(f"no such folder: {path}")
        names: list[str] = []
        for entry in sorted(real.iterdir(), key=lambda p: p.name):
            if entry.name.startswith("."):
                continue  # hidden files (.git, .venv, .env) are noise and may hold secrets
            names.append(entry.name + ("/" if entry.is_dir() else ""))
            if len(names) >= MAX_LISTED:
                names.append(f"… (more than {MAX_LISTED} entries, list a sub-folder)")
                break
        return names


def builtin_toolbox(
    root: str | os.PathLike[str] | None = None, pager: Pager | None = None, *, files: bool = True
) -> FunctionToolbox:
    """`read_file`, `list_files` and `page`, all read-only (they never need consent).

    `files=False` (--no-files) leaves the file tools out: only `page` remains."""
    folder = FileTools(root)
    pages = pager if pager is not None else Pager()

    def page(id: int) -> str:
        """Return one page of a long result cut earlier in this run, by its id."""
        return pages.get(id)

    functions: dict[str, Any] = (
        {"read_file": folder.read_file, "list_files": folder.list_files} if files else {}
    )
    functions["page"] = page
    return FunctionToolbox(functions, read_only=functions)
