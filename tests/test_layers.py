"""The package's layers, enforced: read every module's imports (those inside functions too) from its AST.

    app layer   taotoken_cli.app, taotoken_cli.commands.*, taotoken_cli.__main__  (Typer: parse, call, render)
    features    one package per command (check, init, route, doctor, …): the work and its rendering
    core        everything else (config, clients, diagnosis, gateway, hygiene, …): shared by every feature

Features import the core, never each other (the mock is the one library another feature, the demo, may
use); the core imports neither a feature nor the app layer; and no module reaches itself through imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = "taotoken_cli"
ROOT = REPO / PACKAGE
APP = ("taotoken_cli.app", "taotoken_cli.commands", "taotoken_cli.__main__")
FEATURES = ("check", "init", "route", "explain", "models", "doctor", "bench", "mock", "demo")
# feature -> the other features it may import
ALLOWED = {"demo": {"mock"}}
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def resolve(name: str) -> str | None:
    """The module `name` refers to: itself, or the package/module holding the attribute it names."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                target = resolve(name)
                if target and target != module and target != PACKAGE:
                    found.add(target)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def layer(module: str) -> str:
    if module.startswith(APP):
        return "app"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FEATURES:
        return parts[1]
    return "core"


def test_the_import_graph_is_read() -> None:
    """Guards the guard: the graph must see ordinary and function-level imports."""
    assert "taotoken_cli.gateway" in GRAPH["taotoken_cli.check.run"]
    assert "taotoken_cli.app" in GRAPH["taotoken_cli.__main__"]
    assert len(MODULES) > 40


def test_the_core_imports_no_feature_and_not_the_app() -> None:
    bad = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() if layer(m) == "core"
                 for t in targets if layer(t) != "core")
    assert not bad, "\n".join(bad)


def test_features_import_the_core_not_each_other() -> None:
    bad = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() if layer(m) in FEATURES
                 for t in targets if layer(t) == "app"
                 or (layer(t) in FEATURES and layer(t) != layer(m) and layer(t) not in ALLOWED.get(layer(m), ())))
    assert not bad, "\n".join(bad)


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over every import, function-level ones included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            # `import pkg.mod` also runs pkg/__init__; a package re-exporting its own modules is no cycle
            if node.startswith(target + "."):
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_module_is_longer_than_a_newcomer_can_read() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long
