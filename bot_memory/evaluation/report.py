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
        "prompt tokens/answer",
        "$/answer",
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
            _number(r["prompt_tokens_per_answer"]),
            f"{r['cost_per_answer_usd'] or 0:.5f}",
            _number(r["calls"]),
            _number(r["prompt_tokens"]),
            _number(r["completion_tokens"]),
            f"{r['cost_usd']:.4f}",
            f"{r['seconds']:.1f}",
        ]
        rows.append(row)
    lines += [
        "Scores leave LoCoMo's adversarial category out (published LoCoMo figures use"
        " categories 1-4); it has its own row below. Prompt tokens/answer is the whole prompt"
        " of an answer (instructions, history, tools, every round), injected bytes only the"
        " recalled part.",
        "",
        _table(columns, rows),
        "",
    ]
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
        f"{'Judge accuracy' if judged else 'Token F1'} per category and system; overall is"
        " every category but adversarial.",
        "",
        _table(cat_columns, cat_rows),
        "",
    ]
    lines += coverage_lines(run)
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
    notes.extend(
        f"{r['errors']} {r['system']} answer(s) failed (model errors: see JSON)."
        for r in system_rows(run)
        if r["errors"]
    )
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


def coverage_lines(run: RunResult) -> list[str]:
    """The model-free part: evidence coverage per category, and records per conversation."""
    evidence = evidence_rows(run)
    if not evidence:
        return []
    lines = [
        "## Evidence coverage (memory, no model needed)",
        "",
        "Share of questions whose evidence turns are all held by one record among: the"
        " available records (in records); the records the request's memory block names before"
        " any tool call (its index or directory and the question's matches: presented; the"
        " index or directory alone: index); and the records query_memories returns for the"
        " question's key words (its 12 results: retrieval). In brackets, the share whose"
        " evidence is all there spread over several records. Cited: every evidence turn among"
        " what the records cite. The block's mean and largest size in bytes.",
        "",
        _table(
            [
                "category",
                "n",
                "in records",
                "presented",
                "index",
                "retrieval",
                "cited",
                "block bytes (mean / max)",
            ],
            [
                [
                    r["category"],
                    str(r["questions"]),
                    _pair(r["records_one"], r["records_all"]),
                    _pair(r["recall_one"], r["recall_all"]),
                    _share(r["listed_one"]),
                    _pair(r["retrieval_one"], r["retrieval_all"]),
                    _share(r["cited_all"]),
                    f"{r['block_mean_bytes']:.0f} / {r['block_max_bytes']}",
                ]
                for r in evidence
            ],
        ),
        "",
    ]
    busy = any(c.talked_after for c in run.conversations)
    columns = ["conversation", "turns", "questions", "records", "replaced"]
    columns += ["replaced over the replay", "in the index"]
    columns += ["holding its own turns", "talked after it"] if busy else []
    rows = []
    for c in run.conversations:
        row = [c.id, str(c.turns), str(c.questions), str(c.records), str(c.replaced)]
        row += [str(c.replaced_over_replay), str(c.index_ids)]
        row += [str(c.own_records), ", ".join(c.talked_after) or "–"] if busy else []
        rows.append(row)
    lines += [
        "## Records per conversation",
        "",
        "After the conversation was played: its scope's available records, those of them a"
        " later one replaced (kept, no longer recalled or matched), every record seen replaced"
        " after any of the replay's ticks (inactivity pruning takes replaced records, which are"
        " never used, so some are gone by the end), and how many the index names."
        + (
            " Busy group: turns and records include the conversations talked after it in its"
            " Topic; the records holding a turn of its own are counted apart."
            if busy
            else ""
        ),
        "",
        _table(columns, rows),
        "",
    ]
    return lines


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
    """Per system: score, the whole prompt per answer, cost per answer; and memory's evidence
    coverage. The title says whether forgetting held."""
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
    fig, ((scores, prompts), (dollars, coverage)) = plt.subplots(2, 2, figsize=(11, 7))
    width = 0.8 / len(metrics)
    for i, (label, key) in enumerate(metrics):
        xs = [j + (i - (len(metrics) - 1) / 2) * width for j in range(len(names))]
        bars = scores.bar(xs, [r[key] or 0.0 for r in rows], width, label=label)
        scores.bar_label(bars, fmt="%.2f", fontsize=8)
    scores.set_xticks(range(len(names)), names)
    scores.set_ylim(0, 1)
    scores.set_title("score (adversarial apart)")
    scores.legend()
    bars = prompts.bar(names, [r["prompt_tokens_per_answer"] or 0.0 for r in rows], color="gray")
    prompts.bar_label(bars, fmt="%.0f", fontsize=8)
    prompts.set_title("whole prompt per answer, tokens")
    bars = dollars.bar(names, [r["cost_per_answer_usd"] or 0.0 for r in rows], color="tab:green")
    dollars.bar_label(bars, fmt="%.5f", fontsize=8)
    dollars.set_ylim(bottom=0)
    dollars.set_title("$ per answer" + ("" if any(r["cost_usd"] for r in rows) else " (no price)"))
    overall = next((r for r in evidence_rows(run) if r["category"] == "overall"), None)
    if overall is not None:
        labels = ["in records", "cited", "presented", "retrieval"]
        keys = ["records_one", "cited_all", "recall_one", "retrieval_one"]
        bars = coverage.bar(labels, [overall[k] or 0.0 for k in keys], color="tab:purple")
        coverage.bar_label(bars, fmt="%.2f", fontsize=8)
        coverage.set_ylim(0, 1.12)
    coverage.set_title("memory: evidence in one record (cited: all turns)")
    title = f"{run.dataset}: {run.model} ({run.run_id})"
    if run.forgets:
        passed = sum(1 for f in run.forgets if f.passed)
        verdict = "FAILED" if run.failed else "passed"
        title += f"; forgetting {verdict} {passed}/{len(run.forgets)}"
    fig.suptitle(title)
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


def _pair(share: Any, bracketed: Any) -> str:
    return f"{_share(share)} ({_share(bracketed)})"


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _ratio(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"
