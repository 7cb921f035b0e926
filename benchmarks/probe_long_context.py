"""Diagnostic: does a checkpoint read the long-context document? A teacher-forced probe, no sampling.

For every long-context report prompt of a run, the probe feeds the prompt and the reference reasoning up to its last
code slot ("... code of <person> is") and reads the next-token distribution over the twelve codes. It prints, per
number of facts in the document, the probability given to the right code (chance: 1/12 = 0.083) and to any code
that occurs in the document (chance: the share of the twelve codes the document holds). A model that ignores the
document sits at chance on both; one that finds codes but not whose they are is above chance on the second only.

    .venv/bin/python benchmarks/probe_long_context.py --run-id tiny-seed0 --stage sft [--runs-dir DIR]
"""
from __future__ import annotations

import argparse
import os
import re
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run-id", default="tiny-seed0")
    ap.add_argument("--stage", default="sft", help="the stage whose checkpoint is probed")
    ap.add_argument("--runs-dir", default=None)
    ap.add_argument("--split", default="val", choices=["val", "select"])
    a = ap.parse_args()
    if a.runs_dir:
        os.environ["RECIPE_RUNS_DIR"] = str(Path(a.runs_dir).resolve())
    import torch

    from recipe.domains.long_context_domain import CODES
    from recipe.model import load_checkpoint
    from recipe.model.chat_render import render_chat
    from recipe.runs import RunDir
    from recipe.runs.layout import DATA_PHASE

    torch.set_num_threads(1)
    run = RunDir.for_id(a.run_id)
    model, tok = load_checkpoint(run.checkpoint_dir(a.stage))
    model.eval()
    code_ids = [tok(" " + c, add_special_tokens=False)["input_ids"] for c in CODES]
    if any(len(i) != 1 for i in code_ids):
        raise SystemExit(f"the tokenizer splits a code into several tokens: {dict(zip(CODES, code_ids))}")
    code_ids = [i[0] for i in code_ids]
    import json
    path = run.stage_dir(DATA_PHASE) / f"long_context_{a.split}.jsonl"
    by_facts: dict[int, list[tuple[float, float, float]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        doc = r["messages"][0]["content"]
        codes = dict(re.findall(r"The code of (\w+) is (\w+)\.", doc))
        reasoning = r["metadata"]["reference"]["reasoning"]
        text = render_chat(r["messages"], None, add_generation_prompt=True, enable_thinking=True) \
            + reasoning[: reasoning.rindex(" is ") + 3]
        ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            p = torch.softmax(model(input_ids=ids).logits[0, -1], -1)[code_ids]
        p = p / p.sum()
        right = p[CODES.index(r["verifier"]["expected_answer"])].item()
        in_doc = sum(p[CODES.index(c)].item() for c in set(codes.values()))
        by_facts[len(codes)].append((right, in_doc, len(set(codes.values())) / len(CODES)))
    print(f"{a.run_id} {a.stage} ({a.split} split): next-token probability at the reasoning's code slot, over the "
          f"{len(CODES)} codes")
    print(f"{'facts':>5} {'n':>4} {'p(right)':>9} {'chance':>7} {'p(in doc)':>10} {'chance':>7}")
    rows = [v for k in sorted(by_facts) for v in by_facts[k]]
    for k in sorted(by_facts):
        v = by_facts[k]
        print(f"{k:>5} {len(v):>4} {sum(x[0] for x in v) / len(v):>9.3f} {1 / len(CODES):>7.3f} "
              f"{sum(x[1] for x in v) / len(v):>10.3f} {sum(x[2] for x in v) / len(v):>7.3f}")
    print(f"{'all':>5} {len(rows):>4} {sum(x[0] for x in rows) / len(rows):>9.3f} {1 / len(CODES):>7.3f} "
          f"{sum(x[1] for x in rows) / len(rows):>10.3f} {sum(x[2] for x in rows) / len(rows):>7.3f}")


if __name__ == "__main__":
    main()
