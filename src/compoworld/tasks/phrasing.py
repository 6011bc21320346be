"""How requests are worded: one goal, said the many ways colleagues say it.

A family gives the goal in a few words of its own (`ask`, an imperative such as "refund the duplicate
charge on Acme's account and let them know") plus optional context; `frame` picks a voice: a terse
request, a polite one, a forwarded note, a checklist, a question, a context-first message. The
plan never goes here: it belongs to the hint and the subtasks.
"""

from __future__ import annotations

import random
import re

_POLITE = (
    "Could you",
    "Can you",
    "Would you please",
    "Please could you",
    "When you get a chance, can you",
)
# no "Heads up:" before an imperative (from play: "Heads up: Handle the ..." read oddly)
_GREET = ("Hi!", "Hey!", "Morning!", "Hello!", "Quick one:", "Good morning!", "Hi there!", "Afternoon!")
_SIGN = ("Thanks!", "Thank you.", "Cheers.", "Appreciate it.", "Thanks in advance.", "")
_FWD = (
    'Forwarding this from {who}: "{ask}." Please handle it.',
    "{who} asked me to pass this on: {ask}. Can you take it?",
    "Note from {who}: {ask}. Over to you.",
    "Per {who}'s request, {ask}.",
)
_Q = (
    "{ctx_q}Can you {ask}?",
    "Would you {ask}? {ctx}",
    "{ctx_q}Any chance you could {ask} today?",
    "Could you {ask} for me? {ctx}",  # not "Is it possible to...?": a yes/no question wanting the writes
)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _period(s: str) -> str:
    s = s.strip()
    return s if not s or s[-1] in ".?!:" else s + "."


def frame(
    rng: random.Random, ask: str, context: str = "", who: str = "", items: list[str] | None = None
) -> str:
    """The instruction: `ask` (lower-case imperative, no final period) in a voice drawn from `rng`."""
    ctx = _period(_cap(context)) if context else ""
    # context that points back at the ask ("That means: ...", "That's ...") can only follow it
    back = bool(re.match(r"(that|this)('s|\b)", context.strip(), re.I))
    styles = ["terse", "polite", "greet", "question", "context"]
    if who:
        styles.append("forward")
    if items and len(items) >= 2:
        styles += ["checklist", "checklist"]
    style = rng.choice(styles)
    if style == "terse":
        out = f"{_period(_cap(ask))} {ctx}"
    elif style == "polite":
        lead = rng.choice(_POLITE)
        out = (
            f"{lead} {ask}? {ctx} {rng.choice(_SIGN)}" if back else f"{ctx} {lead} {ask}? {rng.choice(_SIGN)}"
        )
    elif style == "greet":
        hi = rng.choice(_GREET)
        first = f"{_period(_cap(ask))} {ctx}" if back else f"{ctx} {_period(_cap(ask))}"
        out = f"{hi} {first} {rng.choice(_SIGN)}"
    elif style == "question":
        t = rng.choice(_Q)
        if "," in ask:  # "..., the way our policy says for me?": no tail after a clause
            t = t.replace(" for me?", "?")
        if ask.rstrip().endswith("today"):  # "... who leaves today today?"
            t = t.replace(" today?", "?")
        if back and t.startswith("{ctx_q}"):
            out = t.format(ask=ask, ctx=ctx, ctx_q="") + f" {ctx}"
        else:
            out = t.format(ask=ask, ctx=ctx, ctx_q=(ctx + " ") if ctx else "")
    elif style == "context":
        lead = rng.choice(("FYI: ", "Context: ", "", "Note: ", "Background: "))
        if ctx and back:
            out = f"{_period(_cap(ask))} {ctx}"
        else:
            out = f"{lead}{ctx} {_period(_cap(ask))}" if ctx else f"{_period(_cap(ask))} {rng.choice(_SIGN)}"
    elif style == "forward":
        out = rng.choice(_FWD).format(who=who, ask=ask) + (f" {ctx}" if ctx else "")
    else:  # checklist
        head = rng.choice(
            ("To do for today:", "A few things, please:", "Checklist:", "Can you sort these out?")
        )
        body = "\n".join(f"- {_cap(i)}" for i in items or [])
        return f"{head}{(' ' + ctx) if ctx else ''}\n{body}".strip()
    return " ".join(out.split())
