"""Verifier throughput: ``verify_batch`` on a tiny-trainer-sized batch (512 short responses) per verifier,
in process vs a local worker pool, plus the code verifier through the sandbox.

    .venv/bin/python benchmarks/bench_rewards.py [--n 512] [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from recipe.rewards import verify_batch  # noqa: E402
from recipe.sandbox import probe  # noqa: E402


def batches(n: int) -> dict[str, tuple[list, list]]:
    def rep(rec, resps):
        return [rec] * n, [resps[i % len(resps)] for i in range(n)]

    return {
        "math": rep({"mode": "thinking", "verifier": {"name": "math", "expected_answer": "\\frac{3}{4}"}},
                    ["<think>x</think>\\boxed{0.75}", "<think>x</think>\\boxed{\\frac{6}{8}}", "<think>x</think>\\boxed{3/5}", "<think>unfinished"]),
        "mcqa": rep({"verifier": {"name": "mcqa", "expected_answer": "C", "options": [{"A": "a"}, {"B": "b"}, {"C": "c"}, {"D": "d"}]}},
                    ["Answer: C", "\\boxed{B}", "I think (C).", "none"]),
        "instruction_following": rep({"verifier": {"name": "instruction_following", "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words", "change_case:english_lowercase"],
                                                   "kwargs": [{}, {"num_words": 5, "relation": "at least"}, {}]}},
                                     ["all lowercase words here without commas", "Some, Words"]),
        "structured_output": rep({"verifier": {"name": "structured_output", "schema_str": '{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}}'}},
                                 ['{"a": 1}', '{"a": "x"}', "nope"]),
        "tool_call": rep({"verifier": {"name": "tool_call", "expected_calls": [{"name": "f", "arguments": {"x": 1}}]}},
                         ["<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>", "no call"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--code-n", type=int, default=16)
    a = ap.parse_args()
    table = Table(title=f"verify_batch throughput, {a.n} responses per verifier ({os.cpu_count()} CPUs)")
    for col in ("verifier", "in process /s", f"pool x{a.workers} /s", "mean score"):
        table.add_column(col)
    for name, (recs, resps) in batches(a.n).items():
        verify_batch(recs[:8], resps[:8])  # warm-up
        t = time.perf_counter()
        out = verify_batch(recs, resps)
        inproc = a.n / (time.perf_counter() - t)
        verify_batch(recs[:8], resps[:8], workers=a.workers)  # the pool stays up between calls, as in training
        t = time.perf_counter()
        verify_batch(recs, resps, workers=a.workers)
        pooled = a.n / (time.perf_counter() - t)
        table.add_row(name, f"{inproc:.0f}", f"{pooled:.0f}", f"{sum(r.score for r in out) / len(out):.3f}")
    if probe().get("available"):
        rec = {"verifier": {"name": "code", "tests": [{"input": f"{i} {i}\n", "output": f"{2 * i}\n"} for i in range(3)]}}
        resp = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
        recs, resps = [rec] * a.code_n, [resp] * a.code_n
        t = time.perf_counter()
        out = verify_batch(recs, resps)
        inproc = a.code_n / (time.perf_counter() - t)
        t = time.perf_counter()
        verify_batch(recs, resps, workers=a.workers, chunk_size=max(1, a.code_n // a.workers))
        pooled = a.code_n / (time.perf_counter() - t)
        table.add_row("code (3 tests, sandboxed)", f"{inproc:.1f}", f"{pooled:.1f}", f"{sum(r.score for r in out) / len(out):.3f}")
    Console().print(table)


if __name__ == "__main__":
    main()
