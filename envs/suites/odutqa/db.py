"""Planning the full ODUTQA-MDC database: all 209 tables, populated, whichever records are loaded.

ODUTQA-MDC publishes its table captions and gold records but not its tables. :func:`plan_rows`
plans one table per caption (land deals 103, housing sales 102, enterprise finance 4; one column
set per domain) full of plausible rows; :mod:`clarisql.envs.suites.odutqa.fit` fits them to the
gold answers and writes the SQLite file.

Contract
- The plan depends only on the captions, :data:`SEED` and the records it is given; the suite
  passes the union of every record file of the data folder, so the database is the same
  whichever set of records is evaluated. Every random draw is seeded per table or per name.
- Rows: (1) the gold rows each record's answer implies (the answer row plus the equality
  conditions of the gold-SQL part that produced it and the caption's year or district; multi-table
  ``UNION`` records too); (2) rows for the other entities an ``IN`` list names (the losers of an
  ``ORDER BY ... LIMIT``); (3) other rows: every enterprise in every year table, synthetic
  enterprises and projects, each gold project again in another district of its city and in another
  city (same-named projects, with other figures), and two look-alike names for every full name a
  record's WHERE condition abbreviates (so the abbreviation matches several). Numeric values are
  drawn from the gold rows' ranges (prices per city), rounded as the gold rows are; plot names
  follow the formats of the gold rows, so real and synthetic rows look alike.
- Storage order: rows are planned gold first (the fit relies on it), then :func:`store_shuffled`
  rewrites every table in an order that depends only on each row's own values (a keyed hash of
  them), never on which rows are gold: "take the first matching row by rowid" finds a gold row no
  more often than any other matching row.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import sqlglot
from sqlglot import exp

SEED = 20260411
MONTHS = [f"{y}年{m:02d}月" for y in range(2019, 2023) for m in range(1, 13)]
COLUMNS: dict[str, dict[str, type]] = {
    "enterprise": {
        "企业名称": str,
        "年份": int,
        "营业总收入": float,
        "营业总成本": float,
        "营业利润": float,
        "负债合计": float,
        "风险等级": str,
        "信用债情况": str,
    },
    "land": {
        "项目名称": str,
        "地块名称": str,
        "时间(月份)": str,
        "成交日期": str,
        "成交总价": int,
        "绿化率(%)": float,
        "容积率": float,
        "建筑密度(%)": float,
        "所属集团": str,
    },
    "community": {"区域": str, "项目名称": str, "年月": str, "成交均价": float, "成交套数": int},
}
ENTITY = {"enterprise": "企业名称", "land": "项目名称", "community": "项目名称"}
#: Fallback ranges (the gold rows' ranges, widened, take precedence).
DEFAULT_RANGES = {
    "营业总收入": (2.0, 2000.0),
    "营业总成本": (2.0, 2000.0),
    "营业利润": (-100.0, 300.0),
    "负债合计": (5.0, 3000.0),
    "成交总价": (5e7, 5e9),
    "容积率": (1.0, 3.5),
    "成交均价": (8000.0, 110000.0),
    "成交套数": (1, 300),
}
CHOICES = {
    "风险等级": ["状态未知", "状态未知", "公开违约", "低风险", "中风险"],
    "信用债情况": ["未知", "未知", "信用债正常", "信用债展期"],
    "绿化率(%)": [20.0, 25.0, 30.0, 35.0, 40.0],
    "建筑密度(%)": [18.0, 20.0, 22.0, 25.0, 28.0, 30.0],
}
BRANDS = "保利 万科 中海 华润 招商 龙湖 绿城 金地 旭辉 新城 越秀 中建 首创 融创 滨江 建发 象屿 大华".split()
WORDS = "天悦 云境 玺园 春晓 锦绣 江南 翡翠 和府 云庐 星河 澜岸 观邸 御府 书院 公园里 湖畔 雅苑 映月".split()
SUFFIXES = ["", "", "花园", "家园", "府", "苑", "轩"]
ENT_STEMS = (
    "城市建设投资 交通投资 产业发展 国有资产经营 城市发展 置业 文化旅游 水务 港口 高新技术".split()
)
CITY_WORDS = "北京 上海 广州 深圳 杭州 南京 武汉 苏州 成都 济南".split()
ENT_WORDS = "建设 投资 产业 发展 城建 置业 实业 控股 交投 国资".split()
PLACES = "新城 高新区 开发区 港区 北部 南部 东湖 滨江 科学城 中心区".split()


def caption_scope(caption: str) -> tuple[str, str, str, int | None]:
    """(domain, city, district, year) of a caption; city/district ``""`` for enterprise tables."""
    if caption.endswith("财务表"):
        m = re.search(r"(\d{4})年", caption)
        return "enterprise", "", "", int(m.group(1)) if m else None
    domain = "land" if caption.endswith("土地成交信息表") else "community"
    body = caption.removesuffix("土地成交信息表").removesuffix("商品房成交价格表")
    i = body.find("市")
    return domain, body[: i + 1], body[i + 1 :], None


def is_subsequence(short: str, long: str) -> bool:
    """Whether the characters of ``short`` occur in ``long`` in order (an abbreviation test)."""
    it = iter(long)
    return all(ch in it for ch in short)


def _free_run(full: str, surface: str) -> tuple[int, int]:
    """The longest run of ``full``'s characters the abbreviation ``surface`` skips (greedy
    in-order alignment), a legal-form suffix (有限公司...) aside; ``(0, 0)`` if there is none."""
    used, k = set(), 0
    for i, ch in enumerate(full):
        if k < len(surface) and ch == surface[k]:
            used.add(i)
            k += 1
    end = len(full)
    for suffix in ("股份有限公司", "有限责任公司", "有限公司"):
        if full.endswith(suffix) and not used & set(range(len(full) - len(suffix), len(full))):
            end = len(full) - len(suffix)
            break
    best, start = (0, 0), None
    for i in range(end + 1):
        if i < end and i not in used:
            start = i if start is None else start
        elif start is not None:
            best = max(best, (start, i), key=lambda r: r[1] - r[0])
            start = None
    return best


def look_alikes(full: str, surface: str) -> list[str]:
    """Two other names that ``surface`` abbreviates as well as it abbreviates ``full``, of the
    same shape: a word of the run of ``full`` the abbreviation skips is replaced by another (a
    developer for projects; a city or a line of business for enterprises), so nothing in the
    names tells which one is real."""
    a, b = _free_run(full, surface)
    company = full.endswith("公司")
    b = min(b, a + (2 if company else 3))  # a word's length: the names keep their length
    words = (CITY_WORDS if a == 0 else ENT_WORDS) if company else BRANDS
    start = sum(map(ord, full)) % len(words)
    out = []
    for w in words[start:] + words[:start]:
        name = full[:a] + w + full[b:]
        if w != full[a:b] and name != full and name not in out and is_subsequence(surface, name):
            out.append(name)
        if len(out) == 2:
            break
    return out


# --- gold rows -----------------------------------------------------------------------------------
def _value(lit: exp.Expression) -> Any:
    if isinstance(lit, exp.Literal):
        if lit.is_string:
            return lit.this
        return float(lit.this) if "." in lit.this else int(lit.this)
    if isinstance(lit, exp.Neg) and isinstance(lit.this, exp.Literal):
        return -_value(lit.this)
    return None


def _conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    cond = where.this if isinstance(where, exp.Where) else where
    return list(cond.flatten()) if isinstance(cond, exp.And) else [cond]


def table_parts(tree: exp.Expression) -> list[tuple[str, exp.Select]]:
    """(table, select) for every SELECT reading a table directly (the innermost parts)."""
    out = []
    for sel in tree.find_all(exp.Select):
        src = sel.args.get("from") or sel.args.get("from_")
        if src is not None and isinstance(src.this, exp.Table):
            out.append((src.this.name, sel))
    return out


def _part_conditions(sel: exp.Select) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    eq: dict[str, Any] = {}
    ins: dict[str, list[Any]] = {}
    for c in _conjuncts(sel.args.get("where")):
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column):
            v = _value(c.expression)
            if v is not None:
                eq[c.this.name] = v
        elif isinstance(c, exp.In) and isinstance(c.this, exp.Column):
            vals = [_value(e) for e in c.expressions]
            if vals and None not in vals:
                ins[c.this.name] = vals
    return eq, ins


def _caption_fixed(table: str) -> dict[str, Any]:
    domain, city, district, year = caption_scope(table)
    if domain == "enterprise":
        return {"年份": year}
    return {"区域": city + district} if domain == "community" else {}


def record_rows(rec: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """(table, row, is_gold) rows a record's answer implies (see the module docstring)."""
    try:
        tree = sqlglot.parse_one(rec["SQL"], read="sqlite")
    except (sqlglot.errors.SqlglotError, KeyError, TypeError):
        return []
    parts = table_parts(tree)
    top = tree
    while isinstance(top, exp.Union):
        top = top.this
    if not parts or not isinstance(top, exp.Select):
        return []
    cols = [e.alias_or_name for e in top.expressions]
    conds = [(t, *_part_conditions(s), _caption_fixed(t)) for t, s in parts]
    out: list[tuple[str, dict[str, Any], bool]] = []
    named: set[tuple[str, str, Any]] = set()
    for ans in rec.get("SQL_answer") or []:
        if len(ans) != len(cols) or "*" in cols:
            return []
        row = dict(zip(cols, ans))
        for table, eq, ins, fixed in conds:
            known = {**eq, **fixed}
            if all(row.get(c, v) == v for c, v in known.items()) and all(
                row[c] in vs for c, vs in ins.items() if c in row
            ):
                full = {**{c: v for c, v in known.items()}, **row}
                full = {c: v for c, v in full.items() if c in COLUMNS[caption_scope(table)[0]]}
                out.append((table, full, True))
                ent = ENTITY[caption_scope(table)[0]]
                named.add((table, ent, full.get(ent)))
                break
    for table, eq, ins, fixed in conds:  # the other entities of an IN list (ranked losers)
        ent = ENTITY[caption_scope(table)[0]]
        for name in ins.get(ent, []):
            if (table, ent, name) not in named:
                extra = {c: v for c, v in eq.items() if c != ent}
                out.append((table, {**fixed, **extra, ent: name}, False))
                named.add((table, ent, name))
    return out


# --- plausible values ----------------------------------------------------------------------------
class _Values:
    """Numeric ranges from the gold rows (domain-wide and per city), and seeded draws."""

    def __init__(self, gold: Iterable[tuple[str, dict[str, Any], bool]]):
        self.by: dict[tuple[str, str], list[float]] = defaultdict(list)
        gold = list(gold)
        seen = {r.get(c) for _, r, _ in gold for c in ("年月", "时间(月份)")} - {None}
        self.months = _month_range([*seen, MONTHS[0], MONTHS[-1]])
        for table, row, _ in gold:
            city = caption_scope(table)[1]
            for c, v in row.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and c != "年份":
                    self.by[(c, "")].append(float(v))
                    self.by[(c, city)].append(float(v))

    def draw(self, col: str, rng: random.Random, city: str = "") -> Any:
        if col in CHOICES:
            return rng.choice(CHOICES[col])
        vals = self.by.get((col, city)) if len(self.by.get((col, city), [])) >= 3 else None
        vals = vals or self.by.get((col, "")) or list(DEFAULT_RANGES.get(col, (1.0, 100.0)))
        lo, hi = min(vals), max(vals)
        if col == "营业利润":
            v = rng.uniform(lo * 1.3 if lo < 0 else lo * 0.5, hi * 1.3)
        elif col == "容积率":
            v = rng.uniform(max(lo * 0.8, 0.5), hi * 1.2)
        else:
            v = math.exp(rng.uniform(math.log(max(lo * 0.6, 1.0)), math.log(max(hi * 1.4, 2.0))))
        if col == "成交总价":  # deals are priced in tens of thousands of yuan
            return int(round(v, -4))
        return int(round(v)) if COLUMNS_TYPES.get(col) is int else round(v, 2)


def _month_range(months: Iterable[str]) -> list[str]:
    """Every month from the earliest to the latest of ``months`` (``YYYY年MM月``)."""
    ym = sorted({(int(m[:4]), int(m[5:7])) for m in months if re.fullmatch(r"\d{4}年\d{2}月", m)})
    (y, m), last = ym[0], ym[-1]
    out = []
    while (y, m) <= last:
        out.append(f"{y}年{m:02d}月")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


COLUMNS_TYPES = {c: t for cols in COLUMNS.values() for c, t in cols.items()}


def _fill(
    row: dict[str, Any],
    table: str,
    vals: _Values,
    rng: random.Random,
    avoid: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``row`` completed with plausible values for the domain's other columns (numbers other
    than ``avoid``'s: a same-named project elsewhere has other figures)."""
    domain, city, district, year = caption_scope(table)
    out = {c: v for c, v in row.items() if v is not None}  # a NULL is a value still to draw
    if domain == "enterprise":
        out.setdefault("年份", year)
        # revenue, cost and profit that add up (when the gold row does not fix them)
        rev = out.setdefault("营业总收入", vals.draw("营业总收入", rng, city))
        cost = out.setdefault("营业总成本", round(float(rev) * rng.uniform(0.75, 1.05), 2))
        out.setdefault("营业利润", round((float(rev) - float(cost)) * rng.uniform(0.8, 1.1), 2))
    elif domain == "community":
        out.setdefault("区域", city + district)
        out.setdefault("年月", rng.choice(vals.months))
    else:
        month = out.get("时间(月份)") or (out.get("成交日期") or "")[:8] or rng.choice(vals.months)
        out.setdefault("时间(月份)", month)
        out.setdefault("成交日期", f"{month}{rng.randint(1, 28):02d}日")
        out.setdefault("地块名称", _plot_name(rng, city, district, month))
        out.setdefault("所属集团", f"{rng.choice(BRANDS)}{rng.choice(ENT_STEMS)}集团有限公司")
        out.setdefault("项目名称", _project_name(rng))
    for col in COLUMNS[domain]:
        if col in out:
            continue
        out[col] = vals.draw(col, rng, city)
        for _ in range(5):
            if (avoid or {}).get(col) != out[col]:
                break
            out[col] = vals.draw(col, rng, city)
    return out


def _plot_name(rng: random.Random, city: str, district: str, month: str) -> str:
    """A land-plot name in one of the formats the gold rows use."""
    y, n = month[:4], rng.randint(1, 240)
    road, road2 = rng.sample("学府 长江 人民 新华 建设 和平 中山 解放 科技 文化".split(), 2)
    return rng.choice(
        [
            f"{district}{rng.choice(PLACES)}{rng.choice('ABCDGHK')}{y}-{n:03d}地块",
            f"{city.removesuffix('市')}{district}P（{y}）{n}号",
            f"{rng.choice('HGA')}{y}-{n:04d}宗地",
            f"{district}{road}路{rng.choice('东西南北')}、{road2}路{rng.choice('东西南北')}地块",
            f"{city}{district}{rng.choice(PLACES)}{rng.choice('RBM')}{rng.randint(1, 9)}地块",
        ]
    )


def _project_name(rng: random.Random) -> str:
    return rng.choice(BRANDS) + rng.choice(WORDS) + rng.choice(SUFFIXES)


def _enterprise_names(rng: random.Random, cities: list[str], n: int) -> list[str]:
    names = {
        f"{rng.choice(cities).removesuffix('市')}{rng.choice(ENT_STEMS)}集团有限公司"
        for _ in range(n * 3)
    }
    return sorted(names)[:n]


# --- planning the rows ---------------------------------------------------------------------------
def _key(domain: str, row: dict[str, Any]) -> tuple[Any, ...]:
    if domain == "community":
        return (row.get("项目名称"), row.get("年月"))
    if domain == "land":
        return (row.get("项目名称") or row.get("地块名称"),)
    return (row.get("企业名称"),)


def _merge(
    into: dict[str, dict[tuple[Any, ...], dict[str, Any]]], table: str, row: dict[str, Any]
) -> None:
    """Add ``row`` to ``table``'s rows, merging a consistent row of the same entity."""
    rows = into[table]
    k = _key(caption_scope(table)[0], row)
    old = rows.get(k)
    if old is None:
        rows[k] = dict(row)
    elif all(old.get(c, v) == v for c, v in row.items()):
        old.update(row)


def plan_rows(
    records: list[dict[str, Any]],
    captions: dict[str, list[str]],
    pairs: list[tuple[str, str]],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[set[str]]]]:
    """Rows per table (gold rows first) and, per table, the columns each gold row fixes.

    ``pairs`` are the (surface, full name) pairs of the records' WHERE conditions.
    """
    tables = sorted({c for group in captions.values() for c in group})
    gold: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = defaultdict(dict)
    losers: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = defaultdict(dict)
    found: list[tuple[str, dict[str, Any], bool]] = []
    for rec in records:  # a record whose answer cannot be read adds no rows (never the suite)
        try:
            found += [r for r in record_rows(rec) if r[0] in tables]
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
    for table, row, is_gold in found:
        if is_gold:
            _merge(gold, table, row)
    for table, row, is_gold in found:
        if not is_gold and _key(caption_scope(table)[0], row) not in gold[table]:
            _merge(losers, table, row)
    vals = _Values(found)
    by_domain: dict[str, list[str]] = defaultdict(list)
    for t in tables:
        by_domain[caption_scope(t)[0]].append(t)
    cities = sorted({caption_scope(t)[1] for t in tables if caption_scope(t)[1]})
    extra: dict[str, set[str]] = defaultdict(set)  # table -> further entities to add
    months: dict[str, set[str]] = defaultdict(set)  # project -> months it must cover
    seen: dict[str, dict[str, Any]] = {}  # gold entity -> its gold row (copies differ from it)
    for t in tables:
        ent = ENTITY[caption_scope(t)[0]]
        for r in [*gold[t].values(), *losers[t].values()]:
            if r.get(ent):
                seen.setdefault(r[ent], r)
                months[r[ent]].add(r.get("年月"))
    ents = {n for n in seen if any(n == r.get("企业名称") for r in seen.values())}
    ents |= set(_enterprise_names(random.Random(f"{SEED}|names"), cities, 60))
    for surface, full in pairs:  # look-alike names beside every abbreviated full name
        for t in tables:
            ent = ENTITY[caption_scope(t)[0]]
            if any(r.get(ent) == full for r in [*gold[t].values(), *losers[t].values()]):
                for name in look_alikes(full, surface):
                    extra[t].add(name)
                    months[name] |= months[full]
                    if caption_scope(t)[0] == "enterprise":
                        ents.add(name)
    for t in tables:  # same-named projects in another district of the city and another city
        domain, city, _, _ = caption_scope(t)
        for name in {r.get("项目名称") for r in gold[t].values()} - {None}:
            prng = random.Random(f"{SEED}|copy|{name}")
            same = [o for o in by_domain[domain] if o != t and caption_scope(o)[1] == city]
            other = [o for o in by_domain[domain] if caption_scope(o)[1] != city]
            for pool in (same, other):
                if pool:
                    extra[prng.choice(pool)].add(name)
    out: dict[str, list[dict[str, Any]]] = {}
    fixed: dict[str, list[set[str]]] = {}
    for t in tables:
        domain = caption_scope(t)[0]
        trng = random.Random(f"{SEED}|{t}")
        rows = [_fill(r, t, vals, trng) for r in gold[t].values()]
        fixed[t] = [set(r) for r in gold[t].values()]
        rows += [_fill(r, t, vals, trng) for r in losers[t].values()]
        have = {_key(domain, r) for r in rows}
        names = {r.get(ENTITY[domain]) for r in rows} | extra[t]
        names |= ents if domain == "enterprise" else {_project_name(trng) for _ in range(8)}
        for name in sorted(names - {None}):
            wanted = [None]
            if domain == "community":
                wanted = sorted({m for m in months[name] if m} | set(trng.sample(vals.months, 24)))
            for m in wanted:
                row = {ENTITY[domain]: name} if m is None else {"项目名称": name, "年月": m}
                if _key(domain, row) not in have:
                    have.add(_key(domain, row))
                    rows.append(_fill(row, t, vals, trng, avoid=seen.get(name)))
        out[t] = rows
    return out, fixed


def _row_key(*values: Any) -> str:
    """A keyed hash of one row's values (its storage-order key)."""
    return hashlib.blake2b(repr(values).encode(), key=str(SEED).encode(), digest_size=8).hexdigest()


def store_shuffled(conn: sqlite3.Connection, tables: Iterable[str]) -> None:
    """Rewrite each table's rows in an order that depends only on the rows' values (see the
    module docstring): rowids no longer say which rows the gold answers came from."""
    conn.create_function("clarisql_row_key", -1, _row_key, deterministic=True)
    for t in tables:
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')]
        names = ", ".join(f'"{c}"' for c in cols)
        conn.execute("DROP TABLE IF EXISTS temp._order")
        conn.execute(
            f'CREATE TEMP TABLE _order AS SELECT {names} FROM "{t}" '
            f"ORDER BY clarisql_row_key({names}), rowid"
        )
        conn.execute(f'DELETE FROM "{t}"')
        conn.execute(f'INSERT INTO "{t}" ({names}) SELECT {names} FROM temp._order ORDER BY rowid')
        conn.execute("DROP TABLE temp._order")
