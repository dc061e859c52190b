"""Headless Chromium for the web-page tests (Debian's package, driven by Playwright).

:func:`chromium_page` yields a Playwright page, or skips the test with the reason when
Playwright or a Chromium binary is missing (the binary:
:func:`clarisql.rollouts.web.browser.chromium_path`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from clarisql.rollouts.web.browser import CHROMIUM_ARGS, chromium_path


def expect(locator: Any) -> Any:
    """Playwright's ``expect`` (waits without evaluating strings, which the page's
    Content-Security-Policy forbids: ``page.wait_for_function("...")`` cannot run there)."""
    from playwright.sync_api import expect as _expect

    return _expect(locator)


@contextmanager
def chromium_page(**context: Any) -> Iterator[Any]:
    """A fresh page in headless Chromium; page errors are collected in ``page.errors``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    exe = chromium_path()
    if exe is None:
        pytest.skip(
            "no Chromium binary: install Debian's package (apt-get install chromium) "
            "or set CLARISQL_CHROMIUM"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(**context)
            page.errors = []
            page.on("pageerror", lambda e: page.errors.append(str(e)))
            page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
            yield page
        finally:
            browser.close()
