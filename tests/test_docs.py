"""The README is the front door and the docs site holds the rest: checks that keep them honest.

- the README stays short (at most 250 lines), its relative links point at files that exist,
  and ``.ci/run`` runs exactly the test command the README shows;
- the CLI reference the docs hook generates has a section for every subcommand the parser has
  (the reference cannot drift from the code);
- every page in ``mkdocs.yml``'s nav exists.

The strict site build itself (``mkdocs build --strict``) runs in CI (``.ci/run``).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

from clarisql.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_is_short_and_its_links_exist():
    text = _readme()
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [x for x in links if not re.match(r"[a-z]+:", x)]
    assert local, "the README links to the docs"
    missing = [x for x in local if not (ROOT / x).exists()]
    assert not missing, missing


def test_ci_runs_the_readme_test_command():
    text = _readme()
    block = text[text.index("## Run the tests") :]
    commands = re.search(r"```bash\n(.*?)```", block, re.S).group(1)
    test_cmd = [ln.split("#")[0].strip() for ln in commands.splitlines() if "pytest" in ln]
    assert test_cmd == ["python -m pytest"], test_cmd
    setup_cmd = commands.splitlines()[0].split("#")[0].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_lines = [ln.strip() for ln in ci.splitlines() if ln.strip() and not ln.startswith("#")]
    assert ci_lines[-1] == test_cmd[0]
    assert setup_cmd in ci_lines and (ROOT / setup_cmd.split()[-1]).is_file()
    assert "mkdocs build --strict" in ci


def _hook():
    spec = importlib.util.spec_from_file_location("_docs_hook", ROOT / "docs/hooks/reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cli_reference_covers_every_subcommand():
    text = _hook().cli_reference()
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    for name in sub.choices:
        assert f"## `clarisql {name}`" in text, name
    assert "<!--" not in text


def test_every_nav_page_exists():
    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    cfg = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)

    def pages(nav):
        for item in nav:
            for v in item.values() if isinstance(item, dict) else [item]:
                yield from pages(v) if isinstance(v, list) else [v]

    found = list(pages(cfg["nav"]))
    assert len(found) > 20
    assert all((ROOT / "docs" / p).is_file() for p in found), found
