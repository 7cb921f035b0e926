"""Datasets written here (not the benchmarks' items) in the Hub layouts that the harness suites load: GPQA's CSV
columns (``Idavidrein/gpqa``, config gpqa_diamond), MMLU-Pro's test split (``TIGER-Lab/MMLU-Pro``: ten options, the
answer's letter) and MMLU-Redux's per-subject test splits
(``fxmarty/mmlu-redux-2.0-ok``, the subjects lm-eval's task files name), for a loopback Hub. A question's answer
is in its text ("Which number is 7?" -> the choice 7), so a chat server can answer rightly or wrongly on purpose."""
from __future__ import annotations

import csv
import io
import re

import pandas as pd

GPQA_REPO, REDUX_REPO, PRO_REPO = "Idavidrein/gpqa", "fxmarty/mmlu-redux-2.0-ok", "TIGER-Lab/MMLU-Pro"


def gpqa_files(n: int = 6) -> dict[str, bytes]:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3",
                "Record ID"])
    for i in range(n):
        w.writerow([f"Which number is {i}?", str(i), str(i + 10), str(i + 20), str(i + 30), f"rec{i}"])
    readme = "---\nconfigs:\n- config_name: gpqa_diamond\n  data_files: gpqa_diamond.csv\n---\nfixture\n"
    return {"README.md": readme.encode(), "gpqa_diamond.csv": buf.getvalue().encode()}


def redux_files(subjects: list[str], per_subject: int = 2) -> dict[str, bytes]:
    files, configs = {}, []
    for s in subjects:
        rows = [{"question": f"Which number is {i}?", "choices": [str(i + 10), str(i), str(i + 20), str(i + 30)],
                 "answer": 1} for i in range(per_subject)]
        buf = io.BytesIO()
        pd.DataFrame(rows).to_parquet(buf)
        files[f"{s}/test-00000-of-00001.parquet"] = buf.getvalue()
        configs.append(f"- config_name: {s}\n  data_files:\n  - split: test\n    path: {s}/test-00000-of-00001.parquet\n")
    files["README.md"] = ("---\nconfigs:\n" + "".join(configs) + "---\nfixture\n").encode()
    return files


def mmlu_pro_files(n: int = 4) -> dict[str, bytes]:
    rows = [{"question_id": i, "question": f"Which number is {i}?",
             "options": [str(i + 10 * j) for j in range(1, 10)][:3] + [str(i)] + [str(i + 100 * j) for j in range(1, 7)],
             "answer": "D", "answer_index": 3, "cot_content": "", "category": "math", "src": "fixture"}
            for i in range(n)]
    buf = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buf)
    readme = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
              "    path: data/test-00000-of-00001.parquet\n---\nfixture\n")
    return {"README.md": readme.encode(), "data/test-00000-of-00001.parquet": buf.getvalue()}


def right_letter(prompt: str) -> str:
    """The letter of the choice equal to the number that the question asks for (either layout: 'A) 3' or 'A. 3')."""
    want = re.search(r"Which number is (\d+)\?", prompt).group(1)
    return re.search(rf"^([A-J])[).] {want}$", prompt, re.M).group(1)
