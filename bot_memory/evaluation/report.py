"""The run as people and scripts read it: a Markdown report (printed and written as report.md),
one JSON file per run (eval-<run>.json, every answer included), and a bar chart (chart.png) of
score and injected tokens per system. matplotlib is optional (the `eval` extra): without it the
chart is skipped with a notice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot_memory.evaluation.results import (
    FULL_CONTEXT,
    NO_MEMORY,
    SYSTEMS,
    RunResult,
    category_rows,
    comparison,
    evidence_rows,
    system_rows,
)


def markdown(run: RunResult) -> str:
    judged = run.judge is not None
    questions = len(run.main_answers("memory"))
    lines = [
        f"# Memory evaluation: {run.dataset} ({run.format}), run {run.run_id}",
        "",
        f"Model: {run.provider} / {run.model}; judge: "
        + (f"{run.judge} ({run.judge_version})" if judged else "none (--judge)")
        + f"; {len(run.conversations)} conversation(s), {questions} question(s);"
        f" {run.seconds:.1f} s",
        "",
        "## Systems",
        "",
    ]
    columns = ["system", "questions", "EM", "F1"]
    columns += ["judge"] if judged else []
    columns += [
        "injected bytes/q",
        "est. tokens/q",
        "model calls",
        "prompt tokens",
        "completion tokens",
        "$",
        "wall s",
    ]
    rows = []
    for r in system_rows(run):
        row = [r["system"], str(r["questions"]), _score(r["exact"]), _score(r["f1"])]
        row += [_score(r["judge"])] if judged else []
        row += [
            _number(r["injected_bytes"]),
            _number(r["injected_tokens"]),
            _number(r["calls"]),
            _number(r["prompt_tokens"]),
            _number(r["completion_tokens"]),
            f"{r['cost_usd']:.4f}",
            f"{r['seconds']:.1f}",
        ]
        rows.append(row)
    lines += [_table(columns, rows), ""]
    lines += _comparison_lines(run, judged)
    lines += ["## By category", ""]
    metric = "judge" if judged else "f1"
    cat_columns = ["category", "n", *(s for s in SYSTEMS if _has(run, s))]
    cat_rows = [
        [
            r["category"],
            str(r.get("questions", 0)),
            *(_score(r.get(f"{s} {metric}")) for s in SYSTEMS if _has(run, s)),
        ]
        for r in category_rows(run)
    ]
    lines += [
        f"{'Judge accuracy' if judged else 'Token F1'} per category and system.",
        "",
        _table(cat_columns, cat_rows),
        "",
    ]
    evidence = evidence_rows(run)
    if evidence:
        lines += [
            "## Evidence coverage (memory, no model needed)",
            "",
            "Share of questions whose evidence turns are all / any among the sources of an"
            " available record, and of a record in the recall index the question was given.",
            "",
            _table(
                [
                    "category",
                    "n",
                    "all in records",
                    "any in records",
                    "all in recall",
                    "any in recall",
                ],
                [
                    [
                        r["category"],
                        str(r["questions"]),
                        _share(r["records_all"]),
                        _share(r["records_any"]),
                        _share(r["recall_all"]),
                        _share(r["recall_any"]),
                    ]
                    for r in evidence
                ],
            ),
            "",
        ]
    if run.forgets:
        passed = sum(1 for f in run.forgets if f.passed)
        lines += [
            "## Forgetting",
            "",
            "Each forget is said as a user would; its questions are asked again afterwards and"
            " must go unanswered, and the database is searched for what must be gone.",
            "",
            _table(
                [
                    "conversation",
                    "forget",
                    "outcome",
                    "questions",
                    "known before",
                    "answered after",
                    "unexpected traces",
                    "result",
                ],
                [
                    [
                        f.conversation,
                        f.forget_id,
                        f.outcome,
                        str(len(f.questions)),
                        str(len(f.known_before)),
                        str(len(f.leaked)),
                        str(len(f.unexpected_traces)),
                        "pass" if f.passed else "FAIL",
                    ]
                    for f in run.forgets
                ],
            ),
            "",
            f"Forgetting: {'FAILED' if run.failed else 'passed'} ({passed}/{len(run.forgets)}).",
            "",
        ]
    ingest = [c.ingest for c in run.conversations]
    notes = [
        f"Building memory took {sum(c.calls for c in ingest)} model call(s),"
        f" {sum(c.prompt_tokens for c in ingest):,} prompt and"
        f" {sum(c.completion_tokens for c in ingest):,} completion tokens,"
        f" ${sum(c.cost_usd for c in ingest):.4f} (included in memory's row).",
        *run.notes,
    ]
    for r in system_rows(run):
        if r["errors"]:
            notes.append(f"{r['errors']} {r['system']} answer(s) failed (model errors: see JSON).")
    if run.forgets:
        spent = [c.forget for c in run.conversations]
        notes.append(
            f"The forget phase took {sum(c.calls for c in spent)} model call(s),"
            f" {sum(c.prompt_tokens for c in spent):,} prompt tokens,"
            f" ${sum(c.cost_usd for c in spent):.4f} (not in the table)."
        )
    if judged:
        jc = run.judge_cost
        notes.append(
            f"The judge made {jc.calls} call(s), {jc.prompt_tokens:,} prompt and"
            f" {jc.completion_tokens:,} completion tokens, ${jc.cost_usd:.4f} (not in the table)."
        )
    lines += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    return "\n".join(lines)


def _comparison_lines(run: RunResult, judged: bool) -> list[str]:
    compared = comparison(run)
    lines = []
    for other in (NO_MEMORY, FULL_CONTEXT):
        c = compared.get(other)
        if c is None:
            continue
        parts = [f"F1 {_signed(c['f1_difference'])}", f"EM {_signed(c['exact_difference'])}"]
        if judged:
            parts.append(f"judge {_signed(c['judge_difference'])}")
        parts += [
            f"injected tokens ×{_ratio(c['injected_tokens_ratio'])}",
            f"prompt tokens ×{_ratio(c['prompt_tokens_ratio'])}",
            f"$ ×{_ratio(c['cost_ratio'])}",
        ]
        lines.append(f"- Memory vs {other}: " + ", ".join(parts))
    return [*lines, ""] if lines else []


def write(run: RunResult, out: Path) -> dict[str, Path | None]:
    """report.md, eval-<run>.json and chart.png in `out`; the chart is None without
    matplotlib."""
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.md"
    report.write_text(markdown(run), encoding="utf-8")
    data = out / f"eval-{run.run_id}.json"
    data.write_text(
        json.dumps(run.as_dict(), ensure_ascii=False, indent=2, default=str), encoding="utf-8"
    )
    return {"report": report, "json": data, "chart": chart(run, out / "chart.png")}


def chart(run: RunResult, path: Path) -> Path | None:
    """Score and injected tokens per question, per system, side by side."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = system_rows(run)
    names = [r["system"] for r in rows]
    metrics = [("F1", "f1"), ("EM", "exact")]
    if run.judge is not None:
        metrics.append(("judge", "judge"))
    fig, (scores, tokens) = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.8 / len(metrics)
    for i, (label, key) in enumerate(metrics):
        xs = [j + (i - (len(metrics) - 1) / 2) * width for j in range(len(names))]
        bars = scores.bar(xs, [r[key] or 0.0 for r in rows], width, label=label)
        scores.bar_label(bars, fmt="%.2f", fontsize=8)
    scores.set_xticks(range(len(names)), names)
    scores.set_ylim(0, 1)
    scores.set_title("score")
    scores.legend()
    bars = tokens.bar(names, [r["injected_tokens"] or 0.0 for r in rows], color="tab:gray")
    tokens.bar_label(bars, fmt="%.0f", fontsize=8)
    tokens.set_title("injected context, est. tokens per question")
    fig.suptitle(f"{run.dataset}: {run.model} ({run.run_id})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _has(run: RunResult, system: str) -> bool:
    return bool(run.main_answers(system))


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "| " + " | ".join(columns) + " |"
    rule = "| " + " | ".join("---" for _ in columns) + " |"
    return "\n".join([head, rule, *("| " + " | ".join(r) + " |" for r in rows)])


def _score(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _share(value: Any) -> str:
    return "–" if value is None else f"{value:.0%}"


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _ratio(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"
