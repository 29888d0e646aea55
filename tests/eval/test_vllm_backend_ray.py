"""VLLMBackend's Ray side on a real local Ray instance, with a stand-in `vllm` package (vLLM itself is never
installed here): two logical GPUs -> two engine actors, each pinned to its own device; the shard/merge puts
every sample back in its (prompt, sample) slot; progress reaches the total; per-slot seeds are used."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

STUB = textwrap.dedent('''
    """Stand-in for vllm.LLM / SamplingParams: echoes prompt, seed and sample index, records its devices."""
    import os

    class SamplingParams:
        def __init__(self, n=1, temperature=1.0, top_p=1.0, top_k=-1, max_tokens=16, seed=None):
            self.n, self.temperature, self.top_p, self.top_k = n, temperature, top_p, top_k
            self.max_tokens, self.seed = max_tokens, seed

    class _Out:
        def __init__(self, index, text, token_ids, finish_reason):
            self.index, self.text, self.token_ids, self.finish_reason = index, text, token_ids, finish_reason

    class _Req:
        def __init__(self, outputs):
            self.outputs = outputs

    class _Tokenizer:  # bytes as token ids; records that no special tokens were asked for
        def __call__(self, text, add_special_tokens=True):
            assert add_special_tokens is False
            return {"input_ids": list(text.encode())}

    class LLM:
        def __init__(self, model, **kwargs):
            self.model, self.kwargs = model, kwargs
            self.devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")

        def get_tokenizer(self):
            return _Tokenizer()

        def generate(self, prompts, sampling_params=None, use_tqdm=False):
            reqs = []
            for inp, sp in zip(prompts, sampling_params):
                prompt = bytes(inp["prompt_token_ids"]).decode()
                outs = [_Out(i, f"{prompt}|seed={sp.seed}|i={i}|dev={self.devices}|T={sp.temperature}",
                             list(range(1 + (sp.seed + i) % sp.max_tokens)),
                             "length" if (sp.seed + i) % sp.max_tokens == sp.max_tokens - 1 else "stop")
                        for i in reversed(range(sp.n))]  # out of order on purpose: the backend sorts by index
                reqs.append(_Req(outs))
            return reqs
''')


@pytest.fixture()
def stub_ray(tmp_path, monkeypatch):
    pkg = tmp_path / "stub" / "vllm"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(STUB)
    path = str(tmp_path / "stub")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([path, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(path)
    import ray

    # two logical GPUs on a CPU machine: Ray hands each actor one and sets CUDA_VISIBLE_DEVICES for it.
    # address="local": always a new instance of this test's own, never a cluster a `ray start` left on the host
    # (a bare ray.init() attaches to the one in /tmp/ray/ray_current_cluster, and then refuses num_cpus/num_gpus).
    ray.init(address="local", num_cpus=2, num_gpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
    try:
        yield
    finally:
        ray.shutdown()
        sys.modules.pop("vllm", None)


@pytest.mark.ray
def test_vllm_backend_actors_shard_and_merge(stub_ray):
    from gspo_cli.eval.backends import make_backend
    from gspo_cli.eval.types import Sampling

    backend = make_backend("vllm", "/models/x", device="cuda", tp=1, chunks_per_actor=3, max_model_len=64)
    try:
        assert [(p.node, p.devices) for p in backend.plan] == [(0, (0,)), (0, (1,))]
        prompts = [f"P{i}" for i in range(7)]
        n, seed = 5, 100
        ticks = []
        out = backend.generate(prompts, Sampling(temperature=0.7, max_tokens=9, seed=seed), n,
                               progress=lambda done, total: ticks.append((done, total)))
    finally:
        backend.close()
    assert ticks[-1] == (35, 35) and len(ticks) == 6  # 2 actors x 3 calls
    devices = set()
    for p, per in enumerate(out):
        assert len(per) == n
        for j, g in enumerate(per):
            prompt, seed_part, idx, dev, temp = g.text.split("|")
            s = int(seed_part.split("=")[1])
            # the slot (p, j) came from a segment starting at j - i with seed base + p*n + start
            i = int(idx.split("=")[1])
            assert prompt == f"P{p}" and s == seed + p * n + (j - i) and temp == "T=0.7"
            assert g.tokens == 1 + (s + i) % 9 and g.token_ids == tuple(range(g.tokens))
            assert g.truncated == ((s + i) % 9 == 8)
            devices.add(dev)
    assert devices == {"dev=0", "dev=1"}  # both engines did work, each on its own GPU
