"""The package's modules import one another without a cycle, so that the
layout reads as the flow corpus → build → simulate → score → reflect →
propose → evolve, with report and runs beside it. Every import counts, the
ones inside functions too: a lazy import hides a cycle, it does not break it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from repo_files import REPO

PACKAGE = REPO / "routesim_evolve"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("routesim_evolve", *path.relative_to(PACKAGE).with_suffix("").parts)
        out[".".join(parts).removesuffix(".__init__")] = path
    return out


def _imports(path: Path, modules: dict[str, Path]) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        yield from (n for n in names if n in modules)


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_no_module_imports_itself_round_a_cycle():
    modules = _modules()
    edges = {name: set(_imports(path, modules)) - {name} for name, path in modules.items()}
    assert _cycle(edges) is None, " → ".join(_cycle(edges) or [])


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
