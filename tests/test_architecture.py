"""The package's layers, checked from its source with `ast` (nothing is imported).

- `skills_lsp/core/` is the pipeline, in stages (STAGES, lowest first): a module imports only from
  its own stage or a lower one. A new subpackage of core must be given its place in STAGES.
- Above core: `adk`, `server` and `cli`. Core imports none of them; `adk` and `server` import
  neither each other nor `cli`; `cli` may import everything (it starts the server).
- No import cycle anywhere in the package, counting imports under `if TYPE_CHECKING:`.
- No import inside a function in core, but of an optional extra's modules (FUNCTION_LEVEL_OK), or
  where a lazy import is the point (LAZY_OK: the module and what it may import late, and why).

The checker takes the package's folder as a parameter, so the tests below also run it over a
copy of the package with one wrong import put in, and show that it is caught.
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "skills_lsp"

# The stages of core, lowest first; the top-level modules of core (model, errors, schema) are 0.
STAGES = ("files", "parse", "rules", "index", "routing", "engine", "assist", "workspace")
UPPER = {"adk": {"core"}, "server": {"core"}, "cli": {"core", "server", "adk"}}
EXEMPT = {"skills_lsp", "skills_lsp.__main__", "skills_lsp._version"}  # the public entry points
FUNCTION_LEVEL_OK = ("safetensors", "tokenizers", "onnxruntime", "google", "wordllama", "pydantic")
LAZY_OK = {
    # jsonschema costs about 100 ms to import and a fully cached re-check never validates.
    "skills_lsp.core.schema": ("jsonschema", "referencing"),
    # tomllib costs about 8 ms to import, and only a pyproject.toml that names skills-lsp needs it.
    "skills_lsp.core.files.cache": ("tomllib", "tomli"),
}


@dataclass(frozen=True)
class Import:
    target: str  # a module of the package, or an outside module's name
    line: int
    type_only: bool  # under `if TYPE_CHECKING:`
    in_function: bool


def module_name(package_dir: Path, path: Path) -> str:
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package_dir: Path) -> dict[str, Path]:
    return {module_name(package_dir, p): p for p in sorted(package_dir.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str:
    """The package module an imported name is, or the name itself for outside modules."""
    while name and name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]

    def visit(node: ast.AST, type_only: bool, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for item in child.body:
                    visit_one(item, True, in_function)
                for item in child.orelse:
                    visit_one(item, type_only, in_function)
            else:
                visit_one(child, type_only, in_function)

    def visit_one(node: ast.AST, type_only: bool, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(_resolve(alias.name, known), node.lineno, type_only, in_function))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in known else _resolve(base, known)
                found.append(Import(target, node.lineno, type_only, in_function))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            visit(node, type_only, True)
        else:
            visit(node, type_only, in_function)

    visit(tree, False, False)
    return found


def layer(module: str) -> tuple[str, int]:
    """("core", stage), ("adk" | "server" | "cli", 0), or ("", 0) for the entry points."""
    parts = module.split(".")
    if len(parts) < 2 or module in EXEMPT:
        return "", 0
    if parts[1] != "core":
        return parts[1], 0
    if len(parts) == 3 and parts[2] not in STAGES:
        return "core", 0  # model, errors, schema and the core package itself
    stage = parts[2] if len(parts) > 2 else ""
    return "core", (STAGES.index(stage) + 1 if stage in STAGES else -1)


def violations(package_dir: Path) -> list[str]:
    known = modules(package_dir)
    problems: list[str] = []
    graph: dict[str, set[str]] = {}
    for sub in sorted(p.name for p in (package_dir / "core").iterdir() if (p / "__init__.py").is_file()):
        if sub not in STAGES:
            problems.append(f"core/{sub}/ has no place in STAGES: add it in tests/test_architecture.py")
    for module, path in known.items():
        where = f"{path.relative_to(package_dir.parent)}"
        own_layer, own_stage = layer(module)
        graph[module] = set()
        for imp in imports_of(module, path, known):
            if imp.target not in known:
                lazy_ok = imp.target.split(".")[0] in (*FUNCTION_LEVEL_OK, *LAZY_OK.get(module, ()))
                if imp.in_function and own_layer == "core" and not lazy_ok:
                    problems.append(f"{where}:{imp.line}: imports {imp.target} inside a function")
                continue
            if not imp.in_function:
                graph[module].add(imp.target)
            elif own_layer == "core":
                problems.append(f"{where}:{imp.line}: imports {imp.target} inside a function")
            if not own_layer or imp.target == module:
                continue
            their_layer, their_stage = layer(imp.target)
            if own_layer == "core" and their_layer not in ("core", ""):
                problems.append(f"{where}:{imp.line}: core imports {imp.target}")
            elif own_layer == "core" and their_stage > own_stage:
                problems.append(
                    f"{where}:{imp.line}: stage {STAGES[own_stage - 1] if own_stage else 'core'} imports "
                    f"{imp.target}, a later stage"
                )
            elif own_layer in UPPER and their_layer not in ("", own_layer, *UPPER[own_layer]):
                problems.append(f"{where}:{imp.line}: {own_layer} imports {imp.target}")
    problems += [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


# --- the package as it is --------------------------------------------------------------------------


def test_the_package_keeps_its_layers() -> None:
    problems = violations(PACKAGE)
    assert not problems, "\n".join(problems)


def test_every_stage_exists_and_says_what_it_owns() -> None:
    for stage in STAGES:
        init = PACKAGE / "core" / stage / "__init__.py"
        assert init.is_file(), f"core/{stage}/ is listed in STAGES but missing"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), (
            f"core/{stage}/ has no docstring"
        )


# --- the checker catches what it should ------------------------------------------------------------


def _with(tmp_path: Path, file: str, line: str) -> list[str]:
    """The violations of a copy of the package with `line` added to `file`, minus today's."""
    copy = tmp_path / "skills_lsp"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        (target.read_text(encoding="utf-8") if target.exists() else "") + line, encoding="utf-8"
    )
    before = set(violations(PACKAGE))
    return [v for v in violations(copy) if v not in before]


def test_a_lower_stage_importing_a_higher_one_is_caught(tmp_path: Path) -> None:
    found = _with(tmp_path, "core/parse/markdown.py", "\nfrom skills_lsp.core.routing import scorer\n")
    assert len(found) == 1 and "stage parse imports skills_lsp.core.routing.scorer" in found[0], found


def test_core_importing_the_server_is_caught(tmp_path: Path) -> None:
    found = _with(tmp_path, "core/model.py", "\nfrom skills_lsp.server import app\n")
    assert any("core imports skills_lsp.server.app" in v for v in found), found


def test_a_type_only_cycle_is_caught(tmp_path: Path) -> None:
    line = "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from skills_lsp.server import app\n"
    found = _with(tmp_path, "server/positions.py", line)
    assert any(v.startswith("import cycle:") and "skills_lsp.server.positions" in v for v in found), found


def test_a_function_level_import_in_core_is_caught_but_not_an_extras(tmp_path: Path) -> None:
    found = _with(tmp_path, "core/model.py", "\ndef late():\n    import json\n    return json\n")
    assert len(found) == 1 and "imports json inside a function" in found[0], found
    assert _with(tmp_path / "b", "core/model.py", "\ndef late():\n    import onnxruntime\n") == []


def test_a_core_subpackage_without_a_stage_is_caught(tmp_path: Path) -> None:
    found = _with(tmp_path, "core/extra/__init__.py", '"""Somewhere new."""\n')
    assert found == ["core/extra/ has no place in STAGES: add it in tests/test_architecture.py"]


def test_the_server_importing_the_cli_is_caught(tmp_path: Path) -> None:
    found = _with(tmp_path, "server/hover.py", "\nfrom skills_lsp.cli import common\n")
    assert any("server imports skills_lsp.cli.common" in v for v in found), found
