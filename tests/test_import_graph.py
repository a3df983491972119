"""The package's import graph: no cycles (function-level imports count too), and data flows one
way: the edges (`cli`, `serve`) may import the core; the core never imports an edge, nor the
test fakes (`testing`)."""

from __future__ import annotations

import ast
from pathlib import Path

import venice_terminal_agent

PACKAGE = Path(venice_terminal_agent.__file__).parent
ROOT = "venice_terminal_agent"
EDGES = ("cli", "serve", "__main__")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules `name` imports anywhere in its body, except under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {target for target in found if target in known and target != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def layer(name: str) -> str:
    return name.removeprefix(ROOT + ".").split(".")[0]


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_the_core_imports_neither_the_command_line_nor_the_server_nor_the_fakes() -> None:
    wrong = {
        (name, target)
        for name, targets in graph().items()
        if layer(name) not in (*EDGES, "testing")
        for target in targets
        if layer(target) in (*EDGES, "testing")
    }
    assert wrong == set()


def test_the_checks_see_what_they_must() -> None:
    # The graph is really read: a known edge, a function-level import, and a planted cycle.
    edges = graph()
    assert f"{ROOT}.loop" in edges[f"{ROOT}.agent"]
    assert f"{ROOT}.cli.runtime" in edges[f"{ROOT}.cli.ask_cmd"]
    assert f"{ROOT}.tools.builtin" in edges[f"{ROOT}.tools.mcp_toolbox"]  # imported inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
