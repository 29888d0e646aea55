"""Version combinations known to break, one row per report, checked by `gspo env doctor` (signature
`stack-known-bad`, docs/failures.md). The supported stack rows themselves are `matrix.STACK_MATRIX`; this table
holds what people actually installed and what it did.

A row matches when every one of its conditions holds on the installed versions (`versions` is
pip distribution names: torch, torch-npu, vllm, vllm-ascend, transformers, numpy, verl). Conditions are (package, test) with test one of
`("==", v)` (same release), `("!=", v)`, `("<", v)`, `(">=", v)`, `("release!=", other package)` (torch and
torch_npu from different releases), or `("in", (lo, hi))` ([lo, hi)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gspo_cli.checks import ERROR, OK, Check
from gspo_cli.env.matrix import base_release, same_release, vkey
from gspo_cli.signatures import tagged


@dataclass(frozen=True)
class BadCombo:
    name: str
    conditions: tuple[tuple[str, str, Any], ...]
    cause: str
    fix: str
    source: str
    generic: bool = False  # reported only when no specific row matched


KNOWN_BAD: tuple[BadCombo, ...] = (
    # vllm-ascend#5710: "vllm-ascend 0.11.0 does not compatible with vllm 0.11.0 for mismatch of pytorch version";
    # maintainer: vLLM needs the newest torch, torch-npu lags 2-3 months, so vLLM-Ascend pins N-1 (2.7.1).
    # verl#5123: verl 0.7.0's NPU guide lists torch 2.7.1, `pip install vllm==0.11.0` replaces it with 2.8.0.
    BadCombo("vllm-ascend 0.11 with vLLM's torch",
             (("vllm-ascend", "==", "0.11.0"), ("torch", "!=", "2.7.1")),
             "vllm 0.11.0 pulls torch 2.8.0, vllm-ascend 0.11.0's torch_npu is built for torch 2.7.1: torch_npu "
             "fails to load or vLLM falls back to CPU ops",
             "pip install vllm==0.11.0 first, then vllm-ascend==0.11.0 (it reinstalls torch 2.7.1 for torch_npu)",
             "https://github.com/vllm-project/vllm-ascend/issues/5710, https://github.com/verl-project/verl/issues/5123"),
    # The same failure for any release: torch_npu X.Y.Z[.postN] only works with torch X.Y.Z.
    BadCombo("torch and torch_npu from different releases",
             (("torch", "release!=", "torch-npu"),),
             "torch_npu is built against one torch release; with another torch it fails to import or misbehaves",
             "install the torch that matches torch_npu (pip install torch==<torch_npu's X.Y.Z>), installing vllm "
             "before vllm-ascend", "https://github.com/vllm-project/vllm-ascend/issues/5710", generic=True),
    # verl 0.9.1 METADATA: Requires-Dist numpy>=2.0.0; older vllm-ascend pinned numpy<2.0.0 (vllm-ascend#476).
    BadCombo("numpy 1.x with verl 0.9.1",
             (("verl", "in", ("0.9.1", "0.10")), ("numpy", "<", "2.0.0")),
             "verl 0.9.1 requires numpy>=2.0.0; numpy 1.x is left by stacks that pinned numpy<2 (older vllm-ascend)",
             "pip install 'numpy>=2' (and a vllm-ascend release that allows it)",
             "verl 0.9.1 METADATA; https://github.com/vllm-project/vllm-ascend/pull/476"),
    # verl 0.9.1 METADATA: transformers!=5.6.0,<5.11,>=5.5.3.
    BadCombo("transformers outside verl 0.9.1's range",
             (("verl", "in", ("0.9.1", "0.10")), ("transformers", "out", ("5.5.3", "5.11", "5.6.0"))),
             "verl 0.9.1 requires transformers>=5.5.3,<5.11 and not 5.6.0",
             "pip install 'transformers>=5.5.3,<5.11,!=5.6.0'", "verl 0.9.1 METADATA (Requires-Dist)"),
    # verl's GSPO practice doc (docs/ascend_tutorial/.../gspo_optimization_practice.md, version table) pins
    # transformers 5.3.0 and torch_npu 2.9.0 with vllm-ascend 0.18.0, while verl 0.9.1 needs transformers>=5.5.3 and
    # vllm-ascend 0.18.0's installation table needs torch-npu 2.9.0.post1 (CANN 8.5.1).
    BadCombo("verl's GSPO practice-doc pins",
             (("transformers", "==", "5.3.0"), ("verl", "in", ("0.9.1", "0.10"))),
             "transformers 5.3.0 is the GSPO practice doc's pin; verl 0.9.1 (its install requirements) needs "
             ">=5.5.3: the two documents conflict and verl's own requirement wins",
             "pip install 'transformers>=5.5.3,<5.11,!=5.6.0'",
             "verl docs/ascend_tutorial/model_support/examples/gspo_optimization_practice.md vs verl 0.9.1 METADATA"),
    BadCombo("verl's GSPO practice-doc torch_npu",
             (("vllm-ascend", "==", "0.18.0"), ("torch-npu", "==", "2.9.0")),
             "the GSPO practice doc pins torch_npu 2.9.0; vllm-ascend 0.18.0 was released with torch-npu 2.9.0.post1 "
             "(CANN 8.5.1) or 2.9.0.post2 (CANN 9.0.0)",
             "pip install torch-npu==2.9.0.post1 (CANN 8.5.1) or 2.9.0.post2 (CANN 9.0.0)",
             "gspo_optimization_practice.md version table; https://docs.vllm.ai/projects/ascend/en/v0.18.0/installation.html"),
)


def _holds(versions: dict[str, str | None], pkg: str, op: str, arg: Any) -> bool:
    have = versions.get(pkg)
    if not have:
        return False
    if op == "==":
        return same_release(base_release(have), arg) or same_release(have, arg)
    if op == "!=":
        return not same_release(base_release(have), arg)
    if op == "<":
        return vkey(have) < vkey(arg)
    if op == "in":
        return vkey(arg[0]) <= vkey(have) < vkey(arg[1])
    if op == "out":
        lo, hi, excluded = arg
        return not (vkey(lo) <= vkey(have) < vkey(hi)) or same_release(have, excluded)
    if op == "release!=":
        other = versions.get(arg)
        return bool(other) and not same_release(base_release(have), base_release(other))
    raise ValueError(op)


def matches(versions: dict[str, str | None]) -> list[BadCombo]:
    found = [row for row in KNOWN_BAD if all(_holds(versions, *c) for c in row.conditions)]
    specific = [row for row in found if not row.generic]
    return specific or found


def known_bad_checks(versions: dict[str, str | None]) -> list[Check]:
    """One error per known-bad row the installed versions match, else one ok line."""
    found = matches(versions)
    if not found:
        return [Check("stack.known_bad", OK, f"none of {len(KNOWN_BAD)} known-bad version combinations")]
    shown = {k: v for k, v in versions.items() if v}
    return [Check("stack.known_bad", ERROR, tagged("stack-known-bad", f"{row.name}: {row.cause} (installed: "
                  + ", ".join(f"{p} {shown[p]}" for p, _, _ in row.conditions if p in shown) + f"; {row.source})"),
                  fix=row.fix) for row in found]
