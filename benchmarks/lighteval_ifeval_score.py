"""Score IFEval completions with lighteval's own port of the IFEval checkers (the port behind SmolLM2's model-card
figure), strict, as lighteval's IFEval metric applies them: each instruction class from its registry, kwargs without
empty values, the stripped prompt for instructions that take it, an empty response failing every instruction;
langdetect and Python's random are seeded.

Runs in the reference venv of benchmarks/bench_scorer_parity.py (which holds lm-eval's checker dependencies), with
lighteval added without its dependencies (its checkers need only those):

    ~/.cache/nemotron-cascade2-recipe/if-reference-venv/bin/python -m pip install --no-deps lighteval==0.13.0
    NLTK_DATA=<folder with punkt_tab> <that python> benchmarks/lighteval_ifeval_score.py ROWS.jsonl RESPONSES.jsonl

ROWS: IFEval's input_data.jsonl; RESPONSES: {"prompt", "response"} lines (IFEval's own response format).
"""
import argparse
import json
import random

import langdetect
from lighteval.tasks.tasks.ifeval import instructions_registry

# langdetect draws random numbers: unseeded, the response-language checks of short or odd texts change between runs
langdetect.DetectorFactory.seed = 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows")
    ap.add_argument("responses")
    ap.add_argument("--seed", type=int, default=0, help="Python's random seed: lighteval drops kwargs whose value is "
                    "falsy, and an instruction then draws that value at random (build_description)")
    a = ap.parse_args()
    random.seed(a.seed)
    rows = [json.loads(x) for x in open(a.rows, encoding="utf-8")]
    by_prompt = {d["prompt"]: d["response"] for d in map(json.loads, open(a.responses, encoding="utf-8"))}
    prompt_ok, followed = [], []
    for row in rows:
        response, query = by_prompt[row["prompt"]], row["prompt"].strip()
        flags = []
        for iid, kwargs in zip(row["instruction_id_list"], row["kwargs"]):
            check = instructions_registry.INSTRUCTION_DICT[iid](iid)
            check.build_description(**{k: v for k, v in kwargs.items() if v})
            args = check.get_instruction_args()
            if args and "prompt" in args:
                check.build_description(prompt=query)
            flags.append(bool(response.strip()) and bool(check.check_following(response)))
        prompt_ok.append(all(flags))
        followed += flags
    p, i = 100 * sum(prompt_ok) / len(prompt_ok), 100 * sum(followed) / len(followed)
    print(f"lighteval checkers: prompt strict {p:.2f}, instruction strict {i:.2f}, mean {(p + i) / 2:.2f} "
          f"(n = {len(prompt_ok)} prompts, {len(followed)} instructions)")


if __name__ == "__main__":
    main()
