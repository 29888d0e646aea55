#!/usr/bin/env bash
# gpu_eval_check.sh — on a GPU machine with vLLM: gspo's eval `vllm` backend (Ray actor per TP group, sharded
# prompts, merged results) vs plain `vllm.LLM.generate`, same random-init small Qwen3, same prompts; prints a
# tokens/s table (and $OUT/gpu_eval_check.json when $OUT is set).
#
# Python: $PYTHON if set, else the first of .venv-gpu/bin/python, .venv/bin/python, python3 that imports vllm,
# ray and transformers. If none does, it creates .venv-gpu and pip-installs vllm there (needs a package index).
# Extra arguments go to benchmarks/gpu_eval_check.py (e.g. --n 16 --max-tokens 1024 --no-enforce-eager --tp 2).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

has_stack() { "$1" -c "import vllm, ray, transformers, tokenizers" >/dev/null 2>&1; }

PY=""
for cand in "${PYTHON:-}" "$REPO/.venv-gpu/bin/python" "$REPO/.venv/bin/python" "$(command -v python3 || true)"; do
  if [[ -n "$cand" && -x "$cand" ]] && has_stack "$cand"; then PY="$cand"; break; fi
done
if [[ -z "$PY" ]]; then
  echo "no Python with vllm + ray found; creating $REPO/.venv-gpu (pip install vllm)" >&2
  python3 -m venv "$REPO/.venv-gpu"
  "$REPO/.venv-gpu/bin/pip" install -q --upgrade pip
  "$REPO/.venv-gpu/bin/pip" install -q vllm "ray[default]" pyyaml pydantic typer rich pyarrow
  PY="$REPO/.venv-gpu/bin/python"
  has_stack "$PY" || { echo "vllm install failed; install vllm and rerun with PYTHON=/path/to/python" >&2; exit 2; }
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
"$PY" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false
exec "$PY" "$REPO/benchmarks/gpu_eval_check.py" "$@"
