"""The import graph reads top-down (docs/architecture.md): ground modules import no
workload package, reporting does not need evaluation, and no two modules import each
other, directly or around a loop. Read from the source with `ast`, imports under
`if TYPE_CHECKING:` excluded (they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "rlsuite"
GROUND = (
    "experiment",
    "metrics",
    "errors",
    "results",
    "tracebacks",
    "flags",
    "options",
    "pbt",
    "workload",
    "search",
    "outputs",
)
UPPER = (
    "rlsuite.launcher",
    "rlsuite.rl",
    "rlsuite.supervised",
    "rlsuite.multiagent",
    "rlsuite.evaluation",
    "rlsuite.reporting",
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """rlsuite modules `path` imports at run time (module level or inside functions)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("rlsuite"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlsuite"):
            module = node.module or ""
            found.update(f"{module}.{a.name}" for a in node.names)
            found.add(module)
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for p in PACKAGE.rglob("*.py") if "envs" not in p.relative_to(PACKAGE).parts]
    names = {_module_name(p): p for p in files}
    return {
        name: {i for i in _imports(path) if i in names and i != name}
        for name, path in names.items()
    }


@pytest.mark.parametrize("ground", GROUND)
def test_ground_modules_import_no_workload_package(ground: str) -> None:
    imported = _imports(PACKAGE / f"{ground}.py")
    upward = sorted(i for i in imported if i.startswith(UPPER))
    assert not upward, f"rlsuite.{ground} imports {upward}"


def test_reporting_does_not_need_evaluation() -> None:
    for path in (PACKAGE / "reporting").glob("*.py"):
        assert not any(i.startswith("rlsuite.evaluation") for i in _imports(path)), path


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1 visiting, 2 done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                loop = [*path[path.index(target) :], target]
                raise AssertionError("import cycle: " + " -> ".join(loop))
            if target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
