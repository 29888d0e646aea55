"""Everything gspo prints for a shell is built here: `eval "$(gspo env exports ...)"` and the commands gspo
suggests ("Next: gspo train --resume RUN") must never run code chosen by whoever wrote a preset or named a run.

- `export_line(name, value)`: `export NAME='value'`; the name must be a shell identifier (else ValueError), the
  value is single-quoted (`shlex.quote`), so newlines, `$()`, backticks, `;` and quotes stay inside the value.
- `comment(text)`: `# text` on one line: every control character and Unicode line break in `text` is written as
  an escape (`\\n`, `\\x1b`, `\\u2028`), so user text can never end the comment and start a command.
- `command(*argv)`: a command line with every argument quoted where it needs it.
- `quote(value)`: one argument.

A value with a NUL byte cannot be an environment variable or an argument at all: ValueError.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_name(name: object) -> bool:
    """Whether `name` is a shell identifier (what `export NAME=...` and an environment variable name accept)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def quote(value: object) -> str:
    """`value` as one shell word (single-quoted unless it is plainly safe)."""
    text = str(value)
    if "\0" in text:
        raise ValueError("a shell word cannot hold a NUL byte")
    return shlex.quote(text)


def command(*argv: object) -> str:
    """A command line for a user to copy: each argument quoted where needed."""
    return " ".join(quote(a) for a in argv)


def export_line(name: str, value: object) -> str:
    """`export NAME='value'`; ValueError for a name that is not a shell identifier."""
    if not is_name(name):
        raise ValueError(f"{name!r} is not a valid environment variable name")
    return f"export {name}={quote(value)}"


def one_line(text: object) -> str:
    """`text` with every control character and line/paragraph separator escaped: it stays on one line."""
    out = []
    for ch in str(text):
        cat = unicodedata.category(ch)
        if ch == "\\" or (ch.isprintable() and cat not in ("Zl", "Zp")):
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def comment(text: object) -> str:
    """A shell comment line carrying `text` (escaped onto one line by `one_line`)."""
    return f"# {one_line(text)}"
