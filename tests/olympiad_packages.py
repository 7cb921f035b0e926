"""Small task packages written by the tests (our own, not benchmark data).

``maxpair``: read n and a_1..a_n, print the largest a_i + a_j (i < j). CMS layout like ``ioi2024/``:
00-samples (0 pts), 01-small (20: n ≤ 100, a ≤ 1000), 02-bigvals (30: n ≤ 100, a ≤ 2e9: needs 64-bit),
03-large (50: n = 200000, a ≤ 2e9). Optional partial checker: 1 for the best sum, 0.5 for the sum of some other
pair (a valid but suboptimal answer), else 0.
``write_kattis_maxpair``: the same problem as a Kattis package (problem.yaml, data/sample, data/secret, optionally
a custom output validator).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

PARTIAL_CHECKER = r"""
#include <bits/stdc++.h>
using namespace std;
int main(int argc, char **argv) {
  ifstream in(argv[1]), cor(argv[2]), out(argv[3]);
  long long n; in >> n; vector<long long> a(n); for (auto &x : a) in >> x;
  long long best; cor >> best; long long got;
  if (!(out >> got)) { cout << 0 << endl; return 0; }
  if (got == best) { cout << 1 << endl; return 0; }
  set<long long> vals(a.begin(), a.end());
  for (long long x : a) if (vals.count(got - x) && (got - x != x || count(a.begin(), a.end(), x) > 1)) { cout << 0.5 << endl; return 0; }
  cout << 0 << endl;
}
"""

KATTIS_VALIDATOR = r"""
#include <bits/stdc++.h>
using namespace std;
// Kattis output validator: validator input judge_answer feedback_dir < team_output; 42 = AC, 43 = WA.
int main(int argc, char **argv) {
  ifstream ans(argv[2]); long long best; ans >> best; long long got;
  if (!(cin >> got) || got != best) return 43;
  string extra; if (cin >> extra) return 43;
  return 42;
}
"""


def _case(rng: random.Random, n: int, hi: int) -> tuple[str, str]:
    a = [rng.randint(0, hi) for _ in range(n)]
    s = sorted(a)
    return f"{n}\n{' '.join(map(str, a))}\n", f"{s[-1] + s[-2]}\n"


def maxpair_cases(seed: int = 0, large_n: int = 200_000) -> dict[str, tuple[str, str]]:
    rng = random.Random(seed)
    cases = {"sample-01": ("4\n3 9 1 5\n", "14\n")}
    for i in range(3):
        cases[f"small-0{i + 1}"] = _case(rng, rng.randint(2, 100), 1000)
    for i in range(3):
        cases[f"big-0{i + 1}"] = _case(rng, rng.randint(2, 100), 2 * 10**9)
        inp, _ = cases[f"big-0{i + 1}"]
        vals = sorted(map(int, inp.split()[1:]))
        vals[-1] = vals[-2] = 2 * 10**9  # beyond a 32-bit int
        cases[f"big-0{i + 1}"] = (f"{len(vals)}\n{' '.join(map(str, vals))}\n", f"{4 * 10**9}\n")
    for i in range(2):
        cases[f"large-0{i + 1}"] = _case(rng, large_n, 2 * 10**9)
    return cases


def write_maxpair(root: Path, *, partial_checker: bool = False, time_limit: float = 0.5, memory_mb: int = 256) -> Path:
    root = Path(root)
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "subtasks").mkdir(exist_ok=True)
    cases = maxpair_cases()
    for name, (i, o) in cases.items():
        (root / "tests" / f"{name}.in").write_text(i)
        (root / "tests" / f"{name}.out").write_text(o)
    (root / "problem.json").write_text(json.dumps({
        "code": "maxpair", "name": "Max pair", "time_limit": time_limit, "memory_limit": memory_mb << 20,
        "score_precision": 2, "task_type": "Batch", "task_type_params": "{\"task_type_parameters_Batch_compilation\": \"alone\"}"}))
    subtasks = {
        "00-samples": (0, ["sample-01"]),
        "01-small": (20, ["sample-01", "small-01", "small-02", "small-03"]),
        "02-bigvals": (30, ["big-01", "big-02", "big-03"]),
        "03-large": (50, ["large-01", "large-02"]),
    }
    for name, (pts, tests) in subtasks.items():
        (root / "subtasks" / f"{name}.json").write_text(json.dumps({"score": pts, "testcases": tests}))
    if partial_checker:
        (root / "checker").mkdir(exist_ok=True)
        (root / "checker" / "checker.cpp").write_text(PARTIAL_CHECKER)
    return root


def write_kattis_maxpair(root: Path, *, custom_validator: bool = False, time_limit: float = 0.5) -> Path:
    root = Path(root)
    cases = maxpair_cases(seed=1, large_n=200_000)
    for split, names in (("sample", ["sample-01"]), ("secret", [n for n in cases if n != "sample-01"])):
        d = root / "data" / split
        d.mkdir(parents=True, exist_ok=True)
        for n in names:
            (d / f"{n}.in").write_text(cases[n][0])
            (d / f"{n}.ans").write_text(cases[n][1])
    yaml_lines = ["name: Max pair", f"limits:\n  time_limit: {time_limit}\n  memory: 256"]
    if custom_validator:
        yaml_lines.append("validation: custom")
        (root / "output_validators" / "check").mkdir(parents=True, exist_ok=True)
        (root / "output_validators" / "check" / "validator.cpp").write_text(KATTIS_VALIDATOR)
    (root / "problem.yaml").write_text("\n".join(yaml_lines) + "\n")
    return root
