"""The aspects a clarification question can point at: the schema's slots, not the gold labels.

An *aspect* is what a question asks about: ``intent`` (what to return), a scope slot (``city``,
``district``, ``year``: which table) or a condition slot (``enterprise``, ``project``: which
entity). "Full name" is no aspect: it asks about a named span, not a slot. Each has English and Chinese cue words (lexical evidence) and prototype questions
(embedding evidence). The catalog is the same for every task, so detecting an aspect in a
question says nothing about the task's gold labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Aspect:
    name: str
    cues: re.Pattern[str]
    prototypes: tuple[str, ...]


def _cue(english: str, chinese: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{english})\b|{chinese}", re.I)


ASPECTS: tuple[Aspect, ...] = (
    Aspect(
        "intent",
        _cue(
            r"what (?:exactly |specifically )?(?:do|would) you (?:want|like|need)(?: to (?:know|see|get))?"
            r"|which (?:figure|measure|metric|number|value|statistic|statistics|information|detail|details|aspect|"
            r"indicator|quantity|column|field|attribute|kind of (?:result|answer|information))"
            r"|what (?:information|figure|measure|metric|detail|details|aspect|indicator|quantity|kind of|sort of|"
            r"should i (?:return|report|show|compute))|what (?:do you want|would you like) (?:me )?to (?:return|report|show|compute)"
            r"|want to know|looking for|interested in|which result|what result"
            r"|what (?:number|numbers|statistic|statistics|amount|total)\b"
            r"|what (?:exactly |specifically )?should i (?:return|report|show|compute|calculate|give)"
            r"|(?:count|sum|total|average|mean|maximum|minimum|biggest|smallest|largest|highest|lowest)"
            r"\b[^?.!]{0,60}\bor\b[^?.!]{0,30}\b(?:count|sum|total|average|mean|maximum|minimum|"
            r"biggest|smallest|largest|highest|lowest)"
            r"|(?:do|would) you (?:want|need|like) (?:a|an|the) (?:count|total|sum|average|mean|maximum|minimum|number|list)"
            r"|(?:that|what) you want (?:reported|returned|shown|computed|calculated|counted)",
            r"想知道|想了解|想要|想查|哪个指标|什么指标|哪项|哪一项|哪方面|哪个方面|什么方面|具体想|什么信息|哪些信息"
            r"|什么数据|哪个数据|关注|需要什么|查询什么|问的是",
        ),
        (
            "What exactly do you want to know?",
            "Which figure should I report?",
            "What information are you looking for?",
            "Which measure do you mean?",
            "Should I return a total, an average or a count?",
            "What should the result show?",
            "你具体想了解哪方面的信息？",
            "你想知道哪个指标？",
        ),
    ),
    Aspect(
        "city",
        _cue(
            r"city|cities|town|municipality",
            r"城市|哪个市|哪座城|什么市|哪一个市|哪个地级市|市名|(?<![城超门股])市(?![场值])",
        ),
        ("Which city do you mean?", "In which city?", "请问是哪个城市？"),
    ),
    Aspect(
        "district",
        _cue(
            r"district|districts|borough|neighbou?rhood|county|suburb|quarter",
            r"区域|哪个区|什么区|哪一个区|区县|哪个县|片区|城区|行政区|(?<![社小园景])区",
        ),
        ("Which district do you mean?", "In which part of the city?", "请问是哪个区？"),
    ),
    Aspect(
        "year",
        _cue(
            r"year|years|yearly|annual|fiscal|which period|what period|time period|time frame|timeframe",
            r"年份|哪一年|哪年|年度|什么时候|哪个时间|时间段|(?<![青少])年(?![龄轻])",
        ),
        ("Which year do you mean?", "For what time period?", "请问是哪一年？"),
    ),
    Aspect(
        "enterprise",
        _cue(
            r"company|companies|enterprise|enterprises|firm|corporation|business",
            r"企业|公司|集团",
        ),
        ("Which company do you mean?", "What is the company's full name?", "请问企业全称是什么？"),
    ),
    Aspect(
        "project",
        _cue(
            r"project|projects|development|estate|compound|residential complex|housing complex|community|property name",
            r"项目|小区|楼盘|社区|地块名",
        ),
        (
            "Which project do you mean?",
            "What is the full name of the development?",
            "请问小区全称是什么？",
        ),
    ),
)
ASPECT_NAMES: tuple[str, ...] = tuple(a.name for a in ASPECTS)
