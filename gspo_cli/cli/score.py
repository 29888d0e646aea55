"""`gspo score FILE`: score a JSONL or parquet of responses with the preset's verifier, optionally against a peer."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def score_command(
    file: str = typer.Argument(..., help="JSON lines or parquet: response, ground_truth, optional data_source."),
    preset: str = typer.Option("tiny", "--preset", "-p", help="Preset whose verifier (reward) to score with."),
    compare: str = typer.Option(None, "--compare", help="Also score with verl or math-verify; print disagreements."),
    data_source: str = typer.Option(None, "--data-source",
                                    help="For rows without one (default: the preset's training data source)."),
    show: int = typer.Option(20, "--show", help="Disagreements to list with --compare."),
    sets: list[str] | None = options.sets("reward.verifier=verl"),
    json_out: bool = options.json_out("Print the report as JSON on stdout."),
) -> None:
    """Score a rollout dump (or eval's samples.jsonl) the way training would: accuracy, extraction rate, why.

    Only a final answer counts (an `Answer:` line, a final `\\boxed{}`, or a concluding statement that ends the
    response); see docs/verifier.md. A bad row stops the run with its line number (exit 2).

    [bold]gspo score rollouts.jsonl --preset qwen3-8b-2x8[/]

    [bold]gspo score samples.parquet --compare verl --show 50[/]

    [bold]gspo score samples.jsonl --compare math-verify --json > report.json[/]
    """
    from gspo_cli.console import emit, out
    from gspo_cli.rewards.scoring_service import run_score
    from gspo_cli.rewards.scoring_view import render

    report = run_score(file, preset=preset, compare=compare, data_source=data_source, show=show,
                       sets=list(sets or []))
    emit(json_out, report, render, report, out)
