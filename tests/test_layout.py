"""The house's layout: no import circles anywhere in the package, and every subpackage ships.

An import circle is a set of modules that import one another, directly or through others, at
module level or inside functions (a lazy import is still a dependency). ``from pkg import mod``
depends on ``pkg.mod``; ``from pkg import name`` on ``pkg`` itself (its ``__init__``).
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = {"tests", "benchmarks", "docs", "deploy", "build", "dist", ".venv", ".git"}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for p in ROOT.rglob("*.py"):
        rel = p.relative_to(ROOT)
        if rel.parts[0] in OUTSIDE or any(part.startswith(".") for part in rel.parts):
            continue
        name = ".".join(("clarisql", *rel.with_suffix("").parts))
        mods[name.removesuffix(".__init__")] = p
    return mods


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its code)."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join(parts) + (f".{node.module}" if node.module else "")
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            else:
                continue
            edges[mod] |= {t for t in targets if t in mods and t != mod}
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_probe_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    mods = _modules()
    assert "clarisql.envs.sandbox.database" in mods and len(mods) > 100
    found = circles(import_graph(mods))
    assert found == [], found


def test_every_subpackage_is_listed_in_setup_cfg() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    folders = {
        ".".join(("clarisql", *p.parent.relative_to(ROOT).parts))
        for p in ROOT.rglob("__init__.py")
        if p.parent == ROOT or p.relative_to(ROOT).parts[0] not in OUTSIDE
    }
    folders = {f for f in folders if ".plugins." not in f}  # installed under their own name
    assert folders - listed == set(), sorted(folders - listed)
