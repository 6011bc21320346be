"""A person named aside: a mention of a ruled-out person that a careful reader accepts.

A guard forbids the trap candidates' values in what the work writes, so that a message that proposes
several candidates ("Yara or Emma, please approve", "approver: Emma Fernandes") fails. A careful
colleague also names a ruled-out person to say why they are not the one ("Malik Costa is no longer
with the company", "Emma Keller, his cover, is out March 1-5"), or names someone the work involves
in another role (a payee in a list of payouts). Those mentions name nobody to act.

`named_aside(text, people, subjects)` blanks (same length) each mention of a person that is aside:
- of `people` (ruled-out candidates): the mention's sentence rules them out near the name (out, away,
  on leave, has left, no longer, not, instead of, covering for, until ...);
- of `subjects` (candidates the work names in another role): any mention;
and, for both, never a mention that addresses the person (an @-mention or chat handle, a greeting,
"please approve: X", "X, could you ..."), nor one beside a hedge ("X or Y", "maybe", "?").
Amounts, ids and codes are no people: they are never passed here and stay forbidden.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from compoworld.verify.answers import _HEDGE, _SENTENCE, _spans

# how near the cue sits to the name: "Emma Keller, his cover, is out March 1-5" (cue 4 words on)
_BEFORE_WORDS, _AFTER_WORDS = 4, 6

# a cue before the name that rules the person out: "instead of X", "not X", "covering for X"
_RULED_OUT_BEFORE = re.compile(
    r"\b(?:instead of|rather than|in place of|in lieu of|other than|except(?: for)?|not|no longer|"
    r"cover(?:s|ing|ed)? for|stand(?:s|ing)? in for|filling in for|replac(?:es|ing|ed)|without|"
    r"bypass(?:es|ing|ed)?|skip(?:s|ping|ped)?|former|formerly|ex-|previous|previously)\b|n't\b",
    re.I,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
# a cue after the name that says they are out of the picture: "X is out", "X (on leave until ...)",
# "X is no longer with the company"; a bare "out", "off" or "left" says nothing ("X checked out")
_RULED_OUT_AFTER = re.compile(
    r"\b(?:is|are|was|were|'s|be|been|still|currently|also|now)\s+(?:\w+\s+)?"
    r"(?:out|away|off|absent|unavailable|gone|inactive|on leave|on vacation|on holiday|sick|ooo|not)\b"
    r"|\(\s*(?:out|away|off|ooo|on leave|on vacation|absent|unavailable|left|former|no longer|inactive)\b"
    rf"|\bout (?:of (?:the )?office|until|till|through|from|since|sick|today|this week|\d|{_MONTH}\b)"
    r"|\b(?:on leave|on vacation|on holiday|out of (?:the )?office|ooo|days? off|time off|unavailable|"
    r"no longer|has left|have left|had left|left (?:the |our )?(?:company|team|business|firm|"
    r"organi[sz]ation)|departed|retired|resigned|deactivated|inactive|isn't|wasn't|aren't|ruled out|"
    r"away (?:until|till|through|from|on))\b",
    re.I,
)
# the person is addressed: an @-mention or handle, a greeting, an ask or a role assigned ...
_MENTION_BEFORE = re.compile(r"(?:@|<@)\s*$")
_MENTION_AFTER = re.compile(r"^\W{0,3}(?:<@|@\w)")
_ADDRESS_BEFORE = re.compile(
    r"\b(?:hi|hello|hey|dear|attn|attention|cc|bcc|fyi|thanks|thank you|please|pls|ask|asking|ping|"
    r"pinging|loop(?:ing)? in|escalat\w* to|assign\w* to|rout\w* to|hand\w* (?:it )?(?:over )?to|"
    r"approval from|approved by|sign[- ]?off from|(?:please )?approve)\W*$"
    r"|\b(?:approvers?|reviewers?|assignees?|owners?|contact)\s*(?::|=|-|is|will be)\s*$",
    re.I,
)
# ... or right after the name ("X, please approve", "X: can you ...")
_ADDRESS_AFTER = re.compile(
    r"^[\s,:;-]*(?:please|pls|kindly|could you|can you|would you|will you|"
    r"(?:to |can |could |should |must |will |needs? to )?approve\b|approves\b|"
    r"for (?:your |his |her |their )?(?:approval|sign[- ]?off))",
    re.I,
)
_WORD = re.compile(r"\S*\w\S*")  # a word has a letter or digit: a lone comma or dash is no word
# names joined to the one after them ("covering for Irene Smith and Omar Jensen"): capitalised words
# (commas between) ending in "and", "&" or "/", so a cue before the first rules out the whole list
_NAME_LIST = re.compile(r"^\s*(?:[A-Z][\w'.-]*,?\s+)+(?:and|&|/)\s*$")


@lru_cache(maxsize=4096)
def _mention_rx(value: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in value.split()]
    return re.compile(r"(?<![\w@.-])" + r"\s+".join(words) + r"(?![\w@-])", re.I)


def _tail_words(text: str, n: int) -> str:
    """The last n words of the text (what sits just before a name)."""
    words = list(_WORD.finditer(text))
    return text[words[-n].start() :] if len(words) >= n else text


def _head_words(text: str, n: int) -> str:
    words = list(_WORD.finditer(text))
    return text[: words[n - 1].end()] if len(words) >= n else text


def _is_aside(before: str, after: str, subject: bool) -> bool:
    """Whether one mention (with the rest of its sentence before and after it) is named aside."""
    near_before, near_after = _tail_words(before, _BEFORE_WORDS), _head_words(after, _AFTER_WORDS)
    if _HEDGE.search(near_before):
        return False  # "Yara or Emma Keller", "maybe Emma Keller": candidates side by side
    if _MENTION_BEFORE.search(before) or _MENTION_AFTER.match(after):
        return False  # an @-mention or a handle calls on them, whatever the sentence says
    if _RULED_OUT_BEFORE.search(near_before):
        # "instead of Emma Keller, please approve": the ask is the reader's; "covering for Emma
        # Keller / Jon Kim": what follows is ruled out with them
        return True
    if _HEDGE.search(near_after):
        return False  # "Emma Keller or Yara", "Emma Keller?"
    if _ADDRESS_AFTER.match(after) or _ADDRESS_BEFORE.search(before):
        return False  # "Emma Keller, please approve", "please approve: Emma Keller", "approver: X"
    cues = list(_RULED_OUT_BEFORE.finditer(before))
    if cues and _NAME_LIST.match(before[cues[-1].end() :]):
        # a longer list behind the cue, not addressed (from play wave 13: "covering for Irene Smith
        # and Omar Jensen")
        return True
    return subject or bool(_RULED_OUT_AFTER.search(near_after))


def named_aside(text: str, people: Iterable[str] = (), subjects: Iterable[str] = ()) -> str:
    """The text with every mention of a person that is named aside blanked (its length kept)."""
    people, subjects = [p for p in people if p and p.strip()], [s for s in subjects if s and s.strip()]
    if not text or not (people or subjects):
        return text
    low = text.casefold()
    hits: list[tuple[int, int, bool]] = []
    for value, subject in [*((p, False) for p in people), *((s, True) for s in subjects)]:
        if value.split()[0].casefold() not in low:
            continue  # the cheap test first
        hits += [(m.start(), m.end(), subject) for m in _mention_rx(value.strip()).finditer(text)]
    if not hits:
        return text
    sentences = _spans(text, _SENTENCE)
    out = list(text)
    for s, e, subject in hits:
        s0, e0 = next(((a, b) for a, b, _ in sentences if a <= s < b), (0, len(text)))
        if _is_aside(text[s0:s], text[e:e0], subject):
            out[s:e] = " " * (e - s)
    return "".join(out)


# where a record holds free text (a structural field, a recipient or a title, is never read aside)
FREE_TEXT_FIELDS = frozenset(
    {
        "body",
        "text",
        "content",
        "message",
        "comment",
        "comments",
        "note",
        "notes",
        "description",
        "html",
        "htmlBody",
        "body_html",
        "body_text",
        "bodyText",
        "content_html",
        "hs_note_body",
        "snippet",
    }
)


def record_aside(record: object, people: Iterable[str], key: str = "") -> object:
    """The record with each of its free-text fields read aside (`named_aside`); other fields as they are."""
    people = list(people)
    if isinstance(record, dict):
        return {k: record_aside(v, people, str(k)) for k, v in record.items()}
    if isinstance(record, list):
        return [record_aside(v, people, key) for v in record]
    if isinstance(record, str) and key in FREE_TEXT_FIELDS:
        return named_aside(record, people)
    return record
