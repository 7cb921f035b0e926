"""Math scorer parity: the project's AIME 2025 / HMMT Feb 2025 verdicts and IMO-AnswerBench's rule-based pre-check
against NeMo-Skills' math grader, on answer-format variants generated here (every item x every format), per format
and overall.

The reference runs in its own environment as a subprocess (``nemo_skills_math_reference.py``): a checkout of
NVIDIA/NeMo-Skills (``--nemo-skills-src``, the folder holding ``nemo_skills/``) and a Python whose venv holds what
its math grader imports (``--reference-python``; ``pip install "math-verify[antlr4_9_3]" fire rich``). Nothing of
NeMo-Skills is imported into the project. A verdict is (correct?, no answer?); "no answer" is NeMo-Skills'
``predicted_answer is None``.

Target: every format agrees on every item, or is a documented deviation (docs/EVAL_HARNESS.md, "Math grading");
the script exits 1 when an undocumented format disagrees.

    .venv/bin/python benchmarks/bench_math_parity.py --nemo-skills-src DIR --reference-python VENV/bin/python \
        [--suite aime25 --suite hmmt_feb25 --suite imo-answer] [--imo-items 100] [--data-root EVAL_FIXTURES_DIR]
        [--json OUT.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from recipe.eval.benchmarks.suite_registry import get_suite  # noqa: E402
from recipe.eval.sources import read_rows  # noqa: E402
from recipe.eval.thinking import thinking_flag  # noqa: E402

DATA = {"aime25": ("aime25/test.txt", "expected_answer"), "hmmt_feb25": ("hmmt_feb25/hmmt_feb25.jsonl", "answer"),
        "imo-answer": ("imo_bench", "Short Answer")}  # IMO-AnswerBench v2 (PR 18 fix): its rule-based pre-check
# Formats on which the project deliberately differs from NeMo-Skills (docs/EVAL_HARNESS.md, "Math grading").
DOCUMENTED = {"fbox": "\\fbox read when no \\boxed", "boxed_space_token": "\\boxed 70 read",
              "boxed_space_brace": "\\boxed {70} read", "leading_zeros": "integers compare by value"}


def _is_int(g: str) -> bool:
    return g.strip().lstrip("+-").isdigit()


def _wrong(g: str) -> str:
    return str(int(g) + 1) if _is_int(g) else f"2\\left({g}\\right)"


@dataclass(frozen=True)
class Format:
    name: str
    build: Callable[[str], Any]  # gold -> response (text or chat message), None = not applicable to this gold
    thinking: str = "auto"


def _only_int(fn: Callable[[str], str]) -> Callable[[str], str | None]:
    return lambda g: fn(g) if _is_int(g) else None


FORMATS: list[Format] = [
    Format("plain_sentence", lambda g: f"The answer is \\boxed{{{g}}}."),
    Format("bare_boxed", lambda g: f"\\boxed{{{g}}}"),
    Format("inline_math_boxed", lambda g: f"So the answer is $\\boxed{{{g}}}$."),
    Format("display_math_boxed", lambda g: f"Therefore\n\\[\n\\boxed{{{g}}}\n\\]"),
    Format("paren_math_boxed", lambda g: f"Hence \\(\\boxed{{{g}}}\\)."),
    Format("think_closed", lambda g: f"<think>try \\boxed{{{_wrong(g)}}} first</think>The answer is \\boxed{{{g}}}."),
    Format("think_closed_no_box_after", lambda g: f"<think>so \\boxed{{{g}}}</think>The answer is {g}."),
    Format("think_unclosed", lambda g: f"<think>it is probably \\boxed{{{g}}}, let me check"),
    Format("close_tag_only", lambda g: f"the template opened the block ... \\boxed{{{_wrong(g)}}}</think>\\boxed{{{g}}}"),
    Format("think_on_closed", lambda g: f"reasoning</think>\n\nThe answer is \\boxed{{{g}}}.", "on"),
    Format("think_on_plain", lambda g: f"The answer is \\boxed{{{g}}}.", "on"),
    Format("think_off_plain", lambda g: f"The answer is \\boxed{{{g}}}.", "off"),
    Format("think_off_block", lambda g: f"<think>draft \\boxed{{{_wrong(g)}}}</think>final \\boxed{{{g}}}", "off"),
    Format("think_off_answer_inside", lambda g: f"<think>\\boxed{{{g}}}</think>done", "off"),
    Format("chat_message_split", lambda g: {"role": "assistant", "content": f"\\boxed{{{g}}}",
                                            "reasoning_content": f"\\boxed{{{_wrong(g)}}}"}),
    Format("last_box_wins", lambda g: f"First \\boxed{{{_wrong(g)}}}, no wait: \\boxed{{{g}}}"),
    Format("last_box_wrong", lambda g: f"First \\boxed{{{g}}}, no wait: \\boxed{{{_wrong(g)}}}"),
    Format("last_box_unclosed", lambda g: f"\\boxed{{{g}}} and finally \\boxed{{{g}"),
    Format("nested_boxed", lambda g: f"\\boxed{{\\boxed{{{g}}}}}"),
    Format("empty_last_box", lambda g: f"\\boxed{{{g}}} \\boxed{{}}"),
    Format("no_box", lambda g: f"The final answer is {g}."),
    Format("bold_no_box", lambda g: f"**Answer:** {g}"),
    Format("wrong_answer", lambda g: f"\\boxed{{{_wrong(g)}}}"),
    Format("boxed_dollar_sign", lambda g: f"\\boxed{{\\${g}}}"),
    Format("boxed_text", lambda g: f"\\boxed{{\\text{{{g}}}}}"),
    Format("boxed_trailing_period", lambda g: f"\\boxed{{{g}.}}"),
    Format("boxed_spaces", lambda g: f"\\boxed{{ {g} }}"),
    Format("boxed_thin_space", lambda g: f"\\boxed{{{g}\\,}}"),
    Format("boxed_newlines", lambda g: f"\\boxed{{\n{g}\n}}"),
    Format("boxed_equation", lambda g: f"\\boxed{{x = {g}}}"),
    Format("boxed_left_right", lambda g: f"\\boxed{{\\left({g}\\right)}}"),
    Format("boxed_units", _only_int(lambda g: f"\\boxed{{{g} \\text{{ units}}}}")),
    Format("boxed_degrees", _only_int(lambda g: f"\\boxed{{{g}^\\circ}}")),
    Format("boxed_percent", _only_int(lambda g: f"\\boxed{{{g}\\%}}")),
    Format("boxed_decimal", _only_int(lambda g: f"\\boxed{{{g}.0}}")),
    Format("boxed_fraction_form", _only_int(lambda g: f"\\boxed{{\\frac{{{2 * int(g)}}}{{2}}}}")),
    Format("boxed_dfrac_form", _only_int(lambda g: f"\\boxed{{\\dfrac{{{3 * int(g)}}}{{3}}}}")),
    Format("boxed_sum", _only_int(lambda g: f"\\boxed{{{int(g) - 1} + 1}}")),
    Format("boxed_approx", _only_int(lambda g: f"\\boxed{{\\approx {g}}}")),
    Format("leading_zeros", _only_int(lambda g: f"\\boxed{{{int(g):03d}}}" if int(g) < 100 else f"\\boxed{{0{g}}}")),
    Format("boxed_space_token", lambda g: f"The answer is \\boxed {g}" if " " not in g else None),
    Format("boxed_space_brace", lambda g: f"The answer is \\boxed {{{g}}}."),
    Format("fbox", lambda g: f"The answer is \\fbox{{{g}}}."),
]


def _rows(suite: str, data_root: Path, imo_items: int) -> list[dict]:
    path, _ = DATA[suite]
    if suite != "imo-answer":
        return read_rows(data_root / path)
    from recipe.eval.olympiad.imo.imo_answer import load_answerbench
    rows = load_answerbench(data_root / path, "v2-pr18").rows
    step = max(1, len(rows) // imo_items)
    return rows[::step][:imo_items]  # spread over the four categories


def build_cases(suites: list[str], data_root: Path, imo_items: int = 100) -> list[dict]:
    cases = []
    for suite in suites:
        _, gold_field = DATA[suite]
        for row in _rows(suite, data_root, imo_items):
            gold = str(row[gold_field])
            for fmt in FORMATS:
                resp = fmt.build(gold)
                if resp is None:
                    continue
                text = resp if isinstance(resp, str) else resp["content"]  # a reasoning parser hands over content
                cases.append({"suite": suite, "row": row, "gold": gold, "format": fmt.name, "thinking": fmt.thinking,
                              "response": resp, "text": text})
    return cases


class _IncorrectJudge:
    """IMO-AnswerBench: answers the pre-check does not settle go to the judge; here it says Incorrect, so the
    verdict is the pre-check's own."""

    def complete(self, messages, **sampling):
        return "\\boxed{Incorrect}"


def ours(cases: list[dict]) -> list[dict]:
    from recipe.eval.olympiad.imo.imo_answer import grade_response
    from recipe.eval.olympiad.judge_prompts import PromptTemplate
    prompt = PromptTemplate("{problem} {predicted_answer} {expected_answer}", None, "bench", "")
    out = []
    for c in cases:
        if c["suite"] == "imo-answer":
            g = grade_response(c["row"], c["response"], _IncorrectJudge(), prompt, thinking=thinking_flag(c["thinking"]))
            out.append({"correct": g["correct"], "no_answer": g["extracted"] is None, "extracted": g["extracted"]})
            continue
        v = get_suite(c["suite"]).score(c["row"], c["response"], thinking_flag(c["thinking"]))
        out.append({"correct": v["score"] == 1.0, "no_answer": v["extracted"] is None, "extracted": v["extracted"]})
    return out


def reference(cases: list[dict], src: Path, python: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        cin, cout = Path(tmp) / "cases.jsonl", Path(tmp) / "verdicts.jsonl"
        cin.write_text("".join(json.dumps({k: c[k] for k in ("gold", "text", "thinking")}) + "\n" for c in cases))
        env = dict(os.environ, PYTHONPATH=str(src))
        subprocess.run([python, str(Path(__file__).with_name("nemo_skills_math_reference.py")), str(cin), str(cout)],
                       env=env, check=True)
        rows = [json.loads(x) for x in cout.read_text().splitlines()]
    return [{"correct": r["correct"], "no_answer": r["predicted_answer"] is None,
             "extracted": r["predicted_answer"]} for r in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nemo-skills-src", required=True, type=Path, help="Folder holding NeMo-Skills' nemo_skills/.")
    ap.add_argument("--reference-python", required=True, help="Python of the venv the reference runs in.")
    ap.add_argument("--suite", action="append", choices=sorted(DATA), help="Suites (default: all).")
    ap.add_argument("--data-root", type=Path, default=ROOT.parent / "shared" / "fixtures" / "eval",
                    help="Benchmark fixtures (aime25/, hmmt_feb25/, imo_bench/); default: the workplace copy beside the project.")
    ap.add_argument("--imo-items", type=int, default=100, help="IMO-AnswerBench items, spread over the 400.")
    ap.add_argument("--json", type=Path, help="Also write every disagreement and the table here.")
    args = ap.parse_args(argv)
    if not (args.nemo_skills_src / "nemo_skills" / "evaluation" / "math_grader.py").is_file():
        ap.error(f"{args.nemo_skills_src} holds no nemo_skills/evaluation/math_grader.py")
    suites = args.suite or sorted(DATA)
    cases = build_cases(suites, args.data_root, args.imo_items)
    mine, ref = ours(cases), reference(cases, args.nemo_skills_src, args.reference_python)
    table = Table(title=f"math verdicts vs NeMo-Skills ({len(cases)} responses, {len(FORMATS)} formats)")
    for col in ("suite", "format", "mode", "n", "agree", "ours ok", "ref ok", "ours none", "ref none", "status"):
        table.add_column(col)
    report, bad = [], []
    for suite in suites:
        for fmt in FORMATS:
            idx = [i for i, c in enumerate(cases) if c["suite"] == suite and c["format"] == fmt.name]
            if not idx:
                continue
            same = [i for i in idx if (mine[i]["correct"], mine[i]["no_answer"]) == (ref[i]["correct"], ref[i]["no_answer"])]
            status = "equal" if len(same) == len(idx) else ("documented: " + DOCUMENTED[fmt.name]
                                                             if fmt.name in DOCUMENTED else "DIFFERS")
            if status == "DIFFERS":
                bad.append(fmt.name)
            row = {"suite": suite, "format": fmt.name, "thinking": fmt.thinking, "n": len(idx), "agree": len(same),
                   "ours_correct": sum(mine[i]["correct"] for i in idx), "ref_correct": sum(ref[i]["correct"] for i in idx),
                   "ours_no_answer": sum(mine[i]["no_answer"] for i in idx),
                   "ref_no_answer": sum(ref[i]["no_answer"] for i in idx), "status": status,
                   "differences": [{"gold": cases[i]["gold"], "text": cases[i]["text"], "ours": mine[i], "ref": ref[i]}
                                   for i in idx if i not in set(same)]}
            report.append(row)
            table.add_row(suite, fmt.name, fmt.thinking, str(row["n"]), str(row["agree"]), str(row["ours_correct"]),
                          str(row["ref_correct"]), str(row["ours_no_answer"]), str(row["ref_no_answer"]), status)
    Console(width=160).print(table)
    n_agree = sum(r["agree"] for r in report)
    n_equal = sum(r["status"] == "equal" for r in report)
    print(f"responses agreeing: {n_agree}/{len(cases)} ({100 * n_agree / len(cases):.2f} %); formats equal: "
          f"{n_equal}/{len(report)}; documented deviations: {sum(r['status'].startswith('documented') for r in report)}; "
          f"undocumented differences: {bad or 'none'}")
    if args.json:
        args.json.write_text(json.dumps({"cases": len(cases), "agree": n_agree, "formats": report}, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
