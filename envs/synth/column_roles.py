"""What a column means, from its name AND its values: the role that decides what may be asked.

Contract
- :func:`column_role` gives one of :data:`ROLES` for a profiled column:
  ``identifier`` (unique values, or an id/key/uuid name), ``code`` (zip, phone, ISBN, IATA...,
  or fixed-width codes by their values), ``coordinate`` (latitude/longitude names whose values
  lie in range), ``date`` (dates, and date parts: year, month, day, week, quarter by name with
  values in their range), ``time`` (clock times: ``HH:MM`` text, hour/minute/time names with
  values in 0..24 / 0..60 / HHMM), ``flag`` (two values, or yes/no-like values), ``ordinal``
  (rank, position, order, stint, round: a number that counts places, not amounts), ``measure``
  (a number none of the above, >= 3 distinct values), ``category`` (few repeated values),
  ``name`` (text naming things) and ``text`` (the rest).
- Names alone never make a number a measure, and values alone never make a coordinate or a
  time (``latency`` is not a latitude, a temperature in -30..40 is not one either): the name
  proposes, the values confirm.
- A ``list`` is text holding several items joined by a separator: a small vocabulary that
  recombines (``Trailers,Behind the Scenes``, :func:`tag_list`) or lists of names
  (``Bill Gould/Mike Bordin/Mike Patton``, :func:`credit_list`): neither a category to group or
  filter by equality nor a name.
- One detector of values that join several items, :func:`joined_items`, with three views of
  growing reach, each used where it fits: :func:`tag_list` and :func:`credit_list` make the
  ``list`` role (and the audit's and the unanswerable layer's "no record named by a credit
  list"); :func:`joins_items` (at least :data:`JOINED_SHARE` of the values join two words by
  one of the same separators: credits, addresses) tells the clarify layers which columns no
  user writes a value of whole or cut short.
- Only a ``measure`` is summed, averaged or ranked ("highest"), and only an extensive one is
  summed (:func:`summable`): a rate, price, percentage, ratio, score, age or a fraction in
  0..1 is averaged or ranked, never added up ("the total rental rate of the films"); grouping is by ``category``,
  ``flag``, ``date``, ``code`` or ``name``, never by a measure (so never by the aggregated
  column). :func:`aggregatable` and :func:`groupable` say so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from clarisql.envs.synth.names import split_name
from clarisql.envs.synth.types import ColumnProfile

ROLES = (
    "identifier",
    "code",
    "coordinate",
    "date",
    "time",
    "flag",
    "ordinal",
    "measure",
    "list",
    "category",
    "name",
    "text",
)

_ID_WORDS = {"id", "ids", "key", "uuid", "guid", "pk", "fk", "oid", "rowid"}
_ID_TAIL = {"no", "nr", "num", "number", "nummer"}
_CODE_WORDS = {
    "code", "codes", "cd", "zip", "zipcode", "postal", "postcode", "phone", "fax", "tel",
    "telephone", "mobile", "ssn", "isbn", "issn", "iata", "icao", "faa", "fips", "sku", "ean",
    "upc", "vin", "iso", "abbr", "abbreviation", "acronym", "initials", "ip", "mac", "url",
    "email", "hash",
}  # fmt: skip
_COORD_WORDS = {"lat", "latitude", "lon", "lng", "long", "longitude", "coord", "coordinate"}
_COORD_PLANE = {"x", "y", "z", "easting", "northing"}
_DATE_PARTS = {
    "year": (1000, 2200), "yr": (1000, 2200), "yyyy": (1000, 2200), "season": (1000, 2200),
    "month": (1, 12), "mon": (1, 12), "mm": (1, 12),
    "day": (1, 31), "dd": (1, 31), "dom": (1, 31), "dow": (0, 7), "weekday": (0, 7),
    "week": (0, 53), "wk": (0, 53), "quarter": (1, 4), "qtr": (1, 4),
}  # fmt: skip
_DATE_WORDS = {"date", "dob", "birthday", "born", "dt"}
_TIME_WORDS = {"time", "hour", "hr", "minute", "clock", "hhmm", "departure", "arrival", "sched",
               "scheduled", "dep", "arr"}  # fmt: skip
_DURATION_WORDS = {"duration", "elapsed", "length", "runtime", "delay", "wait", "total", "avg"}
_ORDINAL_WORDS = {"rank", "ranking", "position", "pos", "order", "ordinal", "stint", "round",
                  "seed", "place", "seq", "sequence", "lap", "grid", "slot", "jersey", "uniform",
                  "shirt", "number", "no", "tier"}  # fmt: skip
#: words that say a number is an amount (a unit or a quantity): never a code by its digits
_MEASURE_WORDS = {
    "milliseconds", "seconds", "minutes", "hours", "days", "ms", "bytes", "size", "amount",
    "price", "cost", "total", "count", "population", "area", "weight", "length", "duration",
    "distance", "salary", "revenue", "budget", "sales", "income", "balance", "value",
    "quantity", "qty", "capacity", "height", "width", "depth", "volume", "score", "points",
}  # fmt: skip
#: words of an intensive measure (per unit, a level, a share): averaged, never summed
_INTENSIVE_WORDS = {
    "rate", "rates", "percent", "pct", "percentage", "ratio", "share", "avg",
    "average", "mean", "median", "temperature", "temp", "score", "rating", "speed", "density",
    "index", "age", "margin", "commission", "grade", "gpa", "elevation", "altitude", "height",
    "per", "unit", "level",
}  # fmt: skip
_LIST_SEPARATORS = (",", ";", "|")
_FLAG_VALUES = {"0", "1", "y", "n", "yes", "no", "t", "f", "true", "false"}
_CLOCK = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([ap]\.?m\.?)?$", re.I)
_FIXED_CODE = re.compile(r"^[A-Z0-9][A-Z0-9.\-/]*$")


@lru_cache(maxsize=8192)
def name_words(name: str) -> tuple[str, ...]:
    """A column name's words in lower case (``birthCity`` -> ``birth city``, ``G`` -> ``g``;
    letters of any script)."""
    return tuple(split_name(name))


def _numbers(c: ColumnProfile) -> list[float]:
    out = []
    for v in c.samples:
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out.append(float(v))
        else:
            try:
                out.append(float(str(v)))
            except ValueError:
                pass
    return out


def _in_range(c: ColumnProfile, lo: float, hi: float) -> bool:
    vals = [x for x in (c.min, c.max) if isinstance(x, (int, float))] or _numbers(c)
    return bool(vals) and lo <= min(vals) and max(vals) <= hi


_CREDIT_SEP = re.compile(r"\s*(?:/|,|&|;|\|)\s*")
#: two words joined in one value by a separator (a credit list, an address line's parts)
_JOINED = re.compile(r"\w\s*(?:/|,|&|;)\s*\w")
#: the share of a column's values that join words for the column to be no name to write
JOINED_SHARE = 0.15


@dataclass(frozen=True)
class JoinedItems:
    """How a column's values join several items (:func:`joined_items`)."""

    tags: bool  # a small vocabulary that recombines (:func:`tag_list`)
    credits: bool  # lists of names (:func:`credit_list`)
    share: float  # the share of values that join two words by a separator

    @property
    def is_list(self) -> bool:
        """The ``list`` role: tags or credits."""
        return self.tags or self.credits

    @property
    def no_name(self) -> bool:
        """No value is a name a user writes whole or cuts short (:func:`joins_items`)."""
        return self.share >= JOINED_SHARE


def joined_items(values: Sequence[Any]) -> JoinedItems:
    """Every view of how ``values`` (a column's distinct values) join several items."""
    texts = [x for x in values if isinstance(x, str)]
    share = sum(bool(_JOINED.search(x)) for x in texts) / len(texts) if texts else 0.0
    return JoinedItems(tag_list(texts), credit_list(texts), share)


def joins_items(values: Sequence[Any]) -> bool:
    """Many of ``values`` join several items (at least :data:`JOINED_SHARE`): a credit list or
    an address, no name a user writes whole or cuts short ("Eddie" for "Eddie Cochran/Jerry
    Capehart" picks one credit string among the many that hold Eddie)."""
    texts = [x for x in values if isinstance(x, str)]
    return bool(texts) and sum(bool(_JOINED.search(x)) for x in texts) >= JOINED_SHARE * len(texts)


def _texts(c: ColumnProfile) -> list[str]:
    return [str(v) for v in c.samples if v is not None]


def credit_list(values: Sequence[str], share: float = 0.05, least: int = 3) -> bool:
    """Whether a column's distinct ``values`` read as lists of names (credits such as
    ``Bill Gould/Mike Bordin/Mike Patton`` or ``A, B & C``): at least ``least`` values and
    ``share`` of them split (on ``/ , & ; |``) into three or more short parts (one to four
    words each), some values are one part alone, and at least ``least`` parts recur in two or
    more values. A ``Last, First`` name has two parts always, so it is no list."""
    if not values:
        return False
    many, single, seen = 0, 0, Counter()
    for v in values:
        parts = [p for p in _CREDIT_SEP.split(str(v)) if p]
        if len(parts) >= 3 and all(1 <= len(p.split()) <= 4 for p in parts):
            many += 1
            seen.update(set(p.casefold() for p in parts))
        elif len(parts) == 1:
            single += 1
    recurring = sum(1 for n in seen.values() if n >= 2)
    return many >= least and many >= share * len(values) and single > 0 and recurring >= least


def column_role(c: ColumnProfile, join_key: bool = False) -> str:
    """The column's role (see the module docstring). ``join_key``: a discovered join column."""
    words = set(name_words(c.name))
    last = name_words(c.name)[-1]
    numeric = c.kind in ("integer", "real")
    texts = _texts(c)
    # flags first: two values say yes/no whatever the name
    if c.kind == "boolean" or (
        c.distinct <= 2 and texts and all(t.strip().lower() in _FLAG_VALUES for t in texts)
    ):
        return "flag"
    if words & _COORD_WORDS and _numbers(c) and _in_range(c, -180, 180):
        return "coordinate"
    if words & _COORD_PLANE and len(words) == 1 and c.kind == "real":
        return "coordinate"
    if c.kind == "date" or words & _DATE_WORDS:
        return "date"
    for w in words:
        rng = _DATE_PARTS.get(w)
        if rng and (not numeric or _in_range(c, *rng)):
            return "date"
    if texts and sum(bool(_CLOCK.match(t.strip())) for t in texts) >= 0.8 * len(texts):
        return "time"
    if words & _TIME_WORDS and not words & _DURATION_WORDS and _numbers(c):
        if _in_range(c, 0, 2400):
            return "time"
    if words & _ID_WORDS or (last in _ID_TAIL and len(words) > 1) or last.endswith("id"):
        return "identifier"
    if c.key_part:  # a declared primary or foreign key (composite too): it names rows
        return "identifier" if c.kind == "integer" or c.unique else "code"
    if words & _CODE_WORDS:
        return "code"
    if c.unique and c.kind == "integer":
        return "identifier"
    if join_key:
        return "identifier"
    if words & _ORDINAL_WORDS and c.kind == "integer":
        return "ordinal"
    if c.kind == "text" and texts and _fixed_code(c, texts):
        return "code"
    if numeric and not words & _MEASURE_WORDS and _fixed_digits(c, present_rows(c)):
        return "code"
    if not words & _MEASURE_WORDS and _sparse_labels(c):
        return "code"
    if c.kind == "integer" and numeric and _in_range(c, 1800, 2100) and c.distinct <= 250:
        return "date"  # every value a plausible year
    if c.kind == "integer" and _mostly_years(c):
        return "date"  # nearly every value a year (a few ancient or odd ones)
    if numeric:
        return "measure" if c.distinct >= 3 else "category"
    if c.kind == "text" and (tag_list(texts) or credit_list(texts)):
        return "list"  # (a credit list names several people: no name, no category)
    if c.unique and c.kind == "text":
        return "identifier" if _fixed_code(c, texts) else "name"
    present = present_rows(c)
    if 2 <= c.distinct <= 60 and c.distinct <= present / 2:
        return "category"
    if c.kind == "text" and texts and sum(len(t) for t in texts) <= 40 * len(texts):
        return "name"
    return "text"


def _sparse_labels(c: ColumnProfile) -> bool:
    """Integers of one width (>= 4 digits), repeated by some rows, spread thinly (the range is
    >= 100 times the number of values) and rarely round (advisor numbers 1121, 2192, 7134...;
    phone extensions): labels written in digits, not amounts (amounts of one width are mostly
    round: salaries 30000, 45500)."""
    if c.kind != "integer" or not isinstance(c.min, int) or not isinstance(c.max, int):
        return False
    nums = [int(x) for x in _numbers(c)]
    if len(nums) < 5 or c.distinct >= present_rows(c) or c.max - c.min < 100 * c.distinct:
        return False
    widths = {len(str(abs(x))) for x in nums}
    round_ = sum(x % 10 == 0 for x in nums)
    return len(widths) == 1 and min(widths) >= 4 and round_ < 0.5 * len(nums)


def _mostly_years(c: ColumnProfile) -> bool:
    """At least 90 % of the sampled values are years (1000..2100) and at most 300 distinct."""
    nums = _numbers(c)
    if len(nums) < 5 or c.distinct > 300:
        return False
    years = sum(1000 <= x <= 2100 and float(x).is_integer() for x in nums)
    return years >= 0.9 * len(nums)


def tag_list(texts: Sequence[str]) -> bool:
    """Several items joined by one separator, the items a small vocabulary that recombines
    (``Trailers,Deleted Scenes``, ``Commentaries,Trailers``): most values hold the separator,
    every item recurs in another value, and there are few distinct items."""
    if len(texts) < 5:
        return False
    for sep in _LIST_SEPARATORS:
        joined = [t for t in texts if sep in t]
        if len(joined) < 0.4 * len(texts):
            continue
        items = [[p.strip().casefold() for p in t.split(sep)] for t in texts]
        if any(not p or len(p) > 40 for ps in items for p in ps):
            continue
        vocab: dict[str, int] = {}
        for ps in items:
            for p in set(ps):
                vocab[p] = vocab.get(p, 0) + 1
        if len(vocab) <= max(3, len(texts) // 2) and all(n >= 2 for n in vocab.values()):
            return True
    return False


def _fixed_code(c: ColumnProfile, texts: list[str]) -> bool:
    """Same-width upper-case/digit tokens (``LAX``, ``US-CA``, ``02134``) with many values."""
    if c.distinct < 5 or len(texts) < 3:
        return False
    lens = {len(t) for t in texts}
    return len(lens) == 1 and all(_FIXED_CODE.match(t) for t in texts) and min(lens) <= 12


def present_rows(c: ColumnProfile) -> int:
    return max(1, round(c.rows * (1 - c.missing)))


def _fixed_digits(c: ColumnProfile, present: int) -> bool:
    """Integers that all have the same number (>= 5) of digits and rarely repeat (zip codes,
    phone numbers, registration numbers): labels written in digits."""
    if c.kind != "integer" or c.distinct < 5:
        return False
    nums = _numbers(c)
    widths = {len(str(int(abs(x)))) for x in nums}
    return len(widths) == 1 and min(widths) >= 5 and c.distinct >= 0.5 * present


def aggregatable(c: ColumnProfile, join_key: bool = False) -> bool:
    """Whether SUM/AVG/MAX/MIN of the column mean anything: measures only."""
    return column_role(c, join_key) == "measure"


def summable(c: ColumnProfile, join_key: bool = False) -> bool:
    """Whether SUM of the column means anything: an extensive measure (an amount, a count, a
    duration), not a rate, price, percentage, ratio, score, age or a fraction in 0..1."""
    if not aggregatable(c, join_key) or set(name_words(c.name)) & _INTENSIVE_WORDS:
        return False
    lo, hi = c.min, c.max
    fraction = c.kind == "real" and isinstance(lo, (int, float)) and isinstance(hi, (int, float))
    return not (fraction and 0 <= lo and hi <= 1)


def agg_names(m: ColumnProfile, join_key: bool = False) -> tuple[str, ...]:
    """The aggregates that mean something for measure ``m``: SUM only when it adds up."""
    return ("avg", "sum", "max", "min") if summable(m, join_key) else ("avg", "max", "min")


def groupable(c: ColumnProfile, join_key: bool = False) -> bool:
    """Whether grouping by the column makes groups a user would ask about."""
    return column_role(c, join_key) in ("category", "flag", "date", "code", "name", "ordinal")


def describe_role(role: str) -> str:
    """The role in words, for reports."""
    return {"time": "clock time"}.get(role, role)


__all__ = [
    "JOINED_SHARE",
    "ROLES",
    "JoinedItems",
    "agg_names",
    "aggregatable",
    "column_role",
    "credit_list",
    "describe_role",
    "groupable",
    "joined_items",
    "joins_items",
    "name_words",
    "summable",
    "tag_list",
]
