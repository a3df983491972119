"""The package's import graph: no cycles (function-level imports count too), and each folder is a
layer that imports only the layers below it: `core` nothing of ours; `model`, `store` and the
built-in `tools` only `core`; `mcp` those; `agent` and `bot` above them; then `fronts/` (the
runtime and what the fronts share); each front (`fronts/terminal`, `fronts/acp`,
`fronts/mcp_server`, `fronts/serve`, …) on that, and none imports another; `cli`, the Typer
shell, on top. Nothing below the fronts imports one."""

from __future__ import annotations

import ast
from pathlib import Path

import venice_terminal_agent

PACKAGE = Path(venice_terminal_agent.__file__).parent
ROOT = "venice_terminal_agent"


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
    """The folder a module belongs to; inside `fronts/`, each front's folder is a layer of its own
    (`fronts.terminal`), and the modules beside them (the runtime, what fronts share) are `fronts`."""
    parts = name.removeprefix(ROOT).removeprefix(".").split(".")
    if parts[0] == "fronts" and len(parts) > 2:
        return f"fronts.{parts[1]}"
    return parts[0] or ROOT


# What each layer may import besides itself (docs/architecture.md says why). The package root
# holds the public names, each imported on first use, and `__version__`: anyone may import it.
BELOW_FRONTS = {"core", "config", "model", "store", "tools", "mcp", "agent", "bot", "telemetry"}
FRONTS = {"fronts.terminal", "fronts.acp", "fronts.mcp_server", "fronts.serve", "fronts.batch"}
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "config": {"core"},  # the settings: read by the fronts and handed down
    "model": {"core"},
    "store": {"core"},
    "tools": {"core"},  # the built-in tools
    "mcp": {"core", "model", "tools"},  # model: a server's sampling request; tools: names kept
    "agent": {"core", "model", "mcp", "tools"},
    "bot": {"core", "store", "tools", "model", "mcp", "agent"},
    "testing": {"core", "model"},  # the scripted fakes
    "telemetry": {"core"},  # traces and metrics: the runs' hooks (core/observe.py) as OpenTelemetry
    "fronts": BELOW_FRONTS,  # the runtime (the composition root) and what the fronts share
    **{front: BELOW_FRONTS | {"fronts"} for front in FRONTS},  # each front: never a sibling
    # the Typer shell and the admin commands call the fronts' bodies; `demo`, the stand-in model
    "cli": BELOW_FRONTS | {"fronts", "testing"} | FRONTS,
    "__main__": {"cli"},
}
def against_layers(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (name, target)
        for name, targets in edges.items()
        for target in targets
        if layer(target) not in (layer(name), ROOT) and layer(target) not in LAYERS[layer(name)]
    }


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_every_folder_is_a_layer() -> None:
    assert {layer(name) for name in graph()} - {ROOT} == set(LAYERS)


def test_each_layer_imports_only_the_layers_below_it() -> None:
    assert against_layers(graph()) == set()


def test_the_checks_see_what_they_must() -> None:
    # The graph is really read: a known edge, a function-level import, and a planted cycle.
    edges = graph()
    assert f"{ROOT}.core.loop" in edges[f"{ROOT}.agent"]
    assert f"{ROOT}.fronts.runtime" in edges[f"{ROOT}.fronts.terminal.ask"]
    assert f"{ROOT}.tools.builtin" in edges[f"{ROOT}.mcp.toolbox"]  # imported inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    # and an import against the layers is found: the loop reaching up into MCP, a store into the bot
    planted = {
        f"{ROOT}.core.loop": {f"{ROOT}.mcp.session"},
        f"{ROOT}.store.sqlite": {f"{ROOT}.bot.bot", f"{ROOT}.core.errors"},
    }
    assert against_layers(planted) == {
        (f"{ROOT}.core.loop", f"{ROOT}.mcp.session"),
        (f"{ROOT}.store.sqlite", f"{ROOT}.bot.bot"),
    }


def test_no_front_imports_another() -> None:
    # Each front stands on the runtime alone: a sibling's import is refused, and so is the
    # runtime (or a module the fronts share) reaching up into a front, or a front into `cli`.
    assert layer(f"{ROOT}.fronts.terminal.ask") == "fronts.terminal"
    assert layer(f"{ROOT}.fronts.runtime") == "fronts"
    assert {layer(name) for name in graph()} >= FRONTS | {"fronts"}
    planted = {
        f"{ROOT}.fronts.mcp_server.mcp_main": {f"{ROOT}.fronts.serve.serve_main", f"{ROOT}.fronts.listening"},
        f"{ROOT}.fronts.acp.acp_main": {f"{ROOT}.fronts.terminal.render", f"{ROOT}.fronts.runtime"},
        f"{ROOT}.fronts.saved_sessions": {f"{ROOT}.fronts.terminal.repl"},
        f"{ROOT}.fronts.terminal.run": {f"{ROOT}.cli.tools_cmd"},
        f"{ROOT}.bot.bot": {f"{ROOT}.fronts.runtime"},
    }
    assert against_layers(planted) == {
        (f"{ROOT}.fronts.mcp_server.mcp_main", f"{ROOT}.fronts.serve.serve_main"),
        (f"{ROOT}.fronts.acp.acp_main", f"{ROOT}.fronts.terminal.render"),
        (f"{ROOT}.fronts.saved_sessions", f"{ROOT}.fronts.terminal.repl"),
        (f"{ROOT}.fronts.terminal.run", f"{ROOT}.cli.tools_cmd"),
        (f"{ROOT}.bot.bot", f"{ROOT}.fronts.runtime"),
    }
