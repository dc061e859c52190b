// clarisql report page: reads the JSON block #data once; renders the overview once, the episode
// list one page at a time and an episode only when it is opened (no giant DOM, no network).
// Every string that comes from a run's files goes through esc() before it reaches innerHTML.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const EPS = D.episodes, RUNS = D.runs, GOLD = D.gold;
const PAGE = 100;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
  (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const isNum = (v) => typeof v === "number" && Number.isFinite(v);
// One number format: rates, scores and means with three decimals; counts as integers.
const COUNT_KEYS = new Set(["n_episodes", "n_tasks", "trials", "support", "predicted"]);
const f3 = (v) => isNum(v) ? v.toFixed(3) : v == null ? "–" : esc(v);
const fint = (v) => isNum(v) ? String(Math.round(v)) : v == null ? "–" : esc(v);
const fmtKey = (k, v) => COUNT_KEYS.has(k) ? fint(v) : f3(v);
const sgn = (v) => isNum(v) ? (v >= 0 ? "+" : "") + v.toFixed(3) : "–";
const obj = (v) => v && typeof v === "object" && !Array.isArray(v) ? v : {};

// --- theme --------------------------------------------------------------------------------------
(function theme() {
  const root = document.documentElement;
  let saved = null;
  try { saved = localStorage.getItem("clarisql-theme"); } catch (e) { /* file:// may forbid it */ }
  if (saved === "light" || saved === "dark") root.dataset.theme = saved;
  $("theme").addEventListener("click", () => {
    const cur = root.dataset.theme ||
      (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
    root.dataset.theme = cur === "dark" ? "light" : "dark";
    try { localStorage.setItem("clarisql-theme", root.dataset.theme); } catch (e) { /* ignore */ }
  });
})();
// the sticky header's height, so nothing scrolls under it (scroll-margin, the detail panel)
function headerHeight() {
  document.documentElement.style.setProperty("--head-h", $("top").offsetHeight + "px");
}
addEventListener("resize", headerHeight);

// --- SQL highlighting and diff ------------------------------------------------------------------
// A small tokenizer written here because the page must not load anything from the network and
// highlighting SQL only needs strings, comments, numbers, keywords and function names.
const KW = new Set(("select from where and or not in is null like glob between group by order " +
  "having limit offset as on join left right inner outer cross natural using distinct all union " +
  "intersect except insert into values update set delete create table drop alter add column " +
  "primary key foreign references index view trigger begin commit rollback case when then else " +
  "end asc desc exists cast collate with recursive replace default unique check if pragma " +
  "returning conflict do nothing").split(" "));
const SQL_RE = /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)(\s*\()?/g;
function sql(text) {
  const s = String(text == null ? "" : text);
  let out = "", last = 0, m;
  SQL_RE.lastIndex = 0;
  while ((m = SQL_RE.exec(s)) !== null) {
    out += esc(s.slice(last, m.index));
    if (m[1]) out += `<span class="com">${esc(m[1])}</span>`;
    else if (m[2]) out += `<span class="str">${esc(m[2])}</span>`;
    else if (m[3]) out += esc(m[3]);
    else if (m[4]) out += `<span class="num">${esc(m[4])}</span>`;
    else if (m[5]) {
      const w = m[5];
      if (KW.has(w.toLowerCase())) out += `<span class="kw">${esc(w)}</span>`;
      else if (m[6]) out += `<span class="fn">${esc(w)}</span>`;
      else out += esc(w);
      if (m[6]) out += esc(m[6]);
    }
    last = SQL_RE.lastIndex;
  }
  return `<pre class="sql">${out + esc(s.slice(last))}</pre>`;
}
// Token diff of two SQL texts (longest common subsequence over tokens; keywords compared
// case-insensitively). Each token keeps the whitespace after it, so the layout survives.
const TOK_RE = /(--[^\n]*|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|[^\sA-Za-z0-9_])(\s*)/g;
const MAX_DIFF_CELLS = 400000;
function tokens(s) {
  const out = [];
  let m;
  TOK_RE.lastIndex = 0;
  while ((m = TOK_RE.exec(s)) !== null) {
    const t = m[1], low = t.toLowerCase();
    out.push({ t, ws: m[2], key: KW.has(low) ? low : t });
  }
  return out;
}
function tokClass(t) {
  if (t.startsWith("--")) return "com";
  if (t[0] === "'") return "str";
  if (/^\d/.test(t)) return "num";
  return KW.has(t.toLowerCase()) ? "kw" : "";
}
function sqlDiff(gold, fin) {
  const a = tokens(String(gold)), b = tokens(String(fin)), n = a.length, m = b.length;
  if ((n + 1) * (m + 1) > MAX_DIFF_CELLS) return null;
  const L = new Uint32Array((n + 1) * (m + 1)), W = m + 1;
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    L[i * W + j] = a[i].key === b[j].key ? L[(i + 1) * W + j + 1] + 1
      : Math.max(L[(i + 1) * W + j], L[i * W + j + 1]);
  }
  let i = 0, j = 0, out = "", same = 0;
  const span = (tok, tag) => {
    const c = tokClass(tok.t), inner = c ? `<span class="${c}">${esc(tok.t)}</span>` : esc(tok.t);
    return tag ? `<${tag}>${inner}</${tag}>${esc(tok.ws)}` : inner + esc(tok.ws);
  };
  while (i < n || j < m) {
    if (i < n && j < m && a[i].key === b[j].key) { out += span(b[j], ""); i++; j++; same++; }
    else if (j < m && (i >= n || L[i * W + j + 1] >= L[(i + 1) * W + j])) { out += span(b[j], "ins"); j++; }
    else { out += span(a[i], "del"); i++; }
  }
  return { html: `<pre class="sql diff">${out}</pre>`, same: same === n && same === m };
}

// --- tables: sortable, CSV ----------------------------------------------------------------------
// grid(): a table whose cells are HTML strings or {h: html, v: sort value, c: class}; every
// column sorts by a click on its header; the CSV button downloads the table as shown.
function cell(c) {
  if (c && typeof c === "object") {
    return `<td${c.c ? ` class="${c.c}"` : ""}${c.v != null ? ` data-v="${esc(c.v)}"` : ""}${c.t ? ` title="${esc(c.t)}"` : ""}>${c.h}</td>`;
  }
  return `<td>${c}</td>`;
}
function grid(head, rows, name) {
  return `<div class="tbl"><div class="tbl-bar"><button type="button" class="csv" data-name="${esc(name || "table")}" title="Download this table as CSV">CSV</button></div>` +
    `<div class="wide"><table class="grid sortable"><thead><tr>${head.map((h) => `<th title="sort">${esc(h)}</th>`).join("")}</tr></thead><tbody>` +
    rows.map((r) => `<tr>${r.map(cell).join("")}</tr>`).join("") + "</tbody></table></div></div>";
}
function sortValue(td) {
  const raw = td.dataset.v != null ? td.dataset.v : td.textContent.trim();
  const x = parseFloat(raw.replace(/^\+/, "").replace("−", "-"));
  return raw === "–" || raw === "" ? { n: -Infinity, s: "" } : isNaN(x) ? { n: null, s: raw.toLowerCase() } : { n: x, s: raw };
}
function compareValues(a, b) {
  if (a.n != null && b.n != null) return a.n - b.n;
  if (a.n != null) return -1;
  if (b.n != null) return 1;
  return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
}
function markSorted(th, dir) {
  for (const x of th.parentElement.children) { x.removeAttribute("aria-sort"); }
  th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
}
document.addEventListener("click", (ev) => {
  const th = ev.target.closest("table.sortable thead th");
  if (th) {
    const table = th.closest("table"), col = [...th.parentElement.children].indexOf(th);
    const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    const body = table.tBodies[0], rows = [...body.rows];
    const keyed = rows.map((r, k) => [r.cells[col] ? sortValue(r.cells[col]) : { n: null, s: "" }, k, r]);
    keyed.sort((x, y) => dir * compareValues(x[0], y[0]) || x[1] - y[1]);
    for (const [, , r] of keyed) body.appendChild(r);
    markSorted(th, dir);
    return;
  }
  const btn = ev.target.closest("button.csv");
  if (btn) {
    const table = btn.closest(".tbl").querySelector("table");
    const lines = [...table.rows].map((r) => [...r.cells].map((c) => c.textContent.trim()));
    download(`${btn.dataset.name}.csv`, csv(lines));
  }
});
function csvField(v) {
  let s = v == null ? "" : String(v);
  // a text cell that a spreadsheet would run as a formula is prefixed with '
  if (/^[=+\-@\t\r]/.test(s) && isNaN(Number(s))) s = "'" + s;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
const csv = (lines) => lines.map((l) => l.map(csvField).join(",")).join("\r\n") + "\r\n";
function download(name, text) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob(["\ufeff" + text], { type: "text/csv;charset=utf-8" }));
  a.download = name.replace(/[^\w.-]+/g, "_");
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
}

// --- charts (SVG drawn in the page, so they follow the theme) ----------------------------------
function legend(names) {
  return `<div class="legend">${names.map((n, j) => `<span class="pill"><svg width="10" height="10"><rect class="s${j % 6}" width="10" height="10"/></svg> ${esc(n)}</span>`).join(" ")}</div>`;
}
// grouped vertical bars: cats on the x axis, one bar per series; values may be negative
function barChart(title, cats, series, lo, hi) {
  const vals = series.flatMap((s) => s.vals).filter(isNum);
  lo = Math.min(lo, ...vals); hi = Math.max(hi, ...vals);
  if (hi === lo) hi = lo + 1;
  // rotated category labels: about 4.6 px across and 3.9 px down per character at 10 px
  const longest = Math.min(32, Math.max(1, ...cats.map((c) => String(c).length)));
  const bw = 12, gap = 16, gw = Math.max(series.length * bw + gap, 30), H = 150, X0 = 44;
  const LAB = 16 + 3.9 * longest, W = X0 + cats.length * gw + 10 + 4.6 * longest;
  const y = (v) => H - (v - lo) / (hi - lo) * H;
  let s = `<svg class="chart" width="${W}" height="${H + LAB + 12}" role="img" aria-label="${esc(title)}"><g transform="translate(0,8)">`;
  for (const v of [lo, (lo + hi) / 2, hi]) {
    s += `<line x1="${X0}" x2="${W}" y1="${y(v)}" y2="${y(v)}" class="gridline"/>` +
      `<text x="${X0 - 4}" y="${y(v) + 4}" text-anchor="end">${f3(v)}</text>`;
  }
  s += `<line x1="${X0}" x2="${W}" y1="${y(0)}" y2="${y(0)}" class="axis"/>`;
  cats.forEach((c, i) => {
    series.forEach((ser, j) => {
      const v = ser.vals[i];
      if (!isNum(v)) return;
      const x = X0 + 6 + i * gw + j * bw, top = Math.min(y(v), y(0)), h = Math.max(Math.abs(y(v) - y(0)), 1);
      s += `<rect class="s${j % 6}" x="${x}" y="${top}" width="${bw - 2}" height="${h}"><title>${esc(ser.name)} · ${esc(c)}: ${f3(v)}</title></rect>`;
    });
    const label = String(c).length > 32 ? String(c).slice(0, 31) + "…" : String(c);
    s += `<text transform="translate(${X0 + 8 + i * gw},${H + 10}) rotate(40)"><title>${esc(c)}</title>${esc(label)}</text>`;
  });
  s += "</g></svg>";
  return `<figure class="chartbox"><figcaption>${esc(title)}</figcaption>${legend(series.map((x) => x.name))}<div class="wide">${s}</div></figure>`;
}
function histogram(title, values) {
  const v = values.filter(isNum);
  if (!v.length) return "";
  let lo = Math.min(...v), hi = Math.max(...v);
  if (hi === lo) { lo -= 0.5; hi += 0.5; }
  const nb = Math.min(20, Math.max(5, new Set(v).size)), counts = new Array(nb).fill(0);
  for (const x of v) counts[Math.min(nb - 1, Math.floor((x - lo) / (hi - lo) * nb))]++;
  const top = Math.max(...counts), W = 320, H = 120, X0 = 36, bw = (W - X0) / nb;
  let s = `<svg class="chart" width="${W}" height="${H + 30}" role="img" aria-label="${esc(title)}"><g transform="translate(0,6)">`;
  s += `<line x1="${X0}" x2="${W}" y1="${H}" y2="${H}" class="axis"/><text x="${X0 - 4}" y="10" text-anchor="end">${top}</text><text x="${X0 - 4}" y="${H}" text-anchor="end">0</text>`;
  counts.forEach((c, i) => {
    const h = c / top * H;
    s += `<rect class="s0" x="${X0 + i * bw + 1}" y="${H - h}" width="${Math.max(bw - 2, 1)}" height="${h}"><title>${f3(lo + i * (hi - lo) / nb)} to ${f3(lo + (i + 1) * (hi - lo) / nb)}: ${c} episode(s)</title></rect>`;
  });
  s += `<text x="${X0}" y="${H + 16}">${f3(lo)}</text><text x="${W}" y="${H + 16}" text-anchor="end">${f3(hi)}</text></g></svg>`;
  return `<figure class="chartbox"><figcaption>${esc(title)}</figcaption>${s}</figure>`;
}

// --- overview -----------------------------------------------------------------------------------
const MAIN = [["episodes", "n_episodes"], ["Pass@1", "pass@1"], ["φ_0", "phi_0"], ["φ_10", "phi_10"],
  ["φ_N", "phi_N"], ["ECR", "ecr"], ["table F1", "table_f1"], ["clarif./ep", "clarifications_per_episode"],
  ["turns/ep", "turns_per_episode"], ["SQL err/ep", "sql_errors_per_episode"],
  ["invalid/ep", "invalid_actions_per_episode"], ["abstain", "abstain_rate"],
  ["halluc.", "hallucination_rate"], ["reward", "reward_mean"]];
const named = (s) => ({ h: esc(s), t: s, c: "l" });
function runSection(r, ri) {
  const parts = [];
  const cats = Object.entries(obj(r.by_category));
  if (cats.length) {
    parts.push(barChart("By category (φ_10 scaled by 1/10)", cats.map((c) => c[0]), [
      { name: "Pass@1", vals: cats.map(([, m]) => m["pass@1"]) },
      { name: "φ_10 / 10", vals: cats.map(([, m]) => isNum(m.phi_10) ? m.phi_10 / 10 : null) },
      { name: "ECR", vals: cats.map(([, m]) => m.ecr) }], 0, 1));
  }
  const comps = Object.entries(obj(r.reward_components));
  parts.push(`<div class="charts">` + histogram("Reward per episode", EPS.filter((e) => e.r === ri).map((e) => e.w)) +
    (comps.length ? barChart("Reward components (mean per episode)", comps.map((c) => c[0]),
      [{ name: "mean", vals: comps.map((c) => c[1]) }], 0, 0) : "") + "</div>");
  if ((r.plots || []).length) parts.push(`<div class="plots">${r.plots.map((p) =>
    `<figure><img alt="${esc(p.name)}" src="${esc(p.src)}"><figcaption>${esc(p.name)}</figcaption></figure>`).join("")}</div>`);
  if (cats.length) parts.push("<h3>By category</h3>", grid(["category", ...MAIN.map((c) => c[0])],
    cats.map(([c, m]) => [named(c), ...MAIN.map(([, k]) => fmtKey(k, m[k]))]), `${r.name}-by-category`));
  const det = obj(r.detection);
  if (det.select) {
    const rows = ["select", "from", "where"].map((cl) => { const d = obj(det[cl]); return [cl.toUpperCase(), f3(d.accuracy),
      f3(d.precision), f3(d.recall), f3(d.f1), fint(d.support), fint(d.predicted)]; });
    if (det.labels) { const d = obj(det.labels); rows.push(["exact labels", "–", f3(d.precision), f3(d.recall),
      f3(d.f1), fint(d.support), fint(d.predicted)]); }
    parts.push("<h3>Underspecification detection</h3>", grid(["clause", "accuracy", "precision", "recall",
      "F1", "gold positives", "flagged"], rows, `${r.name}-detection`));
    const crow = cats.map(([c, m]) => [named(c), ...["select", "from", "where"].map((cl) =>
      f3(obj(obj(m.detection)[cl]).f1))]);
    if (crow.length) parts.push(grid(["category", "F1 SELECT", "F1 FROM", "F1 WHERE"], crow, `${r.name}-detection-by-category`));
  }
  const pk = Object.keys(obj(obj(r.pass_k).at));
  if (pk.length > 1) parts.push("<h3>Pass@k and Pass^k</h3>", grid(["k", "Pass@k", "Pass^k"],
    pk.map((k) => [esc(k), f3(r.pass_k.at[k]), f3(obj(r.pass_k.hat)[k])]), `${r.name}-pass-k`));
  const ends = Object.entries(obj(r.end_reasons));
  if (ends.length) parts.push("<h3>How episodes ended</h3>", grid(["end", "episodes"],
    ends.map(([k, v]) => [named(k), fint(v)]), `${r.name}-end-reasons`));
  if (comps.length) parts.push("<h3>Reward components (mean per episode)</h3>",
    grid(["component", "mean"], comps.map(([k, v]) => [named(k), f3(v)]), `${r.name}-reward-components`));
  return parts.join("");
}
function overview() {
  const parts = [];
  if (RUNS.length === 1) {
    const r = RUNS[0], h = obj(r.headline);
    parts.push(`<p class="muted">policy <b>${esc(r.policy)}</b> · suite <b>${esc(r.suite)}</b> · reward spec <b>${esc(r.reward_spec)}</b> · ${esc(r.dir)}</p>`);
    const cards = [["Pass@1", "pass@1"], ["φ_10", "phi_10"], ["ECR", "ecr"], ["mean reward", "reward_mean"],
      ["clarifications / episode", "clarifications_per_episode"], ["table F1", "table_f1"], ["episodes", "n_episodes"]];
    parts.push(`<div class="cards" id="headline">${cards.map(([k, key]) =>
      `<div class="card"><div class="v">${fmtKey(key, h[key])}</div><div class="k">${esc(k)}</div></div>`).join("")}</div>`);
  }
  parts.push("<h2>Headline metrics</h2>", grid(["policy", ...MAIN.map((c) => c[0])],
    RUNS.map((r) => [named(r.name), ...MAIN.map(([, k]) => fmtKey(k, obj(r.headline)[k]))]), "headline"));
  if (RUNS.length === 1) parts.push(runSection(RUNS[0], 0));
  else {
    parts.push(`<h2>Runs side by side</h2><div class="runs" style="grid-template-columns: repeat(${RUNS.length}, minmax(460px, 1fr))">` +
      RUNS.map((r, i) => `<div class="run"><h2 class="runname" title="${esc(r.dir)}">${esc(r.name)}</h2><p class="muted">${esc(r.dir)}</p>${runSection(r, i)}</div>`).join("") + "</div>");
  }
  $("overview").innerHTML = parts.join("");
}

// --- episode list -------------------------------------------------------------------------------
const F = { run: "", cat: "", ok: "", end: "", clar: "", q: "" };
let shown = [], page = 0, selected = -1, searchText = null;
const LIST_SORT = { key: null, dir: 1 };
const LIST_KEYS = { ok: (e) => e.ok, t: (e) => e.t, r: (e) => RUNS[e.r].name, c: (e) => e.c,
  e: (e) => e.e || "", q: (e) => e.q, n: (e) => e.u.length, w: (e) => e.w };
function options(sel, values, labels) {
  sel.innerHTML = `<option value="">all</option>` +
    values.map((v, i) => `<option value="${esc(v)}">${esc(labels ? labels[i] : v)}</option>`).join("");
}
function actionText(a) {
  return a && typeof a === "object" ? String(a.sql || a.question || a.reason || "") : String(a);
}
function haystack(i) {
  // search text of an episode, built once on the first search
  if (searchText === null) {
    searchText = EPS.map((e) => {
      const g = obj(GOLD[e.t]);
      return [e.t, e.o, e.f || "", g.gold_sql || "", ...(Array.isArray(g.gold_actions) ? g.gold_actions : []),
        ...e.u.map((t) => actionText(t.a))].join("\n").toLowerCase();
    });
  }
  return searchText[i];
}
function sortShown() {
  if (!LIST_SORT.key) return;
  const f = LIST_KEYS[LIST_SORT.key], d = LIST_SORT.dir;
  shown.sort((i, j) => {
    const a = f(EPS[i]), b = f(EPS[j]);
    return d * (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))) || i - j;
  });
}
function applyFilters() {
  const q = F.q.trim().toLowerCase(), run = F.run === "" ? -1 : +F.run;
  shown = [];
  for (let i = 0; i < EPS.length; i++) {
    const e = EPS[i];
    if (run >= 0 && e.r !== run) continue;
    if (F.cat && e.c !== F.cat) continue;
    if (F.ok !== "" && e.ok !== +F.ok) continue;
    if (F.end && e.e !== F.end) continue;
    if (F.clar !== "" && (e.q > 0 ? "1" : "0") !== F.clar) continue;
    if (q && haystack(i).indexOf(q) < 0) continue;
    shown.push(i);
  }
  sortShown();
  page = 0;
  renderList();
}
function renderList() {
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  page = Math.min(page, pages - 1);
  const rows = [];
  for (const i of shown.slice(page * PAGE, (page + 1) * PAGE)) {
    const e = EPS[i], name = RUNS[e.r].name, id = e.t + (e.k ? ` · t${e.k}` : "");
    rows.push(`<tr data-i="${i}"${i === selected ? ' class="sel"' : ""}><td class="${e.ok ? "ok" : "bad"}">${e.ok ? "✓" : "✗"}</td>` +
      `<td title="${esc(id + "\n" + e.o)}">${esc(id)}</td><td title="${esc(name)}">${esc(name)}</td><td title="${esc(e.c)}">${esc(e.c)}</td>` +
      `<td title="${esc(e.e)}">${esc(e.e)}</td><td class="num">${fint(e.q)}</td><td class="num">${fint(e.u.length)}</td><td class="num">${sgn(e.w)}</td></tr>`);
  }
  $("rows").innerHTML = rows.join("") || `<tr><td colspan="8" class="muted">no episode matches</td></tr>`;
  $("count").textContent = `${shown.length} of ${EPS.length} episodes`;
  $("pageinfo").textContent = `page ${page + 1} / ${pages}`;
  $("prev").disabled = page === 0;
  $("next").disabled = page >= pages - 1;
}
function exportList() {
  const head = ["policy", "task", "trial", "category", "correct", "end", "asked", "turns", "reward", "final_sql", "opening"];
  const lines = shown.map((i) => { const e = EPS[i]; return [RUNS[e.r].name, e.t, e.k, e.c, e.ok, e.e || "", e.q,
    e.u.length, isNum(e.w) ? e.w.toFixed(3) : "", e.f || "", e.o]; });
  download("episodes.csv", csv([head, ...lines]));
}
function setupList() {
  options($("f-run"), RUNS.map((_, i) => String(i)), RUNS.map((r) => r.name));
  $("f-run").parentElement.hidden = RUNS.length < 2;
  options($("f-cat"), [...new Set(EPS.map((e) => e.c))].sort());
  options($("f-end"), [...new Set(EPS.map((e) => e.e))].filter((x) => x != null).sort());
  const bind = (id, key, ev) => $(id).addEventListener(ev, () => { F[key] = $(id).value; applyFilters(); });
  bind("f-run", "run", "change"); bind("f-cat", "cat", "change"); bind("f-ok", "ok", "change");
  bind("f-end", "end", "change"); bind("f-clar", "clar", "change");
  $("filters").addEventListener("submit", (ev) => ev.preventDefault());
  let timer = null;
  $("f-q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { F.q = $("f-q").value; applyFilters(); }, 120);
  });
  $("prev").addEventListener("click", () => { page--; renderList(); });
  $("next").addEventListener("click", () => { page++; renderList(); });
  $("export-csv").addEventListener("click", exportList);
  for (const th of document.querySelectorAll("#list th[data-sort]")) {
    th.addEventListener("click", () => {
      const k = th.dataset.sort;
      LIST_SORT.dir = LIST_SORT.key === k ? -LIST_SORT.dir : 1;
      LIST_SORT.key = k;
      markSorted(th, LIST_SORT.dir);
      sortShown();
      page = 0;
      renderList();
    });
  }
  $("rows").addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-i]");
    if (tr) openEpisode(+tr.dataset.i);
  });
  applyFilters();
}

// --- one episode --------------------------------------------------------------------------------
function comps(rc) {
  const ks = Object.keys(obj(rc));
  return ks.length ? ks.map((k) => `${esc(k)} ${sgn(rc[k])}`).join(", ") : "";
}
function rowsTable(r) {
  if (!r || !Array.isArray(r.rows)) return "";
  if (!r.rows.length) return `<span class="muted">no rows</span>`;
  const body = r.rows.map((row) => `<tr>${(Array.isArray(row) ? row : [row]).map((c) => `<td>${esc(c === null ? "NULL" : c)}</td>`).join("")}</tr>`).join("");
  return `<table class="grid">${body}</table>` + (r.n > r.rows.length ? `<div class="muted">… ${fint(r.n - r.rows.length)} more row(s)</div>` : "");
}
function turnHtml(t, n) {
  const a = t.a, rw = `<span class="rw">reward ${sgn(t.w)}${t.rc ? " · " + comps(t.rc) : ""}</span>`;
  let head, body = "";
  if (a && typeof a === "object") {
    const kind = a.type;
    if (kind === "clarify") {
      head = "ask_user";
      body = `<div>${esc(a.question)}</div>` + (Array.isArray(a.labels) && a.labels.length ? `<div class="muted">labels: ${esc(JSON.stringify(a.labels))}</div>` : "");
    } else if (kind === "execute") { head = "execute_sql"; body = sql(a.sql); }
    else if (kind === "abstain") { head = "abstain"; body = `<div>${esc(a.reason)}</div>`; }
    else { head = kind || "action"; if (a.sql) body = sql(a.sql); }
  } else { head = "invalid action"; body = `<pre>${esc(a)}</pre>`; }
  const who = t.x ? "err" : a && a.type === "clarify" ? "user" : "env";
  const whoName = t.x ? "error" : who === "user" ? "user" : "env";
  return `<div class="turn agent${t.x ? " err" : ""}"><span class="who agent">${n}. agent · ${esc(head)}</span>${rw}${body}</div>` +
    `<div class="turn ${who === "user" ? "user" : who === "err" ? "err" : ""}"><span class="who ${who}">${whoName}</span>` +
    `<pre class="obs">${esc(t.o)}</pre></div>`;
}
function goldFinal(e, g) {
  const facts = [];
  if (g.answerable === false) facts.push(["gold", `unanswerable (${esc(g.unanswerable_kind)})`]);
  if (Array.isArray(g.labels) && g.labels.length) facts.push(["gold labels", `<code>${esc(JSON.stringify(g.labels))}</code>`]);
  if (Array.isArray(e.rv) && e.rv.length) facts.push(["revealed", `<code>${esc(JSON.stringify(e.rv))}</code>`]);
  const goldSql = g.gold_sql ? String(g.gold_sql) : Array.isArray(g.gold_actions) && g.gold_actions.length ? g.gold_actions.join(";\n") : "";
  if (g.gold_sql) facts.push(["gold SQL", sql(g.gold_sql)]);
  else if (goldSql) facts.push(["gold actions", sql(goldSql)]);
  facts.push(["final SQL", e.f ? sql(e.f) : `<span class="muted">none</span>`]);
  if (goldSql && e.f) {
    const d = sqlDiff(goldSql, e.f);
    facts.push(["gold → final", d === null ? `<span class="muted">too long to compare</span>`
      : d.same ? `<span class="ok">final SQL = gold SQL</span> <span class="muted">(up to layout and keyword case)</span>`
      : `<div class="muted difflegend"><del>only in gold</del> <ins>only in final</ins></div>${d.html}`]);
  }
  if (e.gr) facts.push([`gold rows (${fint(e.gr.n)})`, rowsTable(e.gr)]);
  if (e.ans) facts.push([`answer rows (${fint(e.ans.n)})`, rowsTable(e.ans)]);
  if (e.ge) facts.push(["gold error", `<span class="bad">${esc(e.ge)}</span>`]);
  return `<div class="facts">${facts.map(([k, v]) => `<div class="k">${k}</div><div>${v}</div>`).join("")}</div>`;
}
function episodeHtml(e, compact) {
  const g = obj(GOLD[e.t]);
  const parts = [`<div class="ephead"><span class="id">${esc(e.t)}</span>` +
    `<span class="pill ${e.ok ? "ok" : "bad"}">${e.ok ? "✓ correct" : "✗ failed"}</span>` +
    `<span class="pill">${esc(RUNS[e.r].name)}</span><span class="pill">${esc(e.c)}</span>` +
    `<span class="pill">end: ${esc(e.e)}</span><span class="pill">trial ${fint(e.k)}</span>` +
    `<span class="pill">reward ${sgn(e.w)}</span></div>`];
  if (!compact && Object.keys(obj(e.rc)).length) parts.push(`<div class="muted">reward components: ${comps(e.rc)}</div>`);
  parts.push(`<div class="turn user"><span class="who user">user</span><div>${esc(e.o)}</div></div>`);
  e.u.forEach((t, k) => parts.push(turnHtml(t, k + 1)));
  parts.push(`<h3>Gold vs final</h3>${goldFinal(e, g)}`);
  if (e.sd) parts.push(`<h3>State vs gold (tables)</h3><div class="wide">${stateDiff(obj(e.sd))}</div>`);
  else if (g.writable) parts.push(`<h3>State vs gold (tables)</h3><p class="muted">not recorded in this run (re-run with a newer clarisql)</p>`);
  return parts.join("");
}
function stateDiff(sd) {
  if (sd.error) return `<span class="bad">${esc(sd.error)}</span>`;
  const rows = (Array.isArray(sd.tables) ? sd.tables : []).map((t) => {
    t = obj(t);
    const by = [t.changed_by_agent ? "agent" : "", t.changed_by_gold ? "gold" : ""].filter(Boolean).join(", ");
    const verdict = t.matches_gold == null ? "–" : t.matches_gold ? "= gold" : "≠ gold";
    return `<tr class="diff"><td>${esc(t.table)}</td><td>${fint(t.initial_rows)}</td><td>${fint(t.gold_rows)}</td>` +
      `<td>${fint(t.final_rows)}</td><td class="l ${t.matches_gold ? "ok" : "bad"}">${verdict}</td><td class="l">${by || "–"}</td></tr>`;
  }).join("");
  const note = sd.unchanged_tables ? `<div class="muted">${fint(sd.unchanged_tables)} other table(s) untouched by both and equal.</div>` : "";
  return `<table class="grid sd"><thead><tr><th>table</th><th>rows: before</th><th>gold</th><th>final</th>` +
    `<th>content</th><th>written by</th></tr></thead><tbody>${rows}</tbody></table>${note}`;
}
function openEpisode(i) {
  selected = i;
  for (const tr of document.querySelectorAll("#rows tr.sel")) tr.classList.remove("sel");
  const tr = document.querySelector(`#rows tr[data-i="${i}"]`);
  if (tr) tr.classList.add("sel");
  const e = EPS[i];
  let html = episodeHtml(e, false);
  if (RUNS.length > 1) html += `<p><a href="#" id="to-compare">compare this task across runs ›</a></p>`;
  $("detail").innerHTML = html;
  $("detail").scrollTop = 0;
  // a link to this episode: #[run index, task id, trial]
  try { history.replaceState(null, "", "#" + encodeURIComponent(JSON.stringify([e.r, e.t, e.k]))); } catch (err) { /* ignore */ }
  const link = $("to-compare");
  if (link) link.addEventListener("click", (ev) => { ev.preventDefault(); showTab("compare"); sideBySide(JSON.stringify([e.t, e.k])); });
}

// --- several runs -------------------------------------------------------------------------------
let GROUPS = null, DIFFS = [];
function groups() {
  if (GROUPS) return GROUPS;
  GROUPS = new Map();
  EPS.forEach((e, i) => {
    const key = JSON.stringify([e.t, e.k]);
    if (!GROUPS.has(key)) GROUPS.set(key, new Array(RUNS.length).fill(-1));
    GROUPS.get(key)[e.r] = i;
  });
  return GROUPS;
}
const delta = (v, base) => isNum(v) && isNum(base) ? v - base : null;
// which way is better: +1 higher, -1 lower, 0 neither (coloured only when one is)
const SENSE = { "pass@1": 1, phi_0: 1, phi_10: 1, phi_N: 1, ecr: 1, table_f1: 1, reward_mean: 1,
  sql_errors_per_episode: -1, invalid_actions_per_episode: -1, hallucination_rate: -1 };
function deltaCell(d, key) {
  const s = SENSE[key] || 0, good = isNum(d) && Math.abs(d) > 1e-9 ? Math.sign(d) * s : 0;
  return { h: sgn(d), v: isNum(d) ? d : null, c: good > 0 ? "up" : good < 0 ? "down" : "" };
}
// wins / losses of run j against the base run on the episodes (task, trial) both have
function winLoss(j, cat) {
  const w = { win: 0, loss: 0, both: 0, neither: 0 };
  for (const idx of groups().values()) {
    if (idx[0] < 0 || idx[j] < 0) continue;
    const a = EPS[idx[0]], b = EPS[idx[j]];
    if (cat != null && a.c !== cat) continue;
    if (b.ok && !a.ok) w.win++; else if (a.ok && !b.ok) w.loss++; else if (a.ok) w.both++; else w.neither++;
  }
  return w;
}
function compareView() {
  const G = groups(), base = RUNS[0];
  DIFFS = [];
  let common = 0;
  for (const [key, idx] of G) {
    if (idx.some((i) => i < 0)) continue;
    common++;
    const es = idx.map((i) => EPS[i]);
    if (new Set(es.map((e) => e.ok)).size > 1 || new Set(es.map((e) => e.e)).size > 1) DIFFS.push(key);
  }
  const others = RUNS.slice(1);
  const parts = [`<p class="muted">Deltas, wins and losses are against <b>${esc(base.name)}</b>, the first run given.</p>`];
  // the headline metrics, one column per run, with deltas
  parts.push("<h2>Runs side by side</h2>", grid(["metric", base.name, ...others.flatMap((r) => [r.name, "Δ"])],
    MAIN.map(([label, k]) => [label, fmtKey(k, obj(base.headline)[k]), ...others.flatMap((r) =>
      [fmtKey(k, obj(r.headline)[k]), k === "n_episodes" ? "–" : deltaCell(delta(obj(r.headline)[k], obj(base.headline)[k]), k)])]), "runs-side-by-side"));
  // wins and losses
  parts.push("<h2>Wins and losses</h2>", grid(["run", "wins", "losses", "both correct", "both failed", "shared episodes"],
    others.map((r, k) => { const w = winLoss(k + 1); return [named(r.name), fint(w.win), fint(w.loss), fint(w.both), fint(w.neither),
      fint(w.win + w.loss + w.both + w.neither)]; }), "wins-losses"));
  // per category
  const cats = [...new Set(RUNS.flatMap((r) => Object.keys(obj(r.by_category))))];
  const bc = (r, c, k) => obj(obj(r.by_category)[c])[k];
  parts.push("<h2>By category</h2>", grid(["category", `Pass@1 ${base.name}`, ...others.flatMap((r) =>
    [`Pass@1 ${r.name}`, "Δ Pass@1", "Δ reward", "wins", "losses"])],
  cats.map((c) => [named(c), f3(bc(base, c, "pass@1")), ...others.flatMap((r, k) => {
    const w = winLoss(k + 1, c);
    return [f3(bc(r, c, "pass@1")), deltaCell(delta(bc(r, c, "pass@1"), bc(base, c, "pass@1")), "pass@1"),
      deltaCell(delta(bc(r, c, "reward_mean"), bc(base, c, "reward_mean")), "reward_mean"), fint(w.win), fint(w.loss)];
  })]), "by-category-deltas"));
  parts.push(barChart("Pass@1 by category", cats, RUNS.map((r) => ({ name: r.name, vals: cats.map((c) => bc(r, c, "pass@1")) })), 0, 1));
  // the episodes that differ
  const head = ["task", "category", ...RUNS.map((r) => r.name)];
  const rows = DIFFS.slice(0, 500).map((key) => {
    const idx = G.get(key), e0 = EPS[idx[0]];
    return `<tr data-k="${esc(key)}"><td><a href="#">${esc(e0.t)}${e0.k ? ` · t${e0.k}` : ""}</a></td><td class="l">${esc(e0.c)}</td>` +
      idx.map((i) => { const e = EPS[i]; return `<td class="l ${e.ok ? "ok" : "bad"}" data-v="${e.ok}">${e.ok ? "✓" : "✗"} ${esc(e.e)} ${sgn(e.w)}</td>`; }).join("") + "</tr>";
  });
  parts.push(`<h2>Where the runs differ</h2><p class="muted">${DIFFS.length} of ${common} shared episodes differ in outcome or end reason` +
    (DIFFS.length > 500 ? " (first 500 listed)" : "") + `. Click a task to see it under each policy.</p>` +
    `<div id="sbs"></div><div class="tbl"><div class="tbl-bar"><button type="button" class="csv" data-name="differing-episodes">CSV</button></div>` +
    `<div class="wide"><table class="grid sortable" id="difftable"><thead><tr>${head.map((h) => `<th title="sort">${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table></div></div>`);
  $("compare").innerHTML = parts.join("");
  $("difftable").addEventListener("click", (ev) => {
    if (ev.target.closest("thead")) return;
    const tr = ev.target.closest("tr[data-k]");
    if (tr) { ev.preventDefault(); sideBySide(tr.dataset.k); }
  });
}
function sideBySide(key) {
  if (!$("sbs")) compareView();
  const idx = groups().get(key) || [];
  const cols = idx.map((i, r) => i < 0 ? `<div><b>${esc(RUNS[r].name)}</b><p class="muted">not in this run</p></div>`
    : `<div>${episodeHtml(EPS[i], true)}</div>`);
  $("sbs").innerHTML = `<h2>Side by side</h2><div class="sbs" style="grid-template-columns: repeat(${idx.length}, minmax(0, 1fr))">${cols.join("")}</div>`;
  $("sbs").scrollIntoView({ block: "start" });
}

// --- tabs ---------------------------------------------------------------------------------------
let compareBuilt = false;
function showTab(name) {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll(".pane")) p.hidden = p.id !== name;
  if (name === "compare" && !compareBuilt) { compareBuilt = true; compareView(); }
  headerHeight();
}
for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showTab(b.dataset.tab));
$("tab-compare").hidden = RUNS.length < 2;
function openFromHash() {
  if (location.hash.length < 2) return;
  let key;
  try { key = JSON.parse(decodeURIComponent(location.hash.slice(1))); } catch (err) { return; }
  if (!Array.isArray(key)) return;
  const i = EPS.findIndex((e) => e.r === key[0] && e.t === key[1] && e.k === key[2]);
  if (i >= 0) { showTab("episodes"); openEpisode(i); }
}
headerHeight();
overview();
setupList();
openFromHash();
document.body.dataset.readyMs = performance.now().toFixed(1); // for benchmarks
document.body.dataset.ready = "1";
