"""Table and column names put in words, and whether a name can be put in words at all.

Contract
- :func:`in_words` splits a name (``snake_case``, ``camelCase``, ``ALLCAPS``, digits), expands
  the abbreviations of :data:`ABBREVIATIONS` (``qty`` -> ``quantity``, ``dob`` -> ``date of
  birth``), and writes unit suffixes as units (``weight_kg`` -> ``weight in kg``,
  ``price_usd`` -> ``price in USD``). A data dictionary (:func:`set_descriptions`, from
  ``clarisql synth --describe FILE``) comes first: a described column is called what its
  description calls it.
- :func:`speakable` is ``False`` for a name whose meaning cannot be put in words: a word of at
  most two letters, or a run of consonants, that is neither in the lexicon nor a unit (``G``,
  ``e``, ``ofsplit`` is speakable, ``xq`` is not). Questions never ask about such a column;
  unanswerable questions treat it as possibly holding anything (when in doubt, answerable).
- :func:`synonyms` gives a word's synonym group (``height`` ~ ``altitude`` ~ ``elevation``) for
  the unanswerable check.
- :func:`entity_kind` says what kind of thing a table's rows are (a person, a place to live, a
  site such as a store, an address, a product, a transaction, an organisation, an event, a
  creative work, an animal, a vehicle), from the
  words of the table's name first, then of its columns; :data:`WORLD_ATTRIBUTES` lists, per kind,
  attributes such things have in the world (``date of birth`` of a person, ``population`` of a
  place). A table that lacks one of them is asked for it as TrustSQL's column-related kind; the
  same words are real columns of other databases, so no word marks a question unanswerable.

The lexicon is hand-written because no library maps schema abbreviations to words; it holds
general database vocabulary, not one database's columns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

ABBREVIATIONS: dict[str, str] = {
    "abbr": "abbreviation", "acct": "account", "addr": "address", "adj": "adjusted",
    "alt": "altitude", "amt": "amount", "approx": "approximate", "attr": "attribute",
    "avg": "average", "bal": "balance", "bday": "birthday", "bldg": "building",
    "cnt": "count", "cust": "customer",
    "dept": "department", "desc": "description", "dest": "destination",     "div": "division", "dob": "date of birth", "dod": "date of death", "dt": "date",
    "elev": "elevation", "emp": "employee", "est": "estimated",
    "fname": "first name", "freq": "frequency", "gov": "government", "govt": "government",
    "hq": "headquarters", "ht": "height", "id": "ID",
    "ids": "IDs", "img": "image", "info": "information", "init": "initial", "inv": "invoice",
    "lang": "language", "lat": "latitude", "lng": "longitude", "lon": "longitude",
    "lname": "last name", "loc": "location", "max": "maximum", "mfr": "manufacturer",
    "mgr": "manager", "min": "minimum", "misc": "miscellaneous", "mo": "month", "msg": "message",
    "mth": "month", "nbr": "number", "num": "number", "no": "number",
    "nr": "number", "org": "organisation", "pct": "percent", "perc": "percent",     "pos": "position", "pref": "preferred", "prev": "previous", "prod": "product",
    "qty": "quantity", "qtr": "quarter", "ref": "reference",     "rev": "revenue", "sal": "salary", "sched": "scheduled", "sec": "second", "seq": "sequence",
    "src": "source", "std": "standard", "stat": "statistic", "sz": "size",
    "tel": "telephone", "temp": "temperature", "tot": "total", "txn": "transaction",
    "uom": "unit of measure", "usr": "user", "val": "value", "veh": "vehicle", "vol": "volume",
    "wt": "weight", "yr": "year", "yrs": "years", "dep": "departure", "arr": "arrival",
    "url": "URL", "uuid": "UUID", "iso": "ISO", "gdp": "GDP", "vat": "VAT", "sku": "SKU",
    "ssn": "SSN", "gpa": "GPA", "mpg": "miles per gallon", "gnp": "GNP", "zip": "ZIP code", "iata": "IATA code", "icao": "ICAO code", "isbn": "ISBN",
    "ip": "IP address", "os": "operating system", "fk": "foreign key", "pk": "primary key",
}  # fmt: skip
UNITS: dict[str, str] = {
    "kg": "kg", "g": "grams", "lb": "pounds", "lbs": "pounds", "km": "km", "m": "metres",
    "cm": "cm", "mm": "mm", "mi": "miles", "ft": "feet", "usd": "USD", "eur": "EUR",
    "gbp": "GBP", "pct": "percent", "ms": "milliseconds", "s": "seconds", "secs": "seconds",
    "mins": "minutes", "h": "hours", "c": "°C", "f": "°F", "kwh": "kWh", "mph": "mph",
    "kmh": "km/h", "l": "litres", "ml": "ml",
}  # fmt: skip
#: short English words a name may hold as they are
SHORT_WORDS = frozenset(
    "a an as at by do go he in is it me my of on or so to up us we ok tv pc uk us eu un "
    "age art bar bay bed big box boy bus car cup day dog end era eye fan fee few fit fly "
    "fun gap gas gun guy hit hot job key kid law leg lot low man map net new oil old one "
    "own pay pen per pet pin pit pop pot raw red rim row run sea set sex sky son sun tag "
    "tax tea ten tip toe top toy two use van war way web who win yes zoo act add aid air "
    "all and any app arm ask bad bag ban bid bit cab cap cat cut den dry due ear eat egg "
    "fat fix fog for fur god hat her him his how ice ink ion its joy kit lab lap lay let "
    "lid lip log mix mud nut oak odd off out pad pan pie ply ram rat ray rib rod rug sad "
    "saw say see shy sip sit ski sum tab tap tie tin ton tub via vow wet why wig yet zip "
    "pro con dam fin gin hub kin mad rod tan vet".split()
)
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(g.split())
    for g in (
        "height altitude elevation alt elev ht tall",
        "weight mass wt heavy",
        "games matches g gp appearances",
        "price cost amount fee charge",
        "salary pay wage wages earnings income compensation",
        "birthday birthdate dob born birth",
        "population inhabitants residents pop",
        "colour color",
        "name title label",
        "address location addr street",
        "phone telephone tel mobile",
        "email mail",
        "age years old",
        "rating score stars grade",
        "quantity qty",
        "revenue sales turnover income",
        "country nation",
        "city town",
        "company firm business organisation organization employer",
        "nickname alias",
        "gender sex",
        "size dimensions",
        "distance length",
        "composer lyricist songwriter",
        "speed velocity",
        "capacity seats",
        # when a relation began or ended (a ``signup date`` is the ``create_date`` of a customer)
        "start hire hired join joined commencement begin beginning",
        "signup registration register registered creation create created join joined "
        "enrolment enrollment",
        "end leaving termination finish stop exit departure",
    )
)

_NON_WORD = re.compile(r"[\W_]+")
#: camelCase, ALLCAPSWord and letter/digit boundaries, in any script
_CASE = re.compile(
    r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])|(?<=[a-zà-ÿ])(?=[A-ZÀ-Þ])|(?<=[A-ZÀ-Þ])(?=[A-ZÀ-Þ][a-zà-ÿ])"
)
_VOWEL = re.compile(r"[aeiouy]")
_DESCRIPTIONS: dict[str, str] = {}
#: column name -> the words of its one table-qualified description (when only one table has it)
_BY_COLUMN: dict[str, str | None] = {}


def short_description(text: str) -> str | None:
    """The name part of a description: its first clause, lower case, at most eight words
    (``"Scheduled departure time, local (HHMM)"`` -> ``scheduled departure time``)."""
    head = re.split(r"[,;(:]| - ", " ".join(text.split()), maxsplit=1)[0].strip().rstrip(".")
    if not head or len(head.split()) > 8:
        return None
    return head if head.isupper() else head[0].lower() + head[1:]


def set_descriptions(described: Mapping[str, str]) -> None:
    """Use a data dictionary: ``{"table.column" or "column": "words"}`` (later calls add)."""
    for k, v in described.items():
        text = short_description(str(v))
        if text:
            key = k.lower()
            _DESCRIPTIONS[key] = text
            if "." in key:
                col = key.rsplit(".", 1)[1]
                _BY_COLUMN[col] = text if _BY_COLUMN.get(col, text) == text else None
    in_words.cache_clear()
    speakable.cache_clear()


def clear_descriptions() -> None:
    _DESCRIPTIONS.clear()
    _BY_COLUMN.clear()
    in_words.cache_clear()
    speakable.cache_clear()


def description(name: str, table: str | None = None) -> str | None:
    """The data dictionary's words for a column (``table.column`` first, then ``column``, then
    the one table-qualified entry of that column name)."""
    if not _DESCRIPTIONS:
        return None
    if table is not None and f"{table}.{name}".lower() in _DESCRIPTIONS:
        return _DESCRIPTIONS[f"{table}.{name}".lower()]
    return _DESCRIPTIONS.get(name.lower()) or _BY_COLUMN.get(name.lower())


def split_name(name: str) -> list[str]:
    """``birthCity`` -> ``[birth, city]``; ``HR_2019`` -> ``[hr, 2019]``; letters of any script
    (``flughäfen`` stays one word)."""
    out: list[str] = []
    for token in _NON_WORD.split(name):
        for part in _CASE.split(token):
            if part:
                out.append(part.lower())
    return out or [name.lower()]


#: type prefixes of table and view names (``tblOrders``, ``ztblDays``, ``vw_sales``)
TABLE_PREFIXES = frozenset({"tbl", "ztbl", "tb", "vw", "tbl_", "dim", "fact"})


#: a name that is only a unit says what it measures in (``Milliseconds`` of a track)
UNIT_NAMES = {
    "milliseconds": "length in milliseconds", "seconds": "duration in seconds",
    "minutes": "duration in minutes", "hours": "duration in hours", "bytes": "size in bytes",
    "kilobytes": "size in kilobytes", "megabytes": "size in megabytes",
}  # fmt: skip


@lru_cache(maxsize=16384)
def in_words(name: str, table: str | None = None) -> str:
    """The name as a user would say it (see the module docstring)."""
    described = description(name, table)
    if described is not None:
        return described
    parts = split_name(name)
    if len(parts) == 1 and parts[0] in UNIT_NAMES:
        return UNIT_NAMES[parts[0]]
    if len(parts) > 1 and parts[0] in TABLE_PREFIXES:
        parts = parts[1:]
    parts = _span_bound(parts)
    out: list[str] = []
    for i, w in enumerate(parts):
        if i == len(parts) - 1 and i > 0 and w in UNITS and w not in ABBREVIATIONS:
            out.append(f"in {UNITS[w]}")
        elif w in ("no", "nr", "num") and i == 0 and len(parts) > 1:
            out.append("number of")  # ``num_items`` -> number of items
        elif w in ABBREVIATIONS:
            out.append(ABBREVIATIONS[w])
        else:
            out.append(w)
    return " ".join(out) or name


#: the last word of a name that makes one end of a span (``date_from``, ``date_assigned_to``)
SPAN_ENDS = {"from": "start", "since": "start", "to": "end", "until": "end", "till": "end"}
#: the words a span's end is a point of
_SPAN_HEADS = ("date", "time", "day", "year", "month", "datetime", "timestamp")


def _span_bound(parts: list[str]) -> list[str]:
    """A name whose last word is a span's end and which names a point in time, said as that
    end's noun: ``date_from`` -> ``start date``, ``date_assigned_to`` -> ``assigned end date``
    (never "the dates to of the addresses"). Without a word for a point in time the name is
    left alone (``bill_to`` is an address)."""
    if len(parts) < 2 or parts[-1] not in SPAN_ENDS:
        return parts
    heads = [w for w in parts[:-1] if w in _SPAN_HEADS or ABBREVIATIONS.get(w) == "date"]
    if not heads:
        return parts
    head = "date" if ABBREVIATIONS.get(heads[-1]) == "date" else heads[-1]
    rest = [w for w in parts[:-1] if w != heads[-1]]
    return [*rest, SPAN_ENDS[parts[-1]], head]


#: month and day names (word lists hold them capitalised, so their lower case counts are low)
CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
#: the language questions are written in, and languages whose words a schema may use instead
#: (word lists shipped with ``pyspellchecker``, with each word's frequency in running text)
QUESTION_LANGUAGE = "en"
OTHER_LANGUAGES = ("de", "es", "fr", "it", "pt", "nl")
#: a word at least this frequent in the question language's list is a word of it
COMMON_COUNT = 500
#: below this it is no word of it (a typo, a name, a foreign word that leaked into the list)
RARE_COUNT = 20
#: between the two, a word this many times more frequent (relative to each list's size) in
#: another language is that language's word (``ort``, ``tod``, ``datum``)
FOREIGN_RATIO = 10.0


@lru_cache(maxsize=8)
def _word_counts(lang: str) -> Any:
    from spellchecker import SpellChecker  # (loaded on first use)

    return SpellChecker(language=lang, distance=1).word_frequency


def _count(lang: str, w: str) -> int:
    wf = _word_counts(lang)
    return int(wf[w]) if w in wf else 0


def _rel(lang: str, w: str) -> float:
    return _count(lang, w) / max(1, _word_counts(lang).total_words)


@lru_cache(maxsize=65536)
def language_word(w: str) -> bool:
    """Whether ``w`` (lower case, letters) is a word of :data:`QUESTION_LANGUAGE`: common in its
    word list (``genre``, ``playlist`` as ``play`` + ``list``), or present and not many times
    more frequent in another language's list. ``hauptfach``, ``lebenserwartung``, ``gehalt``,
    ``ofsplit`` are not. Plurals count as their singular (``genres``)."""
    if w in CALENDAR_WORDS or _known(w):
        return True
    bare = _unaccented(w)  # (``région`` is a region; ``länder`` is German, not ``lander``)
    if bare != w and _count(QUESTION_LANGUAGE, bare) >= COMPOUND_COUNT:  # a common word
        own = _rel(QUESTION_LANGUAGE, bare)
        return all(_rel(lang, w) <= FOREIGN_RATIO * own for lang in OTHER_LANGUAGES)
    from clarisql.envs.synth.phrasing import singular

    one = singular(w)
    if one != w and _known(one):
        return True
    return _compound(w)


def _unaccented(w: str) -> str:
    import unicodedata

    if w.isascii():
        return w
    return "".join(ch for ch in unicodedata.normalize("NFKD", w) if not unicodedata.combining(ch))


def _known(w: str, common_only: bool = False) -> bool:
    n = _count(QUESTION_LANGUAGE, w)
    if n >= COMMON_COUNT:
        return True
    if common_only or n < RARE_COUNT:
        return False
    own = _rel(QUESTION_LANGUAGE, w)
    return all(_rel(lang, w) <= FOREIGN_RATIO * own for lang in OTHER_LANGUAGES)


#: a part of a compound must be at least this frequent (``hers`` + ``teller`` is no reading
#: of ``hersteller``, which another language's list holds anyway)
COMPOUND_COUNT = 2000


def _compound(w: str, depth: int = 0) -> bool:
    """Two or three common words written together (``playlist``, ``hoteldetails``,
    ``yearid``): each part of at least four letters (or a lexicon abbreviation at the end),
    and the whole no word of another language (``hersteller``)."""
    if depth > 2 or len(w) < 6:
        return False
    if depth == 0 and any(_count(lang, w) >= RARE_COUNT for lang in OTHER_LANGUAGES):
        return False
    for i in range(4, len(w) - 1):
        head, rest = w[:i], w[i:]
        if _count(QUESTION_LANGUAGE, head) < COMPOUND_COUNT:
            continue
        if rest in ABBREVIATIONS or (
            len(rest) >= 4 and _count(QUESTION_LANGUAGE, rest) >= COMPOUND_COUNT
        ):
            return True
        if _compound(rest, depth + 1):
            return True
    return False


_LATIN = re.compile(r"^[a-zà-öø-ÿß]+$")


@lru_cache(maxsize=16384)
def speakable(name: str, table: str | None = None) -> bool:
    """Whether the name can be put in words (see the module docstring)."""
    if description(name, table) is not None:
        return True
    parts = split_name(name)
    for i, w in enumerate(parts):
        if w.isdigit() or w in ABBREVIATIONS or w in SHORT_WORDS:
            continue
        if not _LATIN.match(w):
            continue  # (a word in another script, 学生, is not judged by a Latin word list)
        if i > 0 and w in UNITS:
            continue
        if len(w) <= 2 or not _VOWEL.search(w):
            return False
        if not language_word(w):  # a word of another language (``hauptfach``) or none
            return False
    return True


@lru_cache(maxsize=4096)
def table_speakable(name: str) -> bool:
    """Whether a table's name can be put in words (:func:`speakable`, its type prefix left
    out: ``tblEmployees`` is, ``adressen`` and ``kurse`` are not)."""
    if description(name) is not None:
        return True
    parts = split_name(name)
    if len(parts) > 1 and parts[0] in TABLE_PREFIXES:
        parts = parts[1:]
    # the words of the name decide; a letter or number beside them (``shop "x" sales``) does not
    ws = [w for w in parts if len(w) >= 3 and w.isalpha()]
    if not ws:
        return speakable("_".join(parts))
    return all(w in ABBREVIATIONS or not _LATIN.match(w) or language_word(w) for w in ws)


def table_prefixed(columns: Mapping[str, list[str]]) -> dict[str, str]:
    """Column names that repeat their table's name as a short prefix, in words without it:
    ``Entertainers.EntStageName`` -> ``stage name``, ``Members.MbrLastName`` -> ``last name``
    (a prefix of 2-5 letters that starts the table's first word, or its consonants). Returns
    ``{"table.column": words}`` for :func:`set_descriptions`."""
    out = {}
    for table, cols in columns.items():
        tw = [w for w in split_name(table) if w not in TABLE_PREFIXES]
        if not tw:
            continue
        head = tw[0]
        # consonants, repeats merged: ``members`` -> ``mbrs`` (``Mbr...``)
        skeleton = re.sub(r"(.)\1+", r"\1", head[0] + re.sub(r"[aeiou]", "", head[1:]))
        single = head[:-1] if head.endswith("s") else head
        for col in cols:
            parts = split_name(col)
            p = parts[0]
            # a short form only: ``MonthYear`` of ``Months`` is "month and year", not "year"
            if len(parts) < 2 or not 2 <= len(p) <= 5 or p in (head, single):
                continue
            if head.startswith(p) or skeleton.startswith(p):
                rest = in_words("_".join(parts[1:]))
                if rest and rest not in ("id", "ID"):
                    out[f"{table}.{col}"] = rest
    return out


#: kind of entity -> words that name such entities in a table name (singular, lower case)
ENTITY_CUES: dict[str, frozenset[str]] = {
    kind: frozenset(words.split())
    for kind, words in (
        ("person", "person people customer client employee staff actor artist author singer "
         "player student member user patient teacher instructor driver manager owner guest "
         "passenger pilot doctor physician nurse musician composer director writer host "
         "buyer seller vendor contact worker volunteer coach referee candidate voter "
         "professor faculty resident tenant visitor traveller traveler agent entertainer "
         "friend representative rep captain athlete swimmer gymnast poker conductor"),
        ("place", "city country region state town district neighbourhood neighborhood "
         "province county village suburb continent nation"),
        ("site", "store shop branch venue stadium hotel building room apartment property park "
         "campus warehouse office museum airport station restaurant theatre theater library "
         "gym clinic"),
        ("address", "address location place"),
        ("organisation", "company department team club school college university firm "
         "organisation organization agency institution bank supplier manufacturer publisher "
         "label studio hospital church party league division unit band orchestra"),
        ("product", "product item part good merchandise wine beer dish food drink ingredient "
         "device phone computer toy furniture equipment asset tool"),
        ("work", "track song album film movie book playlist show episode game painting artwork "
         "photo video course lesson program programme article paper recording "
         "podcast"),
        ("transaction", "invoice order payment rental sale purchase transaction booking "
         "reservation subscription contract loan claim shipment delivery refund bill receipt "
         "ticket transcript enrolment enrollment registration appointment visit"),
        ("event", "event concert match performance festival meeting conference race "
         "competition tournament flight trip journey session class exam election "
         "engagement treatment procedure"),
        ("animal", "dog cat pet animal horse bird breed"),
        ("vehicle", "car vehicle truck bus bike bicycle aircraft airplane plane ship boat "
         "train model make"),
    )
}  # fmt: skip

#: kind -> attributes such entities have in the world (TrustSQL's column-related kind asks a
#: table of that kind for one it lacks; many are real columns of other databases)
WORLD_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "person": ("date of birth", "gender", "nationality", "phone number", "email address",
               "middle name", "nickname", "home address", "job title", "salary", "height",
               "marital status", "preferred language", "place of birth", "hire date",
               "emergency contact", "website", "maiden name", "mobile number",
               "passport number", "membership number", "loyalty points", "preferred name",
               "start date", "leaving date", "employee number", "signup date",
               "last visit date"),
    "place": ("population", "time zone", "area in square kilometres", "elevation",
              "postal code", "year founded", "average rainfall", "latitude",
              "official language", "dialling code", "area code", "local name"),
    "site": ("opening time", "phone number", "floor area", "number of floors", "year built",
             "manager", "capacity", "website", "number of parking spaces", "wheelchair access",
             "email address", "opening date", "closing time", "manager name", "site code"),
    "address": ("postal code", "latitude", "longitude", "time zone", "floor number",
                "delivery note", "country code", "building name", "apartment number"),
    "organisation": ("year founded", "number of employees", "headquarters address",
                     "website", "phone number", "budget", "annual revenue", "founder",
                     "motto", "email address", "stock ticker", "founding date",
                     "registration number", "tax number", "trading name"),
    "product": ("weight", "colour", "size", "release date", "manufacturer", "customer rating",
                "warranty period", "country of origin", "barcode", "shelf life",
                "list price", "discontinued date", "supplier", "model number",
                "serial number", "brand name", "launch date", "expiry date"),
    "work": ("release date", "language", "rating", "number of reviews", "copyright holder",
             "award count", "original title", "release year", "running time",
             "publication date", "catalogue number"),
    "transaction": ("payment method", "discount", "tax amount", "shipping cost", "currency",
                    "due date", "delivery date", "sales channel", "coupon code",
                    "approval date", "cancellation reason", "tracking number",
                    "refund amount", "shipping date", "refund date",
                    "discount code", "tax rate"),
    "event": ("start time", "end time", "attendance", "ticket price", "organiser", "sponsor",
              "duration", "weather", "dress code", "capacity", "broadcaster", "booking date",
              "cancellation date", "venue name", "end date"),
    "animal": ("breed", "weight", "date of birth", "colour", "vaccination date",
               "microchip number", "owner", "gender", "height"),
    "vehicle": ("colour", "mileage", "fuel type", "number of seats", "top speed",
                "licence plate", "engine size", "year built", "weight", "price"),
    "thing": ("description", "status", "owner", "creation date", "colour", "size",
              "priority", "notes", "location", "rating"),
}  # fmt: skip


def _singular_word(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


#: cue word -> attributes only that kind of entity has in the world (used instead of its
#: kind's :data:`WORLD_ATTRIBUTES` where the kind is too broad: a track has no ISBN, a country
#: no mayor, a course no running time)
CUE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "city": ("population", "mayor", "time zone", "elevation", "average rainfall",
             "area in square kilometres", "year founded", "dialling code", "twin town",
             "area code", "local name"),
    "town": ("population", "mayor", "time zone", "elevation", "year founded", "twin town"),
    "country": ("population", "head of state", "national anthem", "time zone",
                "official language", "dialling code", "area in square kilometres",
                "national dish", "independence day", "capital city", "currency code",
                "official name"),
    "track": ("release date", "lyricist", "tempo", "number of plays", "music video link",
              "chart position", "copyright holder", "key signature", "release year",
              "track number", "disc number"),
    "song": ("release date", "lyricist", "tempo", "number of plays", "music video link",
             "chart position", "copyright holder", "key signature", "release year",
             "track number"),
    "album": ("release date", "record label", "producer", "cover artist", "chart position",
              "number of plays", "copyright holder", "release year", "catalogue number",
              "number of discs"),
    "playlist": ("number of followers", "creator", "cover image", "last played date",
                 "description", "creation date", "owner name"),
    "film": ("release date", "budget", "box office takings", "original language",
             "filming location", "age rating", "number of reviews", "copyright holder",
             "original title", "director"),
    "movie": ("release date", "budget", "box office takings", "original language",
              "filming location", "age rating", "number of reviews", "copyright holder",
              "original title", "director"),
    "book": ("publisher", "isbn", "number of pages", "original language", "translator",
             "release date", "copyright holder", "number of reviews"),
    "course": ("syllabus", "teaching language", "number of places", "classroom",
               "reading list", "exam date", "workload in hours"),
    "class": ("syllabus", "teaching language", "classroom", "reading list", "exam date"),
    "game": ("release date", "publisher", "age rating", "number of players", "platform"),
    "appointment": ("reason for the visit", "room number", "reminder date",
                    "cancellation reason", "booking channel"),
    "visit": ("reason for the visit", "duration", "number of companions", "booking channel"),
    "transcript": ("issue date", "delivery method", "number of pages", "signatory"),
    "enrolment": ("enrolment fee", "approval date", "payment method", "cancellation reason"),
    "enrollment": ("enrollment fee", "approval date", "payment method", "cancellation reason"),
    "registration": ("registration fee", "approval date", "payment method",
                     "cancellation reason"),
    "booking": ("payment method", "deposit amount", "cancellation reason", "special request",
                "booking channel"),
    "reservation": ("payment method", "deposit amount", "cancellation reason",
                    "special request", "booking channel"),
    "ticket": ("seat number", "payment method", "discount", "booking channel"),
    # a line of an invoice or order as much as a thing on a shelf
    "item": ("discount", "tax rate", "gift message", "return reason", "refund date",
             "serial number", "discount amount"),
}  # fmt: skip

#: kind -> attributes such entities have in the world that hardly any database records
#: (TrustSQL's column-unrelated kind: a plausible question about the entity, unrelated to
#: every column the schema has)
PERSONAL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "person": ("favourite colour", "shoe size", "blood type", "star sign", "favourite food",
               "main hobby", "pet's name", "eye colour", "mother's maiden name"),
    "place": ("local football team", "best-known landmark", "average summer temperature",
              "crime rate", "main religion"),
    "site": ("wifi password", "architect", "noise level", "nearest bus stop", "dress code"),
    "address": ("nearest bus stop", "door colour", "noise level", "broadband speed"),
    "organisation": ("logo colour", "motto", "charity partner", "office dress code",
                     "carbon footprint"),
    "product": ("carbon footprint", "recycling symbol", "user manual link",
                "energy rating", "gift wrapping option"),
    "work": ("theme", "soundtrack", "fan rating", "trivia", "sequel"),
    "transaction": ("gift message", "reason for the purchase", "name of the cashier"),
    "event": ("weather", "dress code", "theme", "number of volunteers", "catering company"),
    "animal": ("favourite toy", "favourite treat", "temperament", "microchip number"),
    "vehicle": ("insurance company", "number of previous owners", "paint code",
                "tyre brand"),
    "thing": (),
}  # fmt: skip


#: cue word -> what such an entity plausibly has that hardly any database records, for the cues
#: of :data:`CUE_ATTRIBUTES` whose kind's :data:`PERSONAL_ATTRIBUTES` do not all fit (a book has
#: no soundtrack, a song no sequel, an appointment no gift message); a cue not listed takes its
#: kind's whole list
CUE_PERSONAL: dict[str, tuple[str, ...]] = {
    "track": ("fan rating", "trivia", "theme"), "song": ("fan rating", "trivia", "theme"),
    "album": ("fan rating", "trivia", "theme"), "playlist": ("theme", "fan rating"),
    "book": ("sequel", "trivia", "fan rating", "theme"), "course": (), "class": (),
    "appointment": (), "visit": (), "transcript": (), "enrolment": (), "enrollment": (),
    "registration": (), "booking": ("reason for the trip",),
    "reservation": ("reason for the trip",), "ticket": ("reason for the trip",),
    "item": ("gift message", "reason for the purchase"),
}  # fmt: skip


def entity_cue(table: str, columns: tuple[str, ...] | list[str] = ()) -> tuple[str, str | None]:
    """``(kind, cue)``: :func:`entity_kind` and the word of the table's name that told it
    (``department_stores`` -> ``("site", "store")``), ``None`` when the columns told it."""
    ws = [_singular_word(w) for w in split_name(table) if w not in TABLE_PREFIXES]
    for w in reversed(ws):
        for kind, cues in ENTITY_CUES.items():
            if w in cues:
                return kind, w
    return entity_kind(table, columns), None


#: what only a person who works somewhere has, and the words that say one does
EMPLOYMENT_ATTRIBUTES = frozenset(
    {"job title", "salary", "hire date", "emergency contact", "start date", "leaving date",
     "employee number"}
)  # fmt: skip
WORKER_CUES = frozenset(
    "employee staff worker manager teacher instructor nurse doctor physician pilot driver agent "
    "representative rep coach referee professor faculty conductor captain".split()
)
#: what only a patron of a business has, and the words that say one is
PATRON_ATTRIBUTES = frozenset(
    {"membership number", "loyalty points", "signup date", "last visit date"}
)
PATRON_CUES = frozenset(
    "customer client member guest user buyer passenger patient visitor tenant resident".split()
)


def attributes_of(kind: str, cue: str | None = None) -> tuple[str, ...]:
    """Attributes an entity of ``kind`` (told by the word ``cue``) has in the world: the cue's
    own list (:data:`CUE_ATTRIBUTES`) where the kind is too broad, else the kind's
    (:data:`WORLD_ATTRIBUTES`); a person's job (:data:`EMPLOYMENT_ATTRIBUTES`) only for the
    words of :data:`WORKER_CUES` and a membership (:data:`PATRON_ATTRIBUTES`) only for those of
    :data:`PATRON_CUES` (no ``hire date`` of a customer)."""
    if cue is not None and cue in CUE_ATTRIBUTES:
        return CUE_ATTRIBUTES[cue]
    out = WORLD_ATTRIBUTES.get(kind, ())
    if kind == "person":
        c = _singular_word(cue) if cue else ""
        out = tuple(
            a
            for a in out
            if (a not in EMPLOYMENT_ATTRIBUTES or c in WORKER_CUES)
            and (a not in PATRON_ATTRIBUTES or c in PATRON_CUES)
        )
    return out


def entity_kind(table: str, columns: tuple[str, ...] | list[str] = ()) -> str:
    """What kind of thing a row of ``table`` is (a key of :data:`WORLD_ATTRIBUTES`): the last
    word of the table's name that is a cue wins (``invoice_items`` -> its ``item`` is a
    product... ``customer_payments`` -> ``transaction``), then the table's name-like columns
    (``first_name`` -> ``person``), else ``thing``."""
    ws = [_singular_word(w) for w in split_name(table) if w not in TABLE_PREFIXES]
    for w in reversed(ws):
        for kind, cues in ENTITY_CUES.items():
            if w in cues:
                return kind
    names = " ".join(columns).lower()
    if re.search(r"first_?name|last_?name|birth|gender|surname", names):
        return "person"
    if re.search(r"latitude|longitude|population", names):
        return "place"
    return "thing"


def synonyms(word: str) -> frozenset[str]:
    """The word's synonym group (the word alone when it has none)."""
    w = word.lower()
    out = {w}
    for g in SYNONYM_GROUPS:
        if w in g or w.rstrip("s") in g:
            out |= g
    return frozenset(out)


__all__ = [
    "ABBREVIATIONS",
    "UNITS",
    "CUE_ATTRIBUTES",
    "CUE_PERSONAL",
    "ENTITY_CUES",
    "PERSONAL_ATTRIBUTES",
    "WORLD_ATTRIBUTES",
    "attributes_of",
    "entity_cue",
    "entity_kind",
    "language_word",
    "short_description",
    "table_prefixed",
    "clear_descriptions",
    "description",
    "in_words",
    "set_descriptions",
    "speakable",
    "split_name",
    "table_speakable",
    "synonyms",
]
