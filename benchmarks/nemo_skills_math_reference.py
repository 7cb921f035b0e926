"""NeMo-Skills' own verdicts on math responses; run by ``bench_math_parity.py`` inside the reference's environment.

Not part of the package: it imports ``nemo_skills`` (a checkout of NVIDIA/NeMo-Skills on ``PYTHONPATH``) in a venv
holding what its math grader imports (``math-verify[antlr4_9_3]``, ``fire``, ``rich``), and applies NeMo-Skills'
pipeline to each case: ``parse_reasoning`` (``nemo_skills.utils``, used when generation ran with
``++parse_reasoning=True``), then ``extract_answer`` and ``math_equal`` (``nemo_skills.evaluation.math_grader``) with
the math evaluator's defaults (``numeric_precision=15``, ``timeout_seconds=10``, no ``take_modulo``).

The thinking mode of a case maps onto NeMo-Skills' switch: ``on`` = ``parse_reasoning=True``; ``off`` =
``parse_reasoning=False``; ``auto`` = ``parse_reasoning=True`` exactly when the text holds a think tag (what the
project's auto rule claims to equal).

    PYTHONPATH=NEMO_SKILLS_CHECKOUT VENV/bin/python nemo_skills_math_reference.py CASES.jsonl VERDICTS.jsonl
CASES.jsonl: ``{"gold", "text", "thinking"}`` per line; VERDICTS.jsonl: ``{"correct", "predicted_answer"}`` per line.
"""
from __future__ import annotations

import json
import logging
import sys


def main(cases_path: str, out_path: str) -> None:
    from nemo_skills.evaluation.math_grader import extract_answer, math_equal
    from nemo_skills.utils import parse_reasoning
    logging.disable(logging.WARNING)  # parse_reasoning warns on every generation without </think>
    with open(cases_path, encoding="utf-8") as f, open(out_path, "w", encoding="utf-8") as out:
        for line in f:
            case = json.loads(line)
            sample = {"generation": case["text"]}
            mode = case["thinking"]
            if mode == "on" or (mode == "auto" and ("<think>" in case["text"] or "</think>" in case["text"])):
                parse_reasoning(sample, "generation", "</think>")
            pred = extract_answer(sample["generation"])
            ok = math_equal(case["gold"], pred, take_modulo=None, numeric_precision=15, timeout_seconds=10)
            out.write(json.dumps({"correct": bool(ok), "predicted_answer": pred}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
