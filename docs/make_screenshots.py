"""Re-make the report-page screenshots in docs/img/ (light and dark) with headless Chromium.

One screenshot per view: the overview (runs side by side, charts in the theme, a sorted
table), an episode (gold vs final SQL as a diff), the compare tab (deltas, wins and losses) and
one task side by side under each policy.

    clarisql eval --suite builtin --policy oracle --out runs/oracle
    clarisql eval --suite builtin --policy naive --out runs/naive
    python docs/make_screenshots.py runs/oracle runs/naive

PNG files are colour-quantized with Pillow (when installed) to keep them small.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from clarisql.rollouts.web import build_report
from clarisql.rollouts.web.browser import CHROMIUM_ARGS, chromium_path

DOCS = Path(__file__).parent


def _shrink(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    Image.open(path).convert("RGB").quantize(colors=128).save(path, optimize=True)


def main(runs: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp())
    try:
        html = tmp / "report.html"
        build_report(runs, html)
        exe = chromium_path() or "/usr/bin/chromium"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
            for scheme in ("light", "dark"):
                page = browser.new_page(
                    viewport={"width": 1280, "height": 860}, color_scheme=scheme
                )
                page.goto(html.as_uri())
                page.wait_for_selector("body[data-ready]")
                shots = {
                    "overview": _overview,
                    "episode": _episode,
                    "compare": _compare,
                    "side-by-side": _side_by_side,
                }
                for name, act in shots.items():
                    act(page)
                    out = DOCS / "img" / f"report-{name}-{scheme}.png"
                    page.screenshot(path=str(out))
                    _shrink(out)
                    print(out, out.stat().st_size)
                page.close()
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _overview(page: object) -> None:
    # sort the headline table by Pass@1, so the sort arrow shows
    page.locator("#overview table.sortable").first.locator("th").nth(2).click()  # type: ignore[attr-defined]
    page.evaluate("window.scrollTo(0, 0)")  # type: ignore[attr-defined]


def _episode(page: object) -> None:
    page.click("button[data-tab=episodes]")  # type: ignore[attr-defined]
    page.select_option("#f-run", label="naive")  # type: ignore[attr-defined]
    page.select_option("#f-cat", "select")  # type: ignore[attr-defined]
    page.select_option("#f-ok", "0")  # type: ignore[attr-defined]
    page.locator("#rows tr[data-i]").first.click()  # type: ignore[attr-defined]
    page.locator("#detail pre.diff").scroll_into_view_if_needed()  # type: ignore[attr-defined]


def _compare(page: object) -> None:
    page.click("button[data-tab=compare]")  # type: ignore[attr-defined]
    page.evaluate("window.scrollTo(0, 0)")  # type: ignore[attr-defined]


def _side_by_side(page: object) -> None:
    page.click("button[data-tab=compare]")  # type: ignore[attr-defined]
    page.locator("#difftable tbody tr").nth(3).click()  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
