"""Run every bench and print its ratios against the raw baseline measured in the same process.

make bench        (or .venv/bin/python bench/run.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_flood
import bench_intents
import bench_late_worker
import bench_memory
import bench_metrics
import bench_pipeline
import bench_redaction


def main() -> None:
    intents = bench_intents.run()
    print(
        f"recognize per message: {intents['ours_us_per_call']:.2f} us vs one re.search "
        f"{intents['baseline_us_per_call']:.2f} us -> ratio {intents['ratio']:.1f}; "
        f"with Russian and Ukrainian in the stream: {intents['four_languages_us_per_call']:.2f} us"
        f" -> ratio {intents['four_languages_ratio']:.1f}"
    )
    red = bench_redaction.run()
    print(
        f"redact per short message: {red['redact_us_per_message']:.2f} us vs one re.search "
        f"{red['baseline_re_search_us_per_message']:.2f} us -> ratio {red['message_ratio']:.1f}; "
        f"per KB of chat: {red['redact_us_per_kb']:.1f} us vs one re.search "
        f"{red['baseline_re_search_us_per_kb']:.1f} us -> ratio {red['ratio']:.1f}; "
        f"slowest 100 KB adversarial input: {red['adversarial_100kb_ms']:.1f} ms "
        f"({red['adversarial_growth_10kb_to_100kb']:.2f}x linear from 10 KB)"
    )
    bench_memory.report(bench_memory.run())
    bench_metrics.report(bench_metrics.run())
    bench_pipeline.report(bench_pipeline.run())
    bench_late_worker.report(bench_late_worker.run())
    bench_flood.report(bench_flood.run())


if __name__ == "__main__":
    main()
