"""Version compatibility and obsolete environment variables, as data. Every row names its source.

Versions are compared with `vkey` (a tolerant key: `8.3.RC2` < `8.3.0` < `8.5.0`, `2.10.0.post4` > `2.10.0`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gspo_cli.config import devices as _devices


def vkey(version: str | None) -> tuple:
    """Sortable key for CANN / pip versions: numbers compare numerically, RCn/rcn sort before the release."""
    if not version:
        return ()
    key: list = []
    for part in re.split(r"[.\-+]", version.strip().lower()):
        m = re.fullmatch(r"(\d+)", part)
        if m:
            key.append((2, int(m.group(1)), 0))
            continue
        m = re.fullmatch(r"(rc|a|b|alpha|beta|dev)(\d*)", part)
        if m:  # pre-release: sorts below a plain number at the same position
            key.append((0, int(m.group(2) or 0), 0))
            continue
        m = re.fullmatch(r"post(\d*)", part)
        if m:
            key.append((3, int(m.group(1) or 0), 0))
            continue
        m = re.fullmatch(r"(\d+)([a-z]+)(\d*)", part)  # 0rc1 -> 0, rc1
        if m:
            key.append((2, int(m.group(1)), 0))
            key.append((0, int(m.group(3) or 0), 0))
            continue
        key.append((1, 0, part))
    key.append((1, -1, ""))  # end marker: `0.23.0rc1` < `0.23.0` < `0.23.0.post1`
    return tuple(key)


def same_release(a: str | None, b: str | None) -> bool:
    """Equal versions, ignoring case (`8.3.RC2` == `8.3.rc2`) and a trailing `.0`."""
    if not a or not b:
        return False
    ka, kb = list(vkey(a))[:-1], list(vkey(b))[:-1]
    while ka and ka[-1] == (2, 0, 0):
        ka.pop()
    while kb and kb[-1] == (2, 0, 0):
        kb.pop()
    return ka == kb


def base_release(version: str | None) -> str | None:
    """`2.10.0.post4` -> `2.10.0`; `0.23.0rc1` stays (an rc is its own release line here)."""
    if not version:
        return None
    return re.sub(r"[.+]?(post\d*|dev\d*|\+.*)$", "", version)


@dataclass(frozen=True)
class StackRow:
    vllm_ascend: str
    vllm: str
    cann: tuple[str, ...]  # accepted CANN versions (first = documented one)
    torch: str
    torch_npu: tuple[str, ...]
    python: tuple[str, str]  # [min, max) as versions
    source: str
    # what the package index said when the row was last checked (`pip index versions vllm-ascend`)
    index: str = ""


# The package index on 2026-12-06 (`pip index versions`): vllm-ascend 0.23.0.post1, 0.23.0, 0.18.0, 0.13.0, 0.11.0,
# 0.9.1, 0.7.3.post1, 0.7.3 (no rc is published there); verl 0.9.1 newest; torch-npu up to 2.14.0; vllm up to 0.34.0.
INDEX_CHECKED = "2026-12-06"

# vllm-ascend release -> the stack it was released and tested with. A .postN release is its base release's row
# (find_row): 0.23.0.post1 is on the index, and no installation page of its own was found in vllm-ascend's docs.
STACK_MATRIX: tuple[StackRow, ...] = (
    # source: https://docs.vllm.ai/projects/ascend/en/v0.26.0rc1/installation.html (read 2026-12-06: CANN == 9.1.0,
    # torch-npu == 2.10.0.post4, torch == 2.10.0, Python >= 3.10, < 3.13); a release candidate: pip-installable
    # only from source or the images, and its wake_up still transposes MoE experts (releases/v0.26.0rc branch).
    StackRow("0.26.0rc1", "0.26.0", ("9.1.0",), "2.10.0", ("2.10.0.post4",), ("3.10", "3.13"),
             "https://docs.vllm.ai/projects/ascend/en/v0.26.0rc1/installation.html",
             index=f"not on the package index ({INDEX_CHECKED})"),
    # source: https://docs.vllm.ai/projects/ascend/en/v0.23.0/installation.html (requirements table:
    # CANN == 9.1.0, torch-npu == 2.10.0.post4, torch == 2.10.0, Python >= 3.10, < 3.13); vLLM pinned 1:1.
    StackRow("0.23.0", "0.23.0", ("9.1.0",), "2.10.0", ("2.10.0.post4",), ("3.10", "3.13"),
             "https://docs.vllm.ai/projects/ascend/en/v0.23.0/installation.html",
             index=f"0.23.0 and 0.23.0.post1 on the package index ({INDEX_CHECKED})"),
    # source: https://docs.vllm.ai/projects/ascend/en/v0.23.0rc1/installation.html (CANN 9.0.1, torch-npu
    # 2.10.0.post2) and vllm-ascend PR #12242 (v0.23.0rc1 release notes).
    StackRow("0.23.0rc1", "0.23.0", ("9.0.1",), "2.10.0", ("2.10.0.post2",), ("3.10", "3.13"),
             "https://docs.vllm.ai/projects/ascend/en/v0.23.0rc1/installation.html",
             index=f"not on the package index ({INDEX_CHECKED})"),
    # source: vllm-ascend v0.18.0 release (CANN 8.5.1, torch 2.9.0 / torch-npu 2.9.0.post1). The v0.18.0 docs
    # page as later rebuilt (read again 2026-12-06) lists CANN 9.0.0 / torch-npu 2.9.0.post2: both pairs accepted.
    StackRow("0.18.0", "0.18.0", ("8.5.1", "9.0.0"), "2.9.0", ("2.9.0.post1", "2.9.0.post2"), ("3.10", "3.12"),
             "https://docs.vllm.ai/projects/ascend/en/v0.18.0/installation.html",
             index=f"on the package index ({INDEX_CHECKED})"),
    # source: https://docs.vllm.ai/projects/ascend/en/v0.13.0/installation.html (CANN == 8.5.0, torch-npu ==
    # 2.8.0, torch == 2.8.0, Python >= 3.10, < 3.12).
    StackRow("0.13.0", "0.13.0", ("8.5.0",), "2.8.0", ("2.8.0",), ("3.10", "3.12"),
             "https://docs.vllm.ai/projects/ascend/en/v0.13.0/installation.html",
             index=f"on the package index ({INDEX_CHECKED})"),
    # source: https://docs.vllm.ai/projects/ascend/en/v0.11.0/installation.html (CANN == 8.3.RC2, torch-npu ==
    # 2.7.1.post1, torch == 2.7.1, Python >= 3.9, < 3.12).
    StackRow("0.11.0", "0.11.0", ("8.3.RC2",), "2.7.1", ("2.7.1.post1", "2.7.1"), ("3.9", "3.12"),
             "https://docs.vllm.ai/projects/ascend/en/v0.11.0/installation.html",
             index=f"on the package index ({INDEX_CHECKED})"),
)

# torch_npu release line -> the CANN versions it is built for (same sources as the rows above).
TORCH_NPU_CANN: dict[str, tuple[str, ...]] = {
    "2.10.0.post4": ("9.1.0",),  # vllm-ascend v0.23.0 installation table
    "2.10.0.post2": ("9.0.1",),  # vllm-ascend v0.23.0rc1 installation table
    "2.10.0": ("9.0.0",),  # vllm-ascend main installation table (CANN == 9.0.0, torch-npu == 2.10.0)
    "2.9.0.post2": ("9.0.0",),  # vllm-ascend v0.18.0 docs page (rebuilt)
    "2.9.0.post1": ("8.5.1",),  # vllm-ascend v0.18.0 release
    "2.8.0": ("8.5.0",),  # vllm-ascend v0.13.0 installation table
    "2.7.1.post1": ("8.3.RC2",),  # vllm-ascend v0.11.0 installation table
    "2.7.1": ("8.3.RC1", "8.3.RC2"),  # vllm-ascend v0.11.0 zh docs (CANN >= 8.3.RC1, torch-npu == 2.7.1)
}

# verl 0.9.1 is the newest verl on the package index (2026-12-06, `pip index versions verl`).
# verl's own requirements (verl 0.9.1 wheel METADATA: Requires-Python <3.13,>=3.10; ray[default]>=2.41.0;
# transformers!=5.6.0,<5.11,>=5.5.3) and gspo's pin (issue #2: verl >=0.9.1,<0.10).
VERL_REQUIREMENTS = {
    "verl": (">=", "0.9.1", "<", "0.10"),
    "python": (">=", "3.10", "<", "3.13"),
    "ray": (">=", "2.41.0", None, None),
    "transformers": (">=", "5.5.3", "<", "5.11"),
    "source": "verl 0.9.1 METADATA (Requires-Python, Requires-Dist) and gspo pyproject extra `verl`",
}


def find_row(vllm_ascend: str | None) -> StackRow | None:
    if not vllm_ascend:
        return None
    for row in STACK_MATRIX:
        if same_release(row.vllm_ascend, vllm_ascend):
            return row
    base = base_release(vllm_ascend)
    for row in STACK_MATRIX:
        if same_release(row.vllm_ascend, base):
            return row
    return None


def in_range(version: str | None, lo: str | None, hi: str | None) -> bool:
    if not version:
        return False
    k = vkey(version)
    return (lo is None or k >= vkey(lo)) and (hi is None or k < vkey(hi))


@dataclass(frozen=True)
class ObsoleteVar:
    name: str
    # Ignored from this vllm-ascend version on (vllm-ascend releases track vLLM's version numbers).
    since: str
    replaced_by: str
    source: str
    # The replacement as a verl rollout override (a vLLM engine setting), when there is one.
    override: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


OBSOLETE_VARS: tuple[ObsoleteVar, ...] = (
    # vLLM removed the V0 engine (PRs #25335/#25351, Sept 2025); V1 is the only engine. vllm-ascend v0.9.2rc1
    # release notes: "V1 engine will be enabled by default, there is no need to set VLLM_USE_V1=1 any more".
    ObsoleteVar("VLLM_USE_V1", "0.11.0", "nothing: the V1 engine is the only engine",
                "vllm-ascend v0.9.2rc1 release notes; vllm-project/vllm#25351"),
    # vLLM PR #26315 deprecated it ("will be removed in v0.14.0"), #30564 removed it from the docs; vLLM issue
    # #50292 confirms nothing reads it any more. On Ascend the platform plugin picks its own attention backend,
    # and XFORMERS was never an Ascend backend, so there is nothing to carry over.
    ObsoleteVar("VLLM_ATTENTION_BACKEND", "0.14.0",
                "vLLM's attention_config.backend / --attention-backend; on Ascend the platform chooses the "
                "backend, so drop it", "vllm-project/vllm#26315, #30564, #50292"),
    # vllm-ascend PR #4272 kept VLLM_ASCEND_ENABLE_FLASHCOMM only as a backward-compatible alias of
    # VLLM_ASCEND_ENABLE_FLASHCOMM1; PR #9064 (May 2026) migrated FLASHCOMM1 to additional_config.enable_flashcomm1
    # (migration table in the v0.23.0rc1 additional_config docs) and PRs #11205/#11280 centralise the fallback on
    # the FLASHCOMM1 name only; RFC #10381 removes the deprecated names. The override reaches vLLM because verl
    # forwards rollout.engine_kwargs.vllm into the server args and JSON-encodes dicts
    # (verl/workers/rollout/vllm_rollout/vllm_async_server.py, utils.build_cli_args_from_config).
    ObsoleteVar("VLLM_ASCEND_ENABLE_FLASHCOMM", "0.23.0",
                "additional_config.enable_flashcomm1 (vllm-ascend --additional-config)",
                "vllm-ascend PR #4272, #9064; docs v0.23.0rc1 user_guide/configuration/additional_config",
                override="+actor_rollout_ref.rollout.engine_kwargs.vllm.additional_config.enable_flashcomm1=True"),
    # vllm-ascend PR #6442 replaced the env var with additional_config.weight_prefetch_config and PR #7357
    # (vLLM v0.17 cycle) dropped the env var; PR #11949 (July 2026) then removed weight prefetch altogether.
    ObsoleteVar("VLLM_ASCEND_ENABLE_PREFETCH_MLP", "0.18.0",
                "nothing on 0.23: MLP weight prefetch moved to additional_config.weight_prefetch_config "
                "(#6442) and the feature was then removed (#11949)",
                "vllm-ascend PR #6442, #7357, #11949"),
    # vllm-ascend PR #5272 (v0.13.0rc1): "only used together with VLLM_ASCEND_ENABLE_PREFETCH_MLP"; removed.
    ObsoleteVar("VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE", "0.13.0", "nothing: removed with no replacement",
                "vllm-ascend PR #5272; v0.13.0rc2 FAQ (issue #6186)"),
)


def obsolete_at(vllm_ascend: str | None) -> dict[str, ObsoleteVar]:
    """The obsolete variables for a vllm-ascend version (an rc counts as its release line)."""
    if not vllm_ascend:
        return {}
    version = base_release(vllm_ascend) or vllm_ascend
    line = re.sub(r"(rc|a|b|dev)\d*$", "", version)  # 0.23.0rc1 is already on the 0.23 line
    return {o.name: o for o in OBSOLETE_VARS if vkey(line) >= vkey(o.since)}


# HCCL_EXEC_TIMEOUT in AIV expansion mode: range [0, 1091], larger values are treated as 1091 (A2 and A3).
# source: https://www.hiascend.com/document/detail/zh/canncommercial/850/commlib/hcclug/hcclug_000074.html
HCCL_AIV_TIMEOUT_CAP = 1091

# TASK_QUEUE_ENABLE: 1 with ACL graph mode (vllm-ascend docs: "Set the operator dispatch pipeline level to 1 and
# disable manual memory control in ACLGraph"), 2 (the deeper pipeline) in eager mode.
TASK_QUEUE_GRAPH = "1"
TASK_QUEUE_EAGER = "2"

# Ray's NPU detection (ray/_private/accelerators/npu.py): `import acl` + acl.rt.get_device_count(); on failure it
# falls back to globbing /dev/davinci[0-9]* (older Ray: /dev/davinci?, which sees at most 10 of 16 A3 dies).
RAY_NOSET_VISIBLE = str(_devices.ascend().ray_noset_var)  # RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES
