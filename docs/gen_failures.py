"""Print docs/failures.md from the failure-signature catalog (gspo_cli/signatures.py).

    .venv/bin/python docs/gen_failures.py > docs/failures.md

tests/test_signatures.py fails when the committed page differs from this output.
"""

from __future__ import annotations

from gspo_cli import signatures

INTRO = """# Failure signatures

The ways verl + vLLM-Ascend runs really fail, as gspo recognises them: before launch (`preflight`: `gspo train
--dry-run`, `gspo train`, `gspo presets show`), on the hosts (`doctor`: `gspo env doctor`), and while the job runs
(`run`: the job wrapper's health rules and failure classifier, both engines). Each entry names its source thread
or verl source line and the function that detects it; `gspo env doctor --explain ID` prints one entry.

Generated from `gspo_cli/signatures.py` by `docs/gen_failures.py`: edit the catalog, not this page.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    counts = signatures.counts()
    out = [INTRO, "| stage | signatures |", "|---|---|"]
    out += [f"| {stage} | {n} |" for stage, n in counts.items()]
    for stage in signatures.STAGES:
        out += ["", f"## {stage}", ""]
        for sig in (s for s in signatures.CATALOG if s.stage == stage):
            out += [f"### `{sig.id}`: {sig.title}", "",
                    f"- detection: {_cell(sig.detection)}",
                    f"- cause: {_cell(sig.message)}",
                    f"- fix: {_cell(sig.fix)}"]
            if sig.action:
                out.append(f"- action: {sig.action}")
            out.append(f"- detector: `{sig.detector}`")
            out += [f"- source: {_cell(s)}" for s in sig.sources]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
