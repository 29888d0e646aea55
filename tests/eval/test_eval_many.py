"""Several benchmarks in one `gspo eval` job (aime2024,aime2025,amc2023) on a tiny run with two checkpoints, hf
backend: one backend load per checkpoint for all benchmarks, every results.json recomputed from its samples, one
table, the report's chart across them, and one clear line for a bad list."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from test_eval_e2e import gspo, load_samples, recompute_and_compare, rescore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
from bench_factories import write_aime25, write_amc23  # noqa: E402

BENCHES = ("aime2024", "aime2025", "amc2023")


def _prepared(raw: Path, source: str, dest: Path) -> None:
    """The val split the real adapter builds from a raw file in the published schema (no job)."""
    from gspo_cli.data import sources
    from gspo_cli.data.readers import RawFile
    from gspo_cli.data.rows import write_parquet

    built = sources.get(source).build(RawFile(raw, source), sources.BuildOptions(splits=("val",)))
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(built.tables["val"], dest)


@pytest.fixture()
def many_home(eval_home, tmp_path) -> Path:
    """eval_home (run tiny-test, step 5; aime-2024 prepared) plus step 10, and aime-2025 and amc-2023 as their real
    adapters build them from files in the published schemas."""
    run = eval_home / "runs" / "tiny-test" / "checkpoints"
    shutil.copytree(run / "global_step_5", run / "global_step_10")
    _prepared(write_aime25(tmp_path / "aime25.parquet"), "aime-2025", eval_home / "data" / "aime-2025" / "val.parquet")
    _prepared(write_amc23(tmp_path / "amc23.parquet"), "amc-2023", eval_home / "data" / "amc-2023" / "val.parquet")
    return eval_home


ARGS = ["--preset", "tiny", "--n", "2", "--k", "1,2", "--max-tokens", "6", "--local"]


def test_three_benchmarks_one_job_one_table(many_home):
    proc = gspo("eval", ",".join(BENCHES), "--model", "tiny-test:all", *ARGS, "--json", home=many_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert [(r["benchmark"], r["model"]["step"]) for r in results] == [(b, s) for b in BENCHES for s in (5, 10)]
    # one job: one backend load per checkpoint, shared by the three benchmarks
    assert proc.stderr.count("eval aime2024, aime2025, amc2023: 30 + 30 + 40 problems") == 2, proc.stderr[-2000:]
    for step in (5, 10):
        loads = {r["timing"]["load_s"] for r in results if r["model"]["step"] == step}
        assert len(loads) == 1
    problems = {"aime2024": 30, "aime2025": 30, "amc2023": 40}
    for r in results:
        assert r["timing"]["engine_shared_by"] == list(BENCHES)
        assert r["data"]["problems"] == problems[r["benchmark"]]
        out = Path(r["files"]["results"]).parent
        assert out.parent == many_home / "runs" / "tiny-test" / "eval" and out.name.startswith(
            f"{r['benchmark']}-{r['model']['step']}-")
        samples = load_samples(out / "samples.jsonl")
        assert {s["data_source"] for s in samples} == {r["benchmark"]}
        recompute_and_compare(r, samples)
        rescore(samples)
    # again: nothing left to do, no job; one table of the six (benchmark, step) pairs
    proc = gspo("eval", ",".join(BENCHES), "--model", "tiny-test:all", *ARGS, home=many_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "6 of 6 benchmark x checkpoint pairs" in proc.stderr and "in one job" not in proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│") and line.strip("│ ").startswith(BENCHES)]
    assert len(rows) == 6 and max(map(len, proc.stdout.splitlines())) <= 80, proc.stdout
    assert "…" not in proc.stdout  # nothing cut
    assert "gspo report tiny-test" in proc.stderr
    # the report's eval chart draws the three benchmarks of the run
    from gspo_cli.report.build import make_report

    index = make_report(many_home / "runs" / "tiny-test")
    assert {e["benchmark"] for e in index["evals"]} == set(BENCHES)
    assert any(c.endswith("eval_accuracy.png") for c in index["charts"])


def test_one_backend_load_per_checkpoint_for_all_benchmarks(many_home, tiny_model_dir, monkeypatch):
    """The job's own code with the real hf backend, counted: 3 benchmarks x 2 checkpoints load it twice; the same
    evals one benchmark per request (control) load it six times."""
    from gspo_cli.eval.backends import BACKENDS
    from gspo_cli.eval.backends.hf import HFBackend
    from gspo_cli.eval.request import EvalRequest
    from gspo_cli.eval.service import run_evals

    loads = []

    def counted(model_path, **options):
        loads.append(model_path)
        return HFBackend(model_path, **options)

    monkeypatch.setitem(BACKENDS, "hf-counted", lambda: counted)
    common = dict(model="tiny-test:all", preset="tiny", n=1, k=[1], max_tokens=4, limit=3, backend="hf-counted",
                  score_workers=0)
    results = run_evals(EvalRequest(",".join(BENCHES), **common))
    assert len(results) == 6 and len(loads) == 2
    loads.clear()
    for name in BENCHES:
        run_evals(EvalRequest(name, **common, force=True))
    assert len(loads) == 6


@pytest.mark.parametrize("bench,extra,needle", [
    ("aime2024,amc2024", [], "unknown benchmark 'amc2024' (did you mean 'amc2023'?)"),
    ("aime2024,aime2024", [], "benchmark 'aime2024' is named twice"),
    ("aime2024,aime2025", ["--data", "x.parquet"], "--data names one file or folder"),
    ("aime2024,aime2025", ["--out", "somewhere"], "--out names one file or folder"),
    ("aime2024,,amc2023", [], "bad benchmark name ''"),
])
def test_bad_benchmark_list_is_one_clean_line(many_home, bench, extra, needle):
    proc = gspo("eval", bench, "--model", "tiny-test", *ARGS, *extra, home=many_home)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr


def test_missing_benchmark_data_names_the_prepare_command(eval_home):
    shutil.rmtree(eval_home / "data" / "amc-2023")
    proc = gspo("eval", "aime2024,amc2023", "--model", "tiny-test", *ARGS, home=eval_home)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "benchmark data not found" in proc.stderr
    assert "gspo prepare-data --preset tiny --dataset amc-2023" in " ".join(proc.stderr.split())


def test_verl_verifier_refuses_a_data_source_verl_cannot_score(eval_home):
    """reward.verifier verl on amc2023: one line before any model loads (verl's own dispatch asked); aime2025, which
    verl sends to math_dapo, passes the same check (control)."""
    from gspo_cli.errors import ConfigError
    from gspo_cli.eval.request import EvalRequest
    from gspo_cli.eval.service import _verl_scores, run_evals

    with pytest.raises(ConfigError, match="no scorer for data source 'amc2023'") as err:
        run_evals(EvalRequest("amc2023", model="tiny-test", preset="tiny", sets=["reward.verifier=verl"]))
    assert "reward.verifier=gspo" in err.value.hint
    _verl_scores("aime2025", {"aime2025"})
