"""The one rule for the environment variables a preset may give a job (docs/security.md, "The env-var rule").

A preset's `env.vars` reach every process of a job (Ray's runtime_env), `gspo env exports` (which the README
`eval`s in the user's shell) and `gspo cluster up/join`. Some variable names are themselves the payload, whatever
their value: a shell runs PROMPT_COMMAND, Python imports what PYTHONWARNINGS names, RAY_ADDRESS sends the next
`gspo jobs list` and its token elsewhere. So each name gets one of three verdicts:

- allowed: a family a recipe needs, with the source that shows it does (the upstream scripts in
  shared/reference/verl, vllm-ascend's envs.py, the HCCL/CANN references gspo's checks already cite);
- refused: one line naming the variable and why (shell, loader and interpreter hooks, library plug-ins, gspo's own
  variables, Ray's connection and auth variables);
- unreviewed: anything else. It still reaches the job, and the dry-run and the `env exports` header name it as a
  warning. Not an opt-in in the preset: the author of a shared preset would opt their own variable in.

Exact names are judged before prefixes, refusals before allowances. Refusals compare the upper-cased name (a
shell's `http_proxy` and `HTTP_PROXY` act alike); allowances the name as written.
Every door asks `judge`: the preset schema (so a preset file, `extends`, every `--set` form, a run's saved
config.yaml on `--resume`, a baseline's sets), `env.exports.build` (the one builder of a job's environment, a
second line), and `config/verl_strings.py` for `overrides.verl` (which refuses runtime_env outright).
"""

from __future__ import annotations

from dataclasses import dataclass

ALLOWED, REFUSED, UNREVIEWED = "allowed", "refused", "unreviewed"

# gspo's tests' switches (GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS, engines/verl/cpu/platform.py): only a test's own process
# environment sets them (jobs/client.py forwards them from there, saying so); every preset route refuses them.
TEST_SWITCH_PREFIX = "GSPO_TEST_"

_REF = "shared/reference/verl"
_SCRIPTS = f"{_REF}/run_qwen3_32b_fsdp.sh, run_qwen3_8b_fsdp.sh, run_gspo_qwen3_8b_fsdp2_npu.sh"
_VLLM_ASCEND_ENVS = "vllm-ascend vllm_ascend/envs.py (docs: user_guide/configuration/env_vars)"

# (name or prefix*, source): the families a recipe legitimately needs.
ALLOWED_NAMES: tuple[tuple[str, str], ...] = (
    ("HCCL_*", f"{_SCRIPTS} (HCCL_EXEC_TIMEOUT, HCCL_CONNECT_TIMEOUT, HCCL_ASYNC_ERROR_HANDLING); "
               "run_gspo_qwen3_30b_megatron_npu.sh (HCCL_OP_EXPANSION_MODE); vllm-ascend Qwen3-MoE tutorial "
               "(HCCL_BUFFSIZE); HCCL_SOCKET_IFNAME/HCCL_IF_IP: env/exports.py"),
    ("ASCEND_*", "Ray's NPU manager (ASCEND_RT_VISIBLE_DEVICES), CANN runtime switches (ASCEND_LAUNCH_BLOCKING, "
                 "ASCEND_GLOBAL_LOG_LEVEL); the CANN install paths are refused below"),
    ("VLLM_*", f"{_SCRIPTS} (VLLM_USE_V1, VLLM_ATTENTION_BACKEND); vLLM vllm/envs.py"),
    ("VLLM_ASCEND_*", f"{_SCRIPTS} (VLLM_ASCEND_ENABLE_FLASHCOMM, _PREFETCH_MLP, _DENSE_OPTIMIZE); {_VLLM_ASCEND_ENVS}"),
    ("NCCL_*", "the CUDA presets' collectives (config/devices.py: nccl); NCCL_SOCKET_IFNAME: env/var_checks.py"),
    ("GLOO_SOCKET_IFNAME", f"{_REF}/gspo_optimization_practice.md; env/exports.py derives it"),
    ("TP_SOCKET_IFNAME", "env/exports.py derives it (torch's TensorPipe)"),
    ("TORCH_*", "torch's runtime switches (TORCH_NCCL_*, TORCH_DISTRIBUTED_DEBUG)"),
    ("PYTORCH_*", "env/var_checks.py: PYTORCH_NPU_ALLOC_CONF / PYTORCH_ALLOC_CONF (torch_npu, torch allocators)"),
    ("OMP_*", "OpenMP threads of the CPU ops (OMP_NUM_THREADS)"),
    ("MKL_NUM_THREADS", "MKL threads of the CPU ops"),
    ("HF_*", "Hugging Face hub and datasets (HF_HOME, HF_HUB_OFFLINE, HF_TOKEN: a secret, jobs/secret_env.py); "
             "HF_ENDPOINT is unreviewed (below)"),
    ("HUGGINGFACE_*", "the hub's older names (HUGGINGFACE_HUB_CACHE)"),
    ("TRANSFORMERS_*", "transformers' cache and offline switches"),
    ("TOKENIZERS_PARALLELISM", "Hugging Face tokenizers' thread switch"),
    ("WANDB_*", "verl's wandb logger (trainer.logger: wandb; WANDB_API_KEY is a secret, jobs/secret_env.py; "
                "WANDB_MODE and WANDB_DIR come from trainer.trackers: config/trackers.py)"),
    ("SWANLAB_*", "verl's swanlab logger, verl/utils/tracking.py (SWANLAB_API_KEY is a secret; SWANLAB_MODE and "
                  "SWANLAB_LOG_DIR come from trainer.trackers: config/trackers.py)"),
    ("TENSORBOARD_DIR", "verl's tensorboard logger, verl/utils/tracking.py (gspo sets it: runs/<run>/tensorboard)"),
    ("TASK_QUEUE_ENABLE", f"{_SCRIPTS}; env/var_checks.py fits it to the rollout mode"),
    ("CPU_AFFINITY_CONF", f"{_SCRIPTS}"),
    ("MULTI_STREAM_MEMORY_REUSE", f"{_REF}/gspo_optimization_practice.md"),
    ("HYDRA_FULL_ERROR", f"{_SCRIPTS} (Hydra's full tracebacks)"),
    ("RAY_DEDUP_LOGS", "shared/reference/verl/run_qwen3_32b_fsdp.sh, run_qwen3_8b_fsdp.sh"),
    ("RAY_EXPERIMENTAL_NOSET_*", "verl/plugin/platform/platform_npu.py; config/devices.py (Ray's NOSET switches)"),
    ("VERL_LOGGING_LEVEL", "verl's log level"),
    ("VERL_USE_MODELSCOPE", "verl/__init__.py (verl 0.9.1): 'true' patches transformers' hub to ModelScope "
                            "(modelscope.utils.hf_util.patch_hub); gspo sets it from the preset's hub: (config/hub.py)"),
    ("MODELSCOPE_*", "ModelScope's client settings (modelscope_hub/constants.py: MODELSCOPE_CACHE, timeouts; "
                     "MODELSCOPE_API_TOKEN is a secret by its name); MODELSCOPE_ENDPOINT is shown (below)"),
    ("PYTHONUNBUFFERED", f"{_REF}/run_gspo_qwen3_8b_fsdp2_npu.sh:154 (output only; the other PYTHON* are refused)"),
    ("PYTHONHASHSEED", "reproducible hashing (no code)"),
    ("PYTHONFAULTHANDLER", "tracebacks on a crash (no code)"),
    ("PYTHONDONTWRITEBYTECODE", "no .pyc files (no code)"),
)

_SHELL = "a shell hook: bash or sh runs or re-parses it (after `eval \"$(gspo env exports)\"` too)"
_LOADER = "a loader hook: the dynamic loader maps libraries from it into every process"
_INTERP = "an interpreter hook: it makes Python (or another interpreter) load or run code"
_COMMAND = "names a command that programs run (webbrowser, git, pagers)"
_CANN_PATH = ("a CANN install path: CANN loads operator libraries from it; the node's own set_env.sh sets it "
              "before `ray start`, and Ray workers inherit it")
_PLUGIN = "names a library or module the framework loads (code)"
_GSPO = "gspo's own variable: gspo sets it itself (fault switches, secrets file, job id, test switches)"
_RAY = "a Ray connection or auth variable: it would send gspo's and the job's Ray calls (and token) elsewhere"

# (name or prefix*, why): refused on every door. Compared upper-cased.
REFUSED_NAMES: tuple[tuple[str, str], ...] = (
    *((n, _SHELL) for n in ("PROMPT_COMMAND", "BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS",
                            "BASHOPTS", "IFS", "CDPATH", "GLOBIGNORE", "INPUTRC", "ZDOTDIR", "BASH_*", "SHELL",
                            "HISTFILE", "PATH", "HOME")),
    ("LD_*", _LOADER + " (LD_LIBRARY_PATH too: CANN's set_env.sh sets it on the node before `ray start`; a preset "
             "replacing it would load libraries from any folder and drop CANN's)"),
    ("GCONV_PATH", _LOADER), ("MALLOC_CONF", "jemalloc's options (use env.jemalloc, which gspo resolves per host)"),
    ("PYTHON*", _INTERP + " (PYTHONPATH, PYTHONSTARTUP, PYTHONWARNINGS, PYTHONHOME, PYTHONINSPECT, "
                "PYTHONBREAKPOINT, ...)"),
    *((n, _INTERP) for n in ("PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH",
                             "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LUA_INIT", "TCLLIBPATH")),
    *((n, _COMMAND) for n in ("BROWSER", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_*", "SSH_ASKPASS")),
    *((n, _CANN_PATH) for n in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
                                "ASCEND_CUSTOM_OPP_PATH", "ASCEND_CUSTOM_PATH")),
    *((n, _PLUGIN) for n in ("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN",
                             "VLLM_LOGGING_CONFIG_PATH", "VERL_USE_EXTERNAL_MODULES")),
    ("VERL_FILE_LOGGER_PATH", "gspo sets it to the run folder's metrics.jsonl"),
    ("GSPO_*", _GSPO),
    (f"{TEST_SWITCH_PREFIX}*", "test-only switches break a run on purpose: only a test's own process environment "
                               "sets them (engines/verl/cpu/platform.py)"),
    *((n, _RAY) for n in ("RAY_ADDRESS", "RAY_AUTH_*", "RAY_JOB_*", "RAY_CLIENT_*", "RAY_API_SERVER_ADDRESS",
                          "RAY_NAMESPACE", "RAY_USE_TLS", "RAY_TLS_*")),
    ("RAY_RUNTIME_ENV_*", "Ray's runtime-env hooks and plug-ins (code Ray imports)"),
)

# Allowed by family, but shown: the value sends data elsewhere.
SHOWN_NAMES: tuple[tuple[str, str], ...] = (
    ("HF_ENDPOINT", "hub requests (with HF_TOKEN) go to this address"),
    ("MODELSCOPE_ENDPOINT", "ModelScope requests (with its token) go to this address (set it with hub.endpoint)"),
    ("MODELSCOPE_DOMAIN", "ModelScope requests go to this host (the older name of MODELSCOPE_ENDPOINT)"),
)


@dataclass(frozen=True)
class Verdict:
    name: str
    kind: str  # ALLOWED | REFUSED | UNREVIEWED
    why: str  # the source (allowed) or the reason (refused, unreviewed)

    def line(self) -> str:
        """The one line a refusal or a warning prints."""
        if self.kind == REFUSED:
            return f"{self.name} cannot be set by a preset: {self.why}"
        return f"{self.name} is unreviewed: {self.why}"


def _match(name: str, table: tuple[tuple[str, str], ...]) -> str | None:
    for pattern, why in table:  # exact names first
        if not pattern.endswith("*") and name == pattern:
            return why
    best: tuple[int, str] | None = None
    for pattern, why in table:  # then the longest prefix
        if pattern.endswith("*") and name.startswith(pattern[:-1]) and (best is None or len(pattern) > best[0]):
            best = (len(pattern), why)
    return best[1] if best else None


def judge(name: str) -> Verdict:
    """The verdict on one variable name."""
    shown = _match(name, SHOWN_NAMES)
    if shown:
        return Verdict(name, UNREVIEWED, shown)
    allowed_exact = any(p == name for p, _ in ALLOWED_NAMES)
    refused = _match(name.upper(), REFUSED_NAMES)
    if refused and not allowed_exact:
        return Verdict(name, REFUSED, refused)
    allowed = _match(name, ALLOWED_NAMES)
    if allowed:
        return Verdict(name, ALLOWED, allowed)
    return Verdict(name, UNREVIEWED, "not in gspo's reviewed families (docs/security.md); it reaches every process "
                                     "of the job")


def refusals(names: object) -> list[Verdict]:
    return [v for v in map(judge, names) if v.kind == REFUSED]  # type: ignore[call-overload]


def unreviewed(names: object) -> list[Verdict]:
    return [v for v in map(judge, names) if v.kind == UNREVIEWED]  # type: ignore[call-overload]


def refusal_message(names: object) -> str | None:
    """One line for the first refused name (and how many more), or None when every name may be set."""
    bad = refusals(names)
    if not bad:
        return None
    more = f" (also refused: {', '.join(v.name for v in bad[1:])})" if bad[1:] else ""
    return bad[0].line() + more


def check_vars(value: dict[str, str]) -> dict[str, str]:
    """The preset schema's door (`env.vars`): names a shell and `ray start` accept (letters, digits, _: a name such
    as `A=1; touch x` would otherwise reach `env exports` and `cluster up`), values without NUL, and the rule's
    refusals. ValueError with one line; a value is never echoed (it may be a secret)."""
    from gspo_cli.shell import is_name

    for name, text in value.items():
        if not is_name(name):
            raise ValueError(f"{name!r} is not a valid environment variable name (letters, digits and _, not "
                             "starting with a digit)")
        if "\0" in text:
            raise ValueError(f"{name}: a variable's value cannot hold a NUL byte")
    problem = refusal_message(value)
    if problem:
        raise ValueError(problem)
    return value


def checks(value: dict[str, str]) -> list:
    """The dry-run's word on a preset's variables: one warning per unreviewed name (refused ones never load)."""
    from gspo_cli.checks import WARN, Check

    return [Check("env.vars", WARN, v.line(), [f"env.vars.{v.name}"],
                  "keep it only if you know what it does in every job process (docs/security.md, the env-var rule)")
            for v in unreviewed(value)]
