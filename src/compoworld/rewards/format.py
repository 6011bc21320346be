"""What a format failure is: one definition for the runner (`compoworld eval`), TRL's environment,
verl's tool and reward function, and the reward formulas.

WildAWM's rule is `r = -1` on a format failure. The paper's format is the protocol the agent is
told to follow; ours, in every system prompt and RL row, is: act through tool calls, and end by
calling `finish` (with the answer, if the task asks a question). So a rollout **fails on format**
when either
- it ended without calling `finish`: a reply in prose instead of a call, a call that does not parse
  (TRL and verl end the rollout there), a generation cut at the length limit, or the turn budget
  spent; or
- `MAX_MALFORMED_TURNS` assistant turns in a row had no usable tool call (arguments that are not
  JSON, an unknown tool, a gateway meta-tool that answered 404): the runner ends such an episode as
  `agent_format`.

Everything else is the verifier's business, from the state the rollout left: a rollout that
followed the protocol but did the wrong work is no format failure (its reward is V plus the bonus).
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_MALFORMED_TURNS = 3  # assistant turns in a row without a usable call make a format failure


def longest_malformed_run(usable_turns: Iterable[bool]) -> int:
    """The longest run of consecutive turns whose tool calls were all unusable."""
    run = best = 0
    for ok in usable_turns:
        run = 0 if ok else run + 1
        best = max(best, run)
    return best


def format_failed(finished: bool, malformed_run: int = 0) -> bool:
    """True when a rollout fails on format (see the module): it never called `finish`, or had
    `malformed_run >= MAX_MALFORMED_TURNS` turns in a row without a usable call."""
    return (not finished) or malformed_run >= MAX_MALFORMED_TURNS
