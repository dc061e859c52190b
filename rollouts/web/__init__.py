"""One self-contained HTML page for one or several runs (``clarisql view RUN [RUN ...] --html``).

Contract
- :func:`build_report` writes a single ``.html`` file that needs no server, no network and no
  other file: the page's CSS and JavaScript (package data beside this module: ``page.html``,
  ``page.css``, ``page.js``; vanilla JS, no CDN), the run's plots (PNG as ``data:`` URIs) and
  every episode (compact JSON, embedded once in a ``<script type="application/json">`` block)
  are inlined. It opens from disk and from CI artifacts alike.
- The page shows: headline metrics; per run (several runs side by side, one column each) charts
  drawn in the page as SVG in the theme's colours (by category, reward per episode, reward
  components), the per-category, detection, Pass@k, end-reason and reward-component tables; an
  episode list with filters (policy, category, outcome, end reason, clarified) and a search over
  task id, question and SQL, paginated so a 10,000-episode run never builds one giant DOM; an
  episode view, built on demand, with the dialogue turn by turn, every action, observation and
  reward component, gold vs final SQL (both highlighted, and a token diff of the two), answer
  rows, and for write tasks the table-level state difference against gold; with several runs, a
  compare tab: the headline metrics side by side with deltas against the first run, win / loss
  counts, per-category deltas, the episodes where the runs differ and any one of them side by
  side.
- Every table sorts by its column headers and downloads as CSV (the episode list: the filtered
  list); one number format (rates and means with three decimals, counts as integers); nothing
  scrolls under the sticky header.
- Light and dark themes (``prefers-color-scheme`` plus a toggle); SQL highlighting with colours
  chosen for contrast in both.
- Files from a run folder are data: every string is escaped by the page before it is shown, the
  page's Content-Security-Policy lets only its own script (by hash) run, metric values that are
  not numbers are dropped, and only PNG files inside the run folder are embedded as plots.
- :func:`page_data` is the JSON the page reads (documented there); it only reads run folders.
"""

from clarisql.rollouts.web.build import build_report, compact_episode, page_data, render_page

__all__ = ["build_report", "compact_episode", "page_data", "render_page"]
