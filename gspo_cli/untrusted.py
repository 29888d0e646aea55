"""Files others hand us (a run folder, a baseline file) are data: the one reader of them, and the one cleaner of
what gets printed from them (docs/security.md, "Run folders and baseline files").

- `read_text` / `read_json` / `json_lines`: a regular file only (a FIFO or device would block or never end; a
  symlink is refused unless the caller names the file itself, `follow=True`), at most `MAX_BYTES` (a JSONL line:
  `MAX_LINE`), JSON nested at most `MAX_DEPTH` levels, checked on the text before `json.loads` ever recurses (a
  100k-deep document made RecursionError tracebacks in `runs list`). A bad file raises `BadFile` (a ValueError,
  so the readers' existing "unreadable: skip it" paths take it) and is noted in `skipped()`, which the commands
  print as one line per file. A JSONL line over the limits (`MAX_LINE`, `MAX_DEPTH`) is left out and counted, so
  the commands say once per file how many lines were skipped and why; a line that is merely not JSON (a torn last
  line while a job writes) is skipped by the caller, silently.
- `clean`: text from such a file without control characters and escape sequences (CSI such as `ESC [ 2 J`, OSC
  such as `ESC ] 8 ;;` links and `ESC ] 0 ;` title changes, DCS/APC/PM/SOS strings, C1 controls), so a run
  name or a recorded error cannot drive the terminal.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_BYTES = 64 << 20  # a results.json of 500 problems is ~1 MiB; a 700-step metrics.jsonl ~5 MiB
MAX_LINE = 4 << 20  # one JSONL record (a samples.jsonl response of 32k tokens is ~128 KiB)
MAX_DEPTH = 64  # gspo's own files nest at most 5 levels (as YAML's limit, config/yaml_limits.py)

_SKIPPED: dict[str, str] = {}  # path -> why, in the order met (printed by the commands, `skipped()`)
# path -> {line number: why} of JSONL lines left out over the limits (numbered, so reading a file twice counts once)
_LINES: dict[str, dict[int, str]] = {}


class BadFile(ValueError):
    """A file over the limits, not a regular file, or not the JSON it should be; the message is one line."""


# escape sequences first (ESC + its string or parameters), then every C0/C1 control but tab and newline
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI (ESC [ or the 8-bit 0x9b)
                      r"|(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC DCS PM APC SOS
                      r"|\x1b[ -/]*[0-~]?")  # any other ESC sequence
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NEWLINES = re.compile(r"[\t\n]")


def clean(value: Any, *, newlines: bool = False) -> str:
    """`value` as text with escape sequences and control characters removed (tabs and newlines become spaces
    unless `newlines`); what every renderer prints of a run folder's or a baseline's strings."""
    text = _CONTROLS.sub("", _ESCAPES.sub("", str(value)))
    return text if newlines else _NEWLINES.sub(" ", text)


def note(path: str | os.PathLike, why: str) -> None:
    _SKIPPED.setdefault(str(path), clean(why))


def skipped() -> list[tuple[str, str]]:
    """(path, why) of each bad file met in this process so far, once each, in order; then one entry per file
    with lines over the limits: how many, and why."""
    found = list(_SKIPPED.items())
    for path, bad in _LINES.items():
        whys: dict[str, int] = {}
        for why in bad.values():
            whys[why] = whys.get(why, 0) + 1
        counted = ", ".join(f"{n} {why}" for why, n in whys.items())
        found.append((path, f"{len(bad)} line{'s' if len(bad) > 1 else ''} of {clean(path)} ({counted})"))
    return found


def line_problem(line: str) -> str | None:
    """Why one JSONL line is over the limits (too long, nested too deep), or None."""
    if len(line) > MAX_LINE:
        return f"longer than {MAX_LINE} characters"
    if depth_of(line) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    return None


def _open(path: Path, follow: bool) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == 40 or (not follow and path.is_symlink()):  # ELOOP: O_NOFOLLOW met a symlink
            raise BadFile(f"{path}: a symlink (gspo reads a run's own files, not what they point at)") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise BadFile(f"{path}: not a regular file")
    if st.st_size > MAX_BYTES:
        os.close(fd)
        raise BadFile(f"{path}: {st.st_size} bytes; gspo reads at most {MAX_BYTES} bytes of such a file")
    return fd


def read_text(path: str | os.PathLike, *, follow: bool = False) -> str:
    """The text of `path` within the limits (BadFile past them, noted; OSError when it cannot be opened)."""
    p = Path(path)
    try:
        fd = _open(p, follow)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:  # grew while read
            raise BadFile(f"{p}: more than {MAX_BYTES} bytes")
    except BadFile as exc:
        note(p, str(exc))
        raise
    return data.decode("utf-8", errors="replace")


def depth_of(text: str) -> int:
    """How deep JSON `text` nests, counted without recursion (brackets inside strings are not counted)."""
    brackets = re.sub(r"[^\[\]{}]", "", re.sub(r'"(?:[^"\\]|\\.)*"', "", text))
    depth = deepest = 0
    for ch in brackets:
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def loads(text: str, where: str = "JSON") -> Any:
    """`json.loads(text)` of a document within the limits (BadFile past them or on a syntax error)."""
    if len(text) > MAX_BYTES:
        raise BadFile(f"{where}: more than {MAX_BYTES} bytes")
    if depth_of(text) > MAX_DEPTH:
        raise BadFile(f"{where}: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise BadFile(f"{where}: not valid JSON ({exc})") from None


def read_json(path: str | os.PathLike, *, follow: bool = False) -> Any:
    """The JSON document of `path` within the limits (BadFile, noted, past them; OSError when unreadable)."""
    text = read_text(path, follow=follow)
    try:
        return loads(text, str(path))
    except BadFile as exc:
        note(path, str(exc))
        raise


def read_mapping(path: str | os.PathLike) -> dict[str, Any] | None:
    """A JSON object from `path`, or None when it is absent, unreadable, bad (noted) or not an object."""
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lines(path: str | os.PathLike) -> Iterator[str]:
    """The lines of `path` (within the size limit), a line over `MAX_LINE` or `MAX_DEPTH` left out and counted
    (`skipped()`); nothing when absent."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        return
    except (OSError, BadFile):
        return
    for number, line in enumerate(text.splitlines(), 1):
        why = line_problem(line)
        if why:
            _LINES.setdefault(str(path), {})[number] = why
            continue
        yield line


def json_lines(path: str | os.PathLike) -> Iterator[Any]:
    """The parsed JSON value of each line of `path` that is within the limits; other lines are skipped."""
    for line in lines(path):
        if not line.strip():
            continue
        try:
            yield loads(line)
        except BadFile:
            continue


def clean_tree(value: Any) -> Any:
    """`value` (rows read from run folders or a baseline) with every string in it `clean`ed, keys included: what
    a text renderer prints. `--json` keeps the values as read (JSON escapes control characters itself)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: clean_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean_tree(v) for v in value)
    return value


def print_skipped(console: Any) -> None:
    """One line per bad file met (`skipped()`), on the given (stderr) console, as plain text."""
    for _, why in skipped():
        console.print(f"warning: skipped {why}", highlight=False, markup=False)
