"""The package's layers, enforced: the import-linter contracts in pyproject.toml (`lint-imports`), and what
they cannot say, read from every module's AST (imports inside functions too):

    app         taotoken_cli.app, taotoken_cli.__main__               the Typer app and the entry point
    commands    taotoken_cli.cmd.<command>/ (cli, run, view, model)    one package per command
    core        taotoken_cli.core.<wing>/                              shared by every command, in layered wings

No module reaches itself through imports; no folder reaches itself through another folder; only the terminal
wing (core.term) prints or prompts; no module is longer than a newcomer can read.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = "taotoken_cli"
ROOT = REPO / PACKAGE
APP = ("taotoken_cli.app", "taotoken_cli.__main__")
COMMANDS = tuple(sorted(p.name for p in (ROOT / "cmd").iterdir() if (p / "__init__.py").exists()))
WINGS = tuple(sorted(p.name for p in (ROOT / "core").iterdir() if (p / "__init__.py").exists()))
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
    """app, cmd.<command>, cmd (the shared Typer helpers) or core.<wing>."""
    if module.startswith(APP) or module == PACKAGE:
        return "app"
    parts = module.split(".")
    if parts[1] in ("cmd", "core") and len(parts) > 2 and parts[2] in (*COMMANDS, *WINGS):
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


def test_the_import_graph_is_read() -> None:
    """Guards the guard: the graph must see ordinary and function-level imports."""
    assert "taotoken_cli.core.net.gateway" in GRAPH["taotoken_cli.cmd.check.run"]
    assert "taotoken_cli.app" in GRAPH["taotoken_cli.__main__"]
    assert len(MODULES) > 40


def test_the_import_linter_contracts_hold() -> None:
    """pyproject.toml's [tool.importlinter] contracts: app > commands > core; commands independent (demo drives
    the mock); the core's wings layered; no wing but core.term imports a terminal library (rich, typer, click,
    getpass); no folder loops (acyclic siblings in every package). Each contract is checked by import-linter."""
    from importlinter.application.use_cases import lint_imports
    from importlinter.configuration import configure

    configure()
    config = str(REPO / "pyproject.toml")
    assert lint_imports(config_filename=config, cache_dir=None, no_logo=True) is True, "see `lint-imports`"


def test_every_command_and_wing_is_named_in_a_contract() -> None:
    """A new command or wing that no contract names would escape the rules."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    independent = {m for c in contracts["contracts"] for m in c.get("modules", [])}
    layered = {part.strip() for c in contracts["contracts"] if c.get("containers") == ["taotoken_cli.core"]
               for layer in c["layers"] for part in layer.replace(":", "|").split("|")}
    missing = [f"cmd.{c}" for c in COMMANDS if f"taotoken_cli.cmd.{c}" not in independent]
    missing += [f"core.{w}" for w in WINGS if w not in layered]
    quiet = {m for c in contracts["contracts"] if c["type"] == "forbidden" and "rich" in c["forbidden_modules"]
             for m in c["source_modules"]}
    missing += [f"core.{w} (may not print)" for w in WINGS if w != "term" and f"taotoken_cli.core.{w}" not in quiet]
    assert not missing, missing
    assert any(c["type"] == "acyclic_siblings" and c["ancestors"] == [PACKAGE] for c in contracts["contracts"])
    assert {"base", "term", "files", "formats", "net", "settings", "clients", "diagnosis", "devices"} <= set(WINGS)


def test_the_core_imports_no_command_and_not_the_app() -> None:
    """Also what import-linter's layers say, read here from the AST so the failure names the line's module."""
    bad = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() if layer(m).startswith("core.")
                 for t in targets if not layer(t).startswith("core."))
    assert not bad, "\n".join(bad)


def test_only_the_terminal_wing_prints_or_prompts() -> None:
    """The rest of the core computes and returns; rendering lives in core.term and the commands' views."""
    banned = {"print", "input", "getpass"}
    bad = []
    for module, path in MODULES.items():
        if not layer(module).startswith("core.") or layer(module) == "core.term":
            continue
        if module == "taotoken_cli.core.devices.backends":  # a child process whose stdout is its JSON answer
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                base = node.func.value if isinstance(node.func, ast.Attribute) else None
                stream = isinstance(base, ast.Attribute) and base.attr in ("stdout", "stderr")
                if name in banned or (stream and name == "write"):
                    bad.append(f"{module}:{node.lineno} {name}()")
    assert not bad, "\n".join(bad)


def test_no_folder_reaches_itself_through_another() -> None:
    """Folders (packages) form no loop: collapse each module to its folder and look for cycles, a folder's
    own subfolders aside (a package may use its parts, and a part its package's shared modules)."""
    def folder(module: str) -> str:
        return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]

    edges: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        a = folder(module)
        for target in targets:
            b = folder(target)
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                edges.setdefault(a, set()).add(b)
    loops = sorted(f"{a} <-> {b}" for a, targets in edges.items() for b in targets
                   if a < b and a in edges.get(b, set()))
    assert not loops, "\n".join(loops)


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


# Asking which OS this is belongs to core.platform (system.current() and its facts). The one exception: the device
# probe's backends.py runs as a standalone script in its own interpreter and imports nothing from the package.
OS_TESTS = {("os", "name"), ("sys", "platform"), ("platform", "system"), ("platform", "platform")}
OS_TEST_EXCEPTIONS = {"taotoken_cli.core.devices.backends"}


def os_tests_in(source: str) -> list[str]:
    """`os.name`, `sys.platform`, `platform.system(...)` read in `source` (as `module.attribute`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in OS_TESTS:
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    return found


def test_only_the_platform_wing_asks_which_os_this_is() -> None:
    scattered = {module: hits for module, path in MODULES.items()
                 if not module.startswith("taotoken_cli.core.platform") and module not in OS_TEST_EXCEPTIONS
                 and (hits := os_tests_in(path.read_text(encoding="utf-8")))}
    assert not scattered, f"ask taotoken_cli.core.platform.system.current() instead: {scattered}"


def test_the_os_test_finder_finds_what_it_looks_for() -> None:
    source = "import os, sys\nx = os.name == 'nt' or sys.platform.startswith('win')\n"
    assert sorted(os_tests_in(source)) == ["os.name (line 2)", "sys.platform (line 2)"]
    assert os_tests_in("name = options.name\n") == []
