"""The report page (``clarisql view RUN [RUN ...] --html``) and the table-level state diff.

The page is checked in a real headless Chromium (skipped with the reason when none is
installed): it opens from disk with no network request, filters, searches, opens an episode and
compares two runs.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from clarisql.cli import main as cli_main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import save_tasks
from clarisql.rollouts.runner import RunConfig, run_eval
from clarisql.rollouts.store import read_trajectories
from clarisql.rollouts.web import build_report, page_data

from ._browser import chromium_page, expect
from .conftest import build_small_db, small_task

_spec = importlib.util.spec_from_file_location(
    "_rollout_tasks", Path(__file__).with_name("_rollout_tasks.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """An oracle and a naive run on the same small suite (real SQLite)."""
    base = tmp_path_factory.mktemp("web")
    tasks = fx.build_task_file(base / "suite", n_cities=2)
    out = {}
    for pol in ("oracle", "naive"):
        run_eval(RunConfig(suite=str(tasks), policy=pol), base / pol, progress=False)
        out[pol] = base / pol
    return out


# --- the state diff ------------------------------------------------------------------------------
def _write_env(tmp_path: Path) -> ClarifySQLEnv:
    build_small_db(tmp_path / "small.sqlite")
    f = save_tasks([small_task("write", "w/1")], tmp_path / "tasks.jsonl")
    return ClarifySQLEnv(str(f), max_turns=4)


def test_state_diff_names_the_table_and_row_counts(tmp_path):
    env = _write_env(tmp_path)
    env.reset(options={"task_id": "w/1"})
    env.step({"type": "execute", "sql": "INSERT INTO cities VALUES (3, 'Westham')"})
    _, _, done, _, info = env.step({"type": "stop"})
    sd = info["episode"]["state_diff"]
    assert done and not info["episode"]["correct"]
    assert sd["matches_gold"] is False and sd["unchanged_tables"] >= 1
    [row] = sd["tables"]
    assert row == {
        "table": "cities",
        "initial_rows": 2,
        "gold_rows": 3,
        "final_rows": 3,
        "matches_gold": False,
        "changed_by_agent": True,
        "changed_by_gold": True,
    }
    env.reset(options={"task_id": "w/1"})
    env.step({"type": "execute", "sql": "INSERT INTO cities VALUES (3, 'Eastham')"})
    _, _, _, _, info = env.step({"type": "stop"})
    assert info["episode"]["correct"] and info["episode"]["state_diff"]["matches_gold"] is True
    env.reset(options={"task_id": "w/1"})  # nothing written: the diff shows gold's change only
    _, _, _, _, info = env.step({"type": "stop"})
    [row] = info["episode"]["state_diff"]["tables"]
    assert row["final_rows"] == 2 and not row["changed_by_agent"] and row["changed_by_gold"]
    env.close()


def test_state_diff_agrees_with_correctness_on_a_run(runs):
    lines = read_trajectories(runs["naive"] / "trajectories.jsonl")
    writes = [x for x in lines if x["gold"]["writable"]]
    assert writes
    for x in writes:
        assert x["summary"]["state_diff"]["matches_gold"] == x["correct"]


# --- the page data -------------------------------------------------------------------------------
def test_page_data_is_compact_and_complete(runs):
    data = page_data([runs["oracle"], runs["naive"]])
    assert [r["name"] for r in data["runs"]] == ["oracle", "naive"]
    n = len(read_trajectories(runs["oracle"] / "trajectories.jsonl"))
    assert len(data["episodes"]) == 2 * n and len(data["gold"]) == n
    assert data["runs"][0]["headline"]["pass@1"] == 1.0
    assert data["runs"][0]["plots"] == []  # the run's own plots are drawn by the page
    ep = next(e for e in data["episodes"] if e["c"] == "write" and e["r"] == 0)
    assert ep["sd"]["matches_gold"] is True and ep["u"][-1]["a"]["type"] == "stop"
    assert {"seed", "timings", "summary"}.isdisjoint(ep)  # compact: no bulky run-time fields


def test_page_survives_hostile_text(runs, tmp_path):
    lines = read_trajectories(runs["naive"] / "trajectories.jsonl")
    evil = "</script><script>window.PWNED=1</script><!-- \u2028"
    lines[0] = {**lines[0], "opening": evil, "final_sql": "SELECT '</script>'"}
    html_file = tmp_path / "evil.html"
    build_report([runs["naive"]], html_file, lines_by_run=[lines])
    page = html_file.read_text(encoding="utf-8")
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert blob is not None and "</script>" not in blob.group(1)
    assert json.loads(blob.group(1))["episodes"][0]["o"] == evil


def test_cli_view_html_several_runs_and_errors(runs, tmp_path, capsys):
    out = tmp_path / "both.html"
    assert cli_main(["view", str(runs["oracle"]), str(runs["naive"]), "--html", str(out)]) == 0
    assert "of 2 run(s)" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert cli_main(["view", str(runs["oracle"]), str(tmp_path / "nowhere"), "--html", "x"]) == 2
    assert "not a run folder" in capsys.readouterr().err


# --- in a real browser ---------------------------------------------------------------------------
_SQL_CONTRAST_JS = """() => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const v = rgb(c).map((x) => { x /= 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  return [...document.querySelectorAll("pre.sql, pre.sql span")].map((el) => ratio(
    getComputedStyle(el).color, getComputedStyle(el.closest("pre")).backgroundColor));
}"""


def test_page_in_headless_chromium(runs, tmp_path):
    html_file = tmp_path / "report.html"
    build_report([runs["oracle"], runs["naive"]], html_file)
    with chromium_page(viewport={"width": 1300, "height": 900}) as page:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(html_file.as_uri())
        page.wait_for_selector("body[data-ready]")
        assert "Headline metrics" in page.inner_text("#overview")
        # charts drawn in the page (SVG in the theme's colours), per run, side by side
        assert page.locator("#overview .run").count() == 2
        assert page.locator("#overview .run svg.chart").count() >= 4
        assert page.locator("#overview img").count() == 0
        # episodes: filter to naive's failures in one category, then search
        page.click("button[data-tab=episodes]")
        assert page.locator("#rows tr").count() == 28 and "28 of 28" in page.inner_text("#count")
        page.select_option("#f-run", label="naive")
        page.select_option("#f-ok", "0")
        page.select_option("#f-cat", "where")
        rows = page.locator("#rows tr[data-i]")
        assert rows.count() == 2
        assert all("✗" in t and "naive" in t for t in rows.all_inner_texts())
        page.fill("#f-q", "riverton")
        expect(page.locator("#rows tr[data-i]")).to_have_count(1, timeout=5000)
        # open the episode: dialogue, action, observation, reward, gold vs final
        rows.first.click()
        detail = page.inner_text("#detail")
        assert "riverton/where" in detail and "✗ failed" in detail
        assert "AGENT" in detail and "ENV" in detail and "reward" in detail
        assert "gold SQL" in detail and "final SQL" in detail and "gold labels" in detail
        assert page.locator("#detail pre.sql span.kw").count() > 0  # SQL is highlighted
        link = page.url  # the address now names the episode: opening it shows it again
        assert "#" in link
        page.goto("about:blank")
        page.goto(link)
        page.wait_for_selector("body[data-ready]")
        assert "riverton/where" in page.inner_text("#detail") and "naive" in page.inner_text(
            "#detail"
        )
        page.click("button[data-tab=episodes]")
        page.select_option("#f-run", label="naive")
        page.select_option("#f-ok", "0")
        page.select_option("#f-cat", "where")
        # a write task shows the table-level state diff
        page.fill("#f-q", "")
        page.select_option("#f-ok", "")
        page.select_option("#f-cat", "write")
        expect(page.locator("#rows tr[data-i]")).to_have_count(2, timeout=5000)
        page.locator("#rows tr[data-i]").first.click()
        assert "State vs gold" in page.inner_text("#detail")
        assert "rows: before" in page.inner_text("#detail .wide table")
        # compare: the runs differ on naive's failures; a row opens both side by side
        page.click("button[data-tab=compare]")
        assert "shared episodes differ" in page.inner_text("#compare")
        page.locator("#difftable tbody tr").first.click()
        top = page.evaluate("document.getElementById('top').getBoundingClientRect().bottom")
        assert page.evaluate("document.getElementById('sbs').getBoundingClientRect().top") >= top
        sbs = page.locator("#sbs .sbs > div")
        assert sbs.count() == 2
        assert "oracle" in sbs.nth(0).inner_text() and "naive" in sbs.nth(1).inner_text()
        # theme toggle; SQL stays readable in both themes (WCAG contrast >= 4.5 on its block)
        before = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert min(page.evaluate(_SQL_CONTRAST_JS)) >= 4.5
        page.click("#theme")
        after = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert before != after
        assert min(page.evaluate(_SQL_CONTRAST_JS)) >= 4.5
        assert page.errors == []
        assert all(u.startswith(("file:", "data:")) for u in requests), requests
        # a large run is paginated: 100 rows in the DOM, not 250
        lines = read_trajectories(runs["naive"] / "trajectories.jsonl")
        many = [{**x, "task_id": f"{x['task_id']}#{k}"} for k in range(20) for x in lines][:250]
        big = tmp_path / "big.html"
        build_report([runs["naive"]], big, lines_by_run=[many])
        page.goto(big.as_uri())
        page.wait_for_selector("body[data-ready]")
        page.click("button[data-tab=episodes]")
        assert page.locator("#rows tr").count() == 100 and "page 1 / 3" in page.inner_text(".pager")
        page.click("#next")
        page.click("#next")
        assert page.locator("#rows tr").count() == 50 and page.is_disabled("#next")
        assert page.errors == []


# --- a page people live in: sorting, CSV, SQL diff, deltas, one number format ---------------------
def test_page_sorts_exports_diffs_and_compares(runs, tmp_path):
    html_file = tmp_path / "report.html"
    build_report([runs["oracle"], runs["naive"]], html_file)
    oracle = read_trajectories(runs["oracle"] / "trajectories.jsonl")
    naive = read_trajectories(runs["naive"] / "trajectories.jsonl")
    by_key = {(x["task_id"], x["trial"]): x["correct"] for x in oracle}
    losses = sum(1 for x in naive if by_key[(x["task_id"], x["trial"])] and not x["correct"])
    wins = sum(1 for x in naive if x["correct"] and not by_key[(x["task_id"], x["trial"])])
    with chromium_page(viewport={"width": 1300, "height": 900}, accept_downloads=True) as page:
        page.goto(html_file.as_uri())
        page.wait_for_selector("body[data-ready]")
        # one number format: rates and means with three decimals, counts as integers
        cells = page.locator("#overview table.grid").first.locator("tbody td").all_inner_texts()
        assert all(re.fullmatch(r"[a-z]+|-?\d+\.\d{3}|\d+|–", c) for c in cells), cells
        assert "1.000" in cells and "1" not in cells[2:]
        # charts are drawn in the page in the theme's colours: they change with the theme
        chart_js = """() => { const svg = document.querySelector('#overview svg.chart');
          return [getComputedStyle(svg.querySelector('rect.s0')).fill,
                  getComputedStyle(svg.querySelector('text')).fill,
                  getComputedStyle(document.body).color]; }"""
        bar, text, fg = page.evaluate(chart_js)
        assert text == fg
        page.click("#theme")
        bar2, text2, fg2 = page.evaluate(chart_js)
        assert bar2 != bar and text2 == fg2 != fg
        page.click("#theme")
        # any overview table sorts by a click on its header, both ways
        table = page.locator("#overview .run").nth(1).locator("table.sortable").first
        table.locator("th").nth(2).click()  # Pass@1 of naive, by category
        first = [float(x) for x in table.locator("tbody tr td:nth-child(3)").all_inner_texts()]
        assert first == sorted(first) and first[0] < first[-1]
        table.locator("th").nth(2).click()
        again = [float(x) for x in table.locator("tbody tr td:nth-child(3)").all_inner_texts()]
        assert again == sorted(again, reverse=True)
        # a table's CSV button downloads it as shown
        with page.expect_download() as dl:
            table.locator("xpath=ancestor::div[@class='tbl']").locator("button.csv").click()
        rows = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text(encoding="utf-8-sig"))))
        assert rows[0][:3] == ["category", "episodes", "Pass@1"]
        assert [float(r[2]) for r in rows[1:]] == again
        # the episode list sorts by reward and exports the filtered list
        page.click("button[data-tab=episodes]")
        page.select_option("#f-run", label="naive")
        page.click("#list th[data-sort=w]")
        page.click("#list th[data-sort=w]")
        rewards = [float(x) for x in page.locator("#rows td:nth-child(8)").all_inner_texts()]
        assert rewards == sorted(rewards, reverse=True) and rewards[0] > rewards[-1]
        with page.expect_download() as dl:
            page.click("#export-csv")
        rows = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text(encoding="utf-8-sig"))))
        assert rows[0][:3] == ["policy", "task", "trial"] and len(rows) == 1 + len(naive)
        assert {r[0] for r in rows[1:]} == {"naive"}
        # gold vs final SQL as a diff: naive's failed SELECT task marks what it changed
        page.select_option("#f-cat", "select")
        page.select_option("#f-ok", "0")
        page.locator("#rows tr[data-i]").first.click()
        marks = page.locator("#detail pre.diff del, #detail pre.diff ins")
        assert marks.count() > 0 and "only in gold" in page.inner_text("#detail")
        page.select_option("#f-run", label="oracle")
        page.select_option("#f-ok", "")
        page.locator("#rows tr[data-i]").first.click()
        assert "final SQL = gold SQL" in page.inner_text("#detail")
        # compare: side by side metrics with deltas, win/loss counts, per-category deltas
        page.click("button[data-tab=compare]")
        text = page.inner_text("#compare")
        assert "Runs side by side" in text and "By category" in text
        wl = page.locator("#compare table.sortable").nth(1).locator("tbody tr td")
        assert wl.all_inner_texts()[:3] == ["naive", str(wins), str(losses)]
        assert page.locator("#compare td.down").count() > 0  # naive loses Pass@1 somewhere
        assert page.errors == []


# --- files from a run folder are data, never markup or other files --------------------------------
EVIL = '<img src=x onerror="window.PWNED=1">'


def _tampered_run(src: Path, dest: Path, outside: Path) -> Path:
    shutil.copytree(src, dest)
    m = json.loads((dest / "metrics.json").read_text(encoding="utf-8"))
    cat = next(iter(m["by_category"]))
    m["by_category"][EVIL] = {**m["by_category"].pop(cat), "pass@1": EVIL}
    m["end_reasons"][EVIL] = 3
    m["reward_components"][EVIL] = 0.5
    m["pass@k"] = {EVIL: 1.0, "2": 1.0}
    m["pass^k"] = {EVIL: 1.0, "2": 1.0}
    m["detection"] = {"select": {"f1": EVIL}, "from": EVIL, "where": None, EVIL: 1}
    m["ecr"] = EVIL
    m["plots"] = [str(outside), "../outside.png", "link.png", "fake.png", "inside.png", EVIL]
    (dest / "metrics.json").write_text(json.dumps(m), encoding="utf-8")
    run = json.loads((dest / "run.json").read_text(encoding="utf-8"))
    run["config"]["policy"] = EVIL
    (dest / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return dest


def _png(path: Path, colour: tuple[int, int, int]) -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"\x00" + bytes(colour)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    path.write_bytes(data)
    return data


def test_plots_are_embedded_only_from_inside_the_run_folder(runs, tmp_path):
    outside = tmp_path / "outside.png"
    secret = _png(outside, (255, 0, 0))
    run = _tampered_run(runs["naive"], tmp_path / "run", outside)
    inside = _png(run / "inside.png", (0, 255, 0))
    (run / "link.png").symlink_to(outside)
    (run / "fake.png").write_text("not a png", encoding="utf-8")
    plots = page_data([run])["runs"][0]["plots"]
    import base64

    embedded = [base64.b64decode(p["src"].split(",", 1)[1]) for p in plots]
    assert embedded == [inside] and secret not in embedded


def test_tampered_run_files_run_no_script(runs, tmp_path):
    outside = tmp_path / "outside.png"
    _png(outside, (255, 0, 0))
    evil = _tampered_run(runs["naive"], tmp_path / "evil", outside)
    lines = read_trajectories(evil / "trajectories.jsonl")
    lines[0] = {**lines[0], "task_id": EVIL, "category": EVIL, "end": EVIL, "final_sql": EVIL}
    html_file = tmp_path / "evil.html"
    build_report([evil, runs["oracle"]], html_file, lines_by_run=[lines, None])
    with chromium_page(viewport={"width": 1300, "height": 900}) as page:
        page.goto(html_file.as_uri())
        page.wait_for_selector("body[data-ready]")
        page.click("button[data-tab=episodes]")
        page.locator("#rows tr[data-i]").first.click()
        page.click("button[data-tab=compare]")
        page.locator("#difftable tbody tr").first.click()
        page.click("button[data-tab=overview]")
        csp = page.evaluate("document.querySelector('meta[http-equiv]').content")
        assert (
            "script-src 'sha256-" in csp
            and "unsafe" not in csp.split("script-src")[1].split(";")[0]
        )
        assert page.evaluate("window.PWNED") is None
        assert page.locator("img").count() == 0  # no markup from the files became an element
        assert EVIL in page.inner_text("#overview")  # shown as the text it is
        assert page.errors == []
