"""mkdocs hook: generate the reference pages from the code, so they cannot drift from it.

A page that contains one of these markers gets it replaced when the site is built:

- ``<!-- cli-reference -->``: every ``clarisql`` subcommand from the argparse parser
  (:func:`clarisql.cli.build_parser`): description, usage, epilog and each option's help;
- ``<!-- train-config-reference -->``: the training config keys from the dataclasses in
  :mod:`clarisql.training.config` (field, type, default);
- ``<!-- reward-components -->``: the reward components from :mod:`clarisql.rewards.spec` and
  the presets shipped in ``configs/rewards/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
from pathlib import Path
from typing import Any


def _md_cell(text: Any) -> str:
    """Plain text in a table cell: markup characters escaped, one line."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def _code(text: Any) -> str:
    """Text in a code span inside a table cell (pipes escaped, nothing else)."""
    return "`" + str(text).replace("|", "\\|").replace("`", "'").replace("\n", " ") + "`"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    fmt = parser._get_formatter()
    rows = []
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if a.option_strings:
            name = ", ".join(a.option_strings)
            if a.nargs != 0:
                name += " " + fmt._format_args(a, fmt._get_default_metavar_for_optional(a))
        else:
            name = fmt._format_args(a, fmt._get_default_metavar_for_positional(a))
        helptext = fmt._expand_help(a) if a.help else ""
        rows.append(f"| {_code(name)} | {_md_cell(helptext)} |")
    if not rows:
        return []
    return ["| option | what it does |", "|---|---|", *rows, ""]


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            seen: dict[int, str] = {}
            out = []
            for name, sp in a.choices.items():
                if id(sp) in seen:  # an alias
                    continue
                seen[id(sp)] = name
                out.append((name, sp))
            return out
    return []


def cli_reference(parser: argparse.ArgumentParser | None = None, level: int = 2) -> str:
    """The CLI reference in Markdown (one section per subcommand, nested ones below it)."""
    if parser is None:
        from clarisql.cli import build_parser

        parser = build_parser()
    lines: list[str] = []
    for _name, sp in _subparsers(parser):
        lines.append(f"{'#' * level} `{sp.prog}`")
        lines.append("")
        if sp.description:
            lines.append(sp.description.strip())
            lines.append("")
        lines += ["```text", sp.format_usage().strip(), "```", ""]
        lines += _options(sp)
        if sp.epilog:
            lines += ["```text", sp.epilog.strip(), "```", ""]
        nested = cli_reference(sp, level + 1)
        if nested:
            lines.append(nested)
    return "\n".join(lines)


def _type_name(t: Any) -> str:
    return str(t).replace("typing.", "").replace("<class '", "").replace("'>", "")


def train_config_reference() -> str:
    from clarisql.training import config as tc

    out = []
    sections = [("top level (every trainer)", tc.TrainConfig)]
    sections += [
        (f"`{f.name}:`", f.default_factory)
        for f in dataclasses.fields(tc.TrainConfig)
        if dataclasses.is_dataclass(
            f.default_factory if f.default_factory is not dataclasses.MISSING else None
        )
    ]
    for title, cls in sections:
        out += [f"### {title}", "", "| key | type | default |", "|---|---|---|"]
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                default = repr(f.default)
            elif f.default_factory is not dataclasses.MISSING:
                d = f.default_factory()
                default = "see below" if dataclasses.is_dataclass(d) else repr(d)
            else:
                default = "required"
            out.append(f"| `{f.name}` | {_code(_type_name(f.type))} | {_code(default)} |")
        out.append("")
    extra = []
    for cls in (tc.SFTRunConfig, tc.GRPORunConfig, tc.PPORunConfig):
        base = {f.name for f in dataclasses.fields(tc.TrainConfig)}
        keys = [f.name for f in dataclasses.fields(cls) if f.name not in base]
        extra.append(f"| `{cls().trainer}` | {', '.join(f'`{k}`' for k in keys)} |")
    out += ["### Trainer sections", "", "| trainer | its own sections |", "|---|---|", *extra, ""]
    return "\n".join(out)


def reward_reference() -> str:
    from clarisql.rewards import spec

    out = ["| component | level |", "|---|---|"]
    out += [f"| `{c}` | episode (last step) |" for c in spec.EPISODE_COMPONENTS]
    out += [f"| `{c}` | step |" for c in spec.STEP_COMPONENTS]
    out += ["", "Presets shipped in `configs/rewards/`:", ""]
    root = Path(spec.__file__).resolve().parent.parent / "configs" / "rewards"
    for p in sorted(root.glob("*.yaml")):
        out += [f"`{p.stem}`", "", "```yaml", p.read_text(encoding="utf-8").strip(), "```", ""]
    return "\n".join(out)


MARKERS = {
    "<!-- cli-reference -->": cli_reference,
    "<!-- train-config-reference -->": train_config_reference,
    "<!-- reward-components -->": reward_reference,
}


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
