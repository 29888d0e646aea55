"""Prompt styles: how a raw problem becomes the user message, and how a styled prompt is undone.

`dapo` is DAPO-Math-17k's own wrapper, byte for byte (the trained-on format; the reward parses "Answer: ..."),
`boxed` the common `\\boxed{}` instruction, `plain` the bare problem, `gsm8k` verl's GSM8K instruction (answer after
"####"). `strip_wrapper` removes any of these, so
dedup keys and the raw problem kept in extra_info do not depend on the style a file was published in.
Pure string code, no I/O.
"""

from __future__ import annotations

DAPO_PREFIX = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
)
DAPO_SUFFIX = '\n\nRemember to put your answer on its own line after "Answer:".'
BOXED_SUFFIX = "\nPlease reason step by step, and put your final answer within \\boxed{}."
# verl's examples/data_preprocess/gsm8k.py (the GSM8K parquet of verl's nightly GSPO jobs): question + this.
GSM8K_SUFFIX = " Let's think step by step and output the final answer after \"####\"."

STYLES = ("dapo", "boxed", "plain", "gsm8k")


def format_prompt(problem: str, style: str) -> str:
    """The user message for `problem` in `style`."""
    if style == "dapo":
        return DAPO_PREFIX + problem + DAPO_SUFFIX
    if style == "boxed":
        return problem + BOXED_SUFFIX
    if style == "plain":
        return problem
    if style == "gsm8k":
        return problem + GSM8K_SUFFIX
    raise ValueError(f"unknown prompt style {style!r}; known: {', '.join(STYLES)}")


def strip_wrapper(text: str) -> str:
    """The problem inside a styled prompt (any of STYLES), whitespace-trimmed; unwrapped text is just trimmed."""
    if text.startswith(DAPO_PREFIX):
        text = text[len(DAPO_PREFIX):]
        if text.endswith(DAPO_SUFFIX):
            text = text[: -len(DAPO_SUFFIX)]
    elif text.endswith(BOXED_SUFFIX):
        text = text[: -len(BOXED_SUFFIX)]
    elif text.endswith(GSM8K_SUFFIX):
        text = text[: -len(GSM8K_SUFFIX)]
    return text.strip()


def chat(problem: str, style: str) -> list[dict[str, str]]:
    """verl's `prompt` column: a one-message chat."""
    return [{"role": "user", "content": format_prompt(problem, style)}]
