"""The offline, model-free instruction-following user (DySQL-Bench's user without an LLM).

:func:`extract_facts` reads a DySQL-style instruction ("You are Lucas Mancini, CustomerID 47. On
your InvoiceID 86 ... You request to swap ...") into :class:`InstructionFacts`: its sentences in
the first person, split into *identity* sentences (who the user is: name, e-mail, account ids)
and *request* sentences (context and the requested change), plus the names, e-mails, ids and
values they mention.

:class:`OfflineUser` plays the user from those facts, deterministically:
- opening message: the request sentences only (identity is held back until the agent asks, as
  DySQL-Bench's agent policy makes the agent authenticate the user first);
- asked who they are / to authenticate / for a name, e-mail or id: the identity facts asked for
  (or all of them); a detail the instruction lacks gets "I don't have that" - never a made-up
  value;
- asked to confirm a planned action: "Yes, please go ahead.";
- told the work is done: ``###STOP###`` (from the agent's words alone, as DySQL-Bench's user
  judges it; the offline user never looks at the database, so it stops after a wrong write that
  the agent declares done and does not stop after a right one that the agent does not);
- any other question: the instruction sentences that share the most content words with it, or
  "I don't have that information" when none does.

The rules are heuristics over English text; they are written by hand because no library maps an
agent's free-form question to a fixed instruction (a retrieval library such as bm25s needs a
corpus with meaningful term statistics, and one instruction is 2-8 sentences).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.simulators.base import STOP_TOKEN

# --- sentence splitting and first-person rewriting ---------------------------------------------
_ABBREV = re.compile(
    r"(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|No|Nr|vs|etc|e\.g|i\.e|approx|Inc|Ltd|Co|Jr|Sr)\.$"
)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[#$])")


def split_sentences(text: str) -> list[str]:
    """Split English text into sentences (periods inside numbers, e-mails and ids stay)."""
    parts: list[str] = []
    for piece in _SPLIT.split(" ".join(text.split())):
        if parts and _ABBREV.search(parts[-1]):
            parts[-1] += " " + piece
        elif piece:
            parts.append(piece)
    return [p.strip() for p in parts if p.strip()]


_OBJECT_AFTER = (
    r"(?:to|for|with|help|let|tell|give|ask|from|inform|notify|contact|remind|send|show|"
    r"thank|assist|call|email|e-mail|provide|by|than|at|about|of)"
)
_FIRST_PERSON: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bYou are\b"), "I am"),
    (re.compile(r"\byou are\b"), "I am"),
    (re.compile(r"\bYou're\b"), "I'm"),
    (re.compile(r"\byou're\b"), "I'm"),
    (re.compile(r"\bYou've\b"), "I've"),
    (re.compile(r"\byou've\b"), "I've"),
    (re.compile(r"\bYou'd\b"), "I'd"),
    (re.compile(r"\byou'd\b"), "I'd"),
    (re.compile(r"\byou'll\b", re.I), "I'll"),
    (re.compile(r"\byou were\b"), "I was"),
    (re.compile(r"\bYou were\b"), "I was"),
    (re.compile(r"\byourself\b", re.I), "myself"),
    (re.compile(r"\byours\b", re.I), "mine"),
    (re.compile(r"\bYour\b"), "My"),
    (re.compile(r"\byour\b"), "my"),
    (re.compile(rf"(\b{_OBJECT_AFTER}\s+)you\b", re.I), r"\1me"),
    (re.compile(r"\b[Yy]ou\b"), "I"),
]


def first_person(sentence: str) -> str:
    """Rewrite a second-person instruction sentence ("You are X ... your invoice") as the user."""
    out = sentence
    for pat, rep in _FIRST_PERSON:
        out = pat.sub(rep, out)
    return out


# --- fact extraction ----------------------------------------------------------------------------
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ID = re.compile(
    r"\b(?P<label>[A-Za-z]+?)[ _]?(?:ID|Id|id)\b\s*(?:number\s*)?(?:is\s+|[:#=]\s*)?(?P<num>\d+)"
)
_HASH_ID = re.compile(r"\b(?P<label>[A-Za-z]+)\s*#\s*(?P<num>\d+)")
_NAME_WORD = r"(?:[A-Z][\w'’.-]*|&)"
_NAME = re.compile(
    rf"(?:\bI am|\bI'm|\bname is|\bauthenticate me as|\bverify me as|\bidentify me as|^As)\s+"
    rf"(?P<name>{_NAME_WORD}(?:\s+(?:{_NAME_WORD}|(?:the|der|dos|de|da|do|van|von|of|la|le)\b))*)"
)
_QUOTED = re.compile(r"(?<![\w])'([^']+?)'(?![\w])|\"([^\"]+?)\"")
_NUMBER = re.compile(r"(?<![\w.])\$?\d+(?:[.,]\d+)*(?![\w])")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\b")

# Identity: who the user is (the details an agent must check before acting).
_ACCOUNT_ID = re.compile(
    r"\b(?:customer|user|member|entertainer|account|client)"
    r"[ _]?(?:id|number)\b",
    re.I,
)
_AUTH = re.compile(
    r"\b(?:[Aa]uthenticat\w*|[Vv]erif(?:y|ication)(?! that| whether| if| the )|[Ii]dentify|"
    r"[Ii]dentity)\b"
)
_PERSONAL = re.compile(
    r"\bmy (?:ssn|social security|phone|telephone|date of birth|birth ?date|username)\b", re.I
)
_REQUEST_VERB = re.compile(
    r"\b(?:update|updating|change|set|add|remove|delete|insert|cancel|book|assign|refund|modify|"
    r"swap|replace|move|mark|correct|create|register|record|increase|decrease|reduce|raise|"
    r"transfer|deactivate|activate|reactivate|void|dispute|disputing|issue|notify|append|apply|"
    r"adjust|edit|reassign|upgrade|downgrade|rename|return|exchange|schedule|reschedule|extend|"
    r"fix|put|promote|demote|revise|restore|reverse|suspend|process|perform|credit|charge|"
    r"rebook|link|enroll|want|wish|need|"
    r"request|like|would|please|ensure|make|give|provide|show|tell|list|inform|confirm|check|"
    r"look|find)\b",
    re.I,
)
# Verbs that also occur in pure identity sentences ("please verify me, I would like ...").
_WEAK_VERBS = frozenset({"please", "want", "would", "like", "need", "check", "confirm", "request"})
_LEADING_IDENTITY = re.compile(
    r"^(?P<ident>(?:(?:hello|hi|hey)[,!]?\s+)?(?:I am|I'm|my name is)\s+[^;]*?"
    r"(?:\([^)]*\))?)\s*(?:,\s*(?:and\s+)?|\s+and\s+)(?P<rest>(?:I\b|I'|please\b|my\b).*)$",
    re.I,
)
# "As Karen Smith (AgentID: 4), I request ..." / "As the manager of X (EntertainerID 1), add ..."
_LEADING_AS = re.compile(r"^As\s+(?P<who>[^,]+?(?:\([^)]*\))?),\s*(?P<rest>.+)$")
_SELF_INTRO = re.compile(r"^(?:(?:hello|hi|hey)[,!]?\s+)?(?:I am|I'm)\b", re.I)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|I'm|I've|I'd|my|me|mine|myself)\b")
_SECOND_PERSON_WORD = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)


def _identityish(s: str) -> bool:
    return bool(
        _NAME.search(s)
        or _EMAIL.search(s)
        or _ACCOUNT_ID.search(s)
        or _AUTH.search(s)
        or _PERSONAL.search(s)
        or _SELF_INTRO.search(s)
    )


def _verbs(s: str) -> set[str]:
    """Request verbs of ``s``, names ("Mark Taylor"), e-mails, identity words and quoted values
    ("Book Of Thel" names a track, it asks for nothing) left out."""
    body = _NAME.sub(" ", _QUOTED.sub(" ", s))
    body = _EMAIL.sub(" ", _AUTH.sub(" ", body))
    return {v.lower() for v in _REQUEST_VERB.findall(body)}


def _strong_verbs(s: str) -> set[str]:
    return _verbs(s) - _WEAK_VERBS


def _has_request(rest: str) -> bool:
    """Whether the clause after a self-introduction says something besides identity."""
    if _verbs(rest):
        return True
    return bool((_ids_in(rest) or _QUOTED.search(rest)) and not _EMAIL.search(rest))


def _second_person(instruction: str) -> bool:
    """Whether the instruction addresses the user ("You are X ... your invoice")."""
    if re.match(r"\s*You\b", instruction):
        return True
    return len(_SECOND_PERSON_WORD.findall(instruction)) > len(
        _FIRST_PERSON_WORD.findall(instruction)
    )


@dataclass
class InstructionFacts:
    """What an instruction says, as the user would say it (first person)."""

    instruction: str
    sentences: list[str] = field(default_factory=list)
    identity: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    ids: dict[str, list[str]] = field(default_factory=dict)
    values: list[str] = field(default_factory=list)

    @property
    def identity_ids(self) -> dict[str, list[str]]:
        """Ids mentioned in the identity sentences (the user's own account ids)."""
        out: dict[str, list[str]] = {}
        for s in self.identity:
            for k, v in _ids_in(s):
                out.setdefault(k, [])
                if v not in out[k]:
                    out[k].append(v)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentences": self.sentences,
            "identity": self.identity,
            "requests": self.requests,
            "names": self.names,
            "emails": self.emails,
            "ids": self.ids,
            "values": self.values,
        }


_NOT_LABELS = frozenset(
    "with the my your an a of and for its their his her our this that new old by to in on".split()
)


def _ids_in(text: str) -> list[tuple[str, str]]:
    """``(label + "id", number)`` pairs: ``CustomerID 47`` -> ``("customerid", "47")``."""
    out = []
    for m in (*_ID.finditer(text), *_HASH_ID.finditer(text)):
        label = m.group("label").lower()
        out.append(("id" if label in _NOT_LABELS else label + "id", m.group("num")))
    return out


def _uniq(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def extract_facts(instruction: str) -> InstructionFacts:
    """Read an instruction into :class:`InstructionFacts` (pure, deterministic)."""
    facts = InstructionFacts(instruction=instruction or "")
    raw_sentences = split_sentences(instruction or "")
    # Rewrite into the first person only when the instruction addresses the user ("You are X,
    # your invoice ..."); in a first-person instruction "your" means the agent's.
    second_person = _second_person(instruction or "")
    for raw in raw_sentences:
        s = first_person(raw) if second_person else raw
        facts.sentences.append(s)
        m_as = _LEADING_AS.match(s)
        if m_as and _identityish(s[: m_as.end("who")]) and _has_request(m_as.group("rest")):
            facts.identity.append(f"I am {m_as.group('who')}.")
            rest = m_as.group("rest")
            facts.requests.append(rest[0].upper() + rest[1:])
            continue
        if not _identityish(s):
            facts.requests.append(s)
            continue
        m = _LEADING_IDENTITY.match(s)
        if m and _has_request(m.group("rest")) and not _strong_verbs(m.group("ident")):
            facts.identity.append(m.group("ident").rstrip(" ,") + ".")
            rest = m.group("rest")
            facts.requests.append(rest[0].upper() + rest[1:])
        elif _strong_verbs(s) or (not _AUTH.search(s) and _verbs(s)):
            facts.requests.append(s)
        else:
            facts.identity.append(s)
    text = " ".join(facts.sentences)
    facts.emails = _uniq(_EMAIL.findall(text))
    for k, v in _ids_in(text):
        facts.ids.setdefault(k, [])
        if v not in facts.ids[k]:
            facts.ids[k].append(v)
    facts.names = _uniq(
        [m.group("name").strip(" .") for s in facts.identity for m in _NAME.finditer(s)]
    )
    quoted = [a or b for a, b in _QUOTED.findall(text)]
    facts.values = _uniq(quoted + _DATE.findall(text) + _NUMBER.findall(_EMAIL.sub(" ", text)))
    return facts


# --- the offline user ----------------------------------------------------------------------------
_STOPWORDS = frozenset(
    """a an the and or of to for in on at by with from is are was were be been being am do does
    did have has had i me my mine you your yours we our us it its this that these those please
    can could would will shall should may might must what which who whom whose when where why how
    there here any some all just also so if then than as about into over under up down out not no
    yes ok okay sure thanks thank hello hi dear let know need want like provide give tell confirm
    sql database record records information details detail id ids""".split()
)
_WORD = re.compile(r"[\w@.'-]+")

_DONE = re.compile(
    r"\b(?:(?:has|have) been (?:successfully )?(?:updated|changed|deleted|removed|added|inserted|"
    r"created|processed|completed|applied|recorded|booked|cancell?ed|refunded|corrected|modified|"
    r"made|done|set|reassigned|assigned|deactivated|activated|registered|saved)|successfully|"
    r"all (?:done|set)|is (?:now )?(?:done|complete|completed)|are (?:now )?(?:done|complete|"
    r"completed)|I(?:'ve| have) (?:now )?(?:updated|made|applied|processed|completed|changed|"
    r"deleted|removed|added|inserted|recorded|booked|cancell?ed|refunded|corrected|done|finished|"
    r"set|assigned|reassigned)|anything else|task is complete|request is complete)\b",
    re.I,
)
_FUTURE_ACTION = re.compile(
    r"\b(?:I will|I'll|I am going to|I'm going to|I would|I'd like to|I plan to|I can now|"
    r"the following|shall I|should I|do you want me to|would you like me to|may I|can I|"
    r"before I|to proceed|proceeding)\b",
    re.I,
)
_CONFIRM = re.compile(
    r"\b(?:confirm|confirmation|proceed|go ahead|shall I|should I|do you want me to|"
    r"would you like me to|is (?:that|this|it) (?:correct|right|ok|okay|fine)|are you sure|"
    r"yes/no|yes or no|okay to|ok to|may I|can I|approve|agree)\b|\(yes\)",
    re.I,
)
# An explicit request for a yes (not "confirm your e-mail", which asks for identity).
_CONFIRM_STRONG = re.compile(
    r"\b(?:confirm(?!\s+(?:your|my|the (?:e-?mail|name|id))\b)|confirmation|shall I|should I|"
    r"do you want me to|would you like me to|is (?:that|this|it) (?:correct|right|ok|okay|fine)|"
    r"are you sure|yes/no|yes or no|okay to|ok to|approve)\b|\(yes\)",
    re.I,
)
_IDENTITY_ASK = re.compile(
    r"\b(?:authenticate|authentication|verify|verification|identify|identity|who are you|"
    r"your (?:full |first |last |registered |account |customer |stage )?(?:name|e-?mail|id|"
    r"account|customer ?id|user ?id|member ?id|phone|number|address))\b",
    re.I,
)
_SLOTS = {
    "email": re.compile(r"\be-?mail", re.I),
    "name": re.compile(r"\bname\b", re.I),
    "phone number": re.compile(r"\b(?:phone|mobile|telephone)\b", re.I),
    "address": re.compile(r"(?<!mail )\baddress\b", re.I),
    "id": re.compile(r"\bids?\b", re.I),
}
_ASKED_ID = re.compile(r"\b(?P<label>[A-Za-z]+?)[ _]?(?:ID|Id|id)s?\b")
NO_INFO = "Sorry, I don't have that information."


@dataclass
class OfflineReply:
    text: str
    stop: bool
    intent: str


_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _tokens(text: str) -> set[str]:
    """Content words, lower-cased, with compound names split (``TrackID`` -> track, id) and a
    plural ``s`` dropped, so that "which track?" meets "TrackID 2794"."""
    out: set[str] = set()
    for w in _WORD.findall(text):
        w = w.strip(".'-")
        for part in {w, *_PART.findall(w)}:
            t = part.lower()
            if len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
                t = t[:-1]
            if len(t) > 1 and t not in _STOPWORDS:
                out.add(t)
    return out


class OfflineUser:
    """Deterministic replies from :class:`InstructionFacts` (see the module docstring)."""

    def __init__(self, facts: InstructionFacts):
        self.facts = facts

    def opening(self) -> str:
        """The first message: the request without the identity details."""
        body = " ".join(self.facts.requests)
        if not body:
            return "Hi! I need some help with my account."
        if re.match(r"(?:hi|hello|hey|good (?:morning|afternoon|evening))\b", body, re.I):
            return body
        return "Hi! " + body

    def _slot_sentences(self, slot: str, message: str) -> tuple[list[str], str | None]:
        """Sentences that give ``slot``, identity sentences first; or what is missing."""
        f = self.facts
        pool = f.identity + [s for s in f.sentences if s not in f.identity]
        if slot == "email":
            return [s for s in pool if _EMAIL.search(s)][:1], "email"
        if slot == "name":
            return [s for s in pool if any(n in s for n in f.names)][:1], "name"
        if slot == "id":
            labels = [
                m.group("label").lower() + "id"
                for m in _ASKED_ID.finditer(message)
                if m.group("label").lower() not in _NOT_LABELS
            ]
            if labels:
                out: list[str] = []
                for key in labels:
                    nums = f.ids.get(key, [])
                    hits = [s for s in pool if any(re.search(rf"\b{n}\b", s) for n in nums)]
                    if not hits:
                        return out, key[:-2] + " ID"
                    out += hits[:1]
                return out, None
            with_ids = [s for s in f.identity if _ids_in(s)] or [s for s in pool if _ids_in(s)]
            return with_ids[:1], "ID"
        pat = _SLOTS[slot]
        return [s for s in pool if pat.search(s) and re.search(r"\d", s)][:1], slot

    def _identity_answer(self, message: str) -> str:
        f = self.facts
        asked = [slot for slot, pat in _SLOTS.items() if pat.search(message)]
        picked: list[str] = []
        if _AUTH.search(message) or not asked or "who are you" in message.lower():
            picked += f.identity
        missing: list[str] = []
        for slot in asked:
            found, what = self._slot_sentences(slot, message)
            if not found and what:
                missing.append(what)
            picked += [s for s in found if s not in picked]
        text = " ".join(picked + [f"I don't have my {m} at hand." for m in missing])
        return text or "I don't have any account details at hand."

    def _retrieve(self, message: str) -> str:
        q = _tokens(message)
        if not q:
            return NO_INFO
        scored = [(len(q & _tokens(s)), i, s) for i, s in enumerate(self.facts.sentences)]
        best = max((sc for sc, _, _ in scored), default=0)
        if best == 0:
            return NO_INFO
        return " ".join([s for sc, _, s in scored if sc == best][:2])

    def respond(self, message: str) -> OfflineReply:
        """The reply to the agent's ``message``: a pure function of the message and the facts."""
        msg = message or ""
        future = bool(_FUTURE_ACTION.search(msg))
        if _DONE.search(msg) and not future:
            return OfflineReply(STOP_TOKEN, True, "done")
        ident = bool(_IDENTITY_ASK.search(msg))
        strong = bool(_CONFIRM_STRONG.search(msg))
        if ident and not strong:
            return OfflineReply(self._identity_answer(msg), False, "identity")
        if _CONFIRM.search(msg) and (strong or future or not ident):
            return OfflineReply("Yes, please go ahead.", False, "confirm")
        if ident:
            return OfflineReply(self._identity_answer(msg), False, "identity")
        return OfflineReply(self._retrieve(msg), False, "answer")


__all__ = [
    "NO_INFO",
    "InstructionFacts",
    "OfflineReply",
    "OfflineUser",
    "extract_facts",
    "first_person",
    "split_sentences",
]
