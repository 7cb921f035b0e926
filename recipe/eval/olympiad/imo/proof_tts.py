"""Generate → verify → refine for full proofs (EVAL.md §5, DeepSeek-Math-V2 style), every knob in
``olympiad.proof_tts`` (``ProofTTSSection``).

1. Generate ``generations`` proofs; 2. verify each ``verifications`` times (a verifier rates a proof 0, 0.5 or 1 in
``\\boxed{}``, with an analysis); a proof's rating is the mean of its valid ratings. 3. Each round, unless the best
rating reached ``stop_mean_score``: take the ``refine_top`` best proofs; each gets ``refined_per_proof`` refinements,
each shown ``analyses_per_refine`` of its analyses, lowest-rated first; refined proofs are verified the same way and
join the pool. At most ``max_rounds`` rounds. 4. The final proof is the best-rated one (earliest on ties).
Problems listed in ``reduced_problems`` use the ``reduced`` budget. Every proof and every verification is passed
to ``store`` (e.g. a JSONL writer), and the returned record lists them all.
The generation/verification/refinement prompts below are this project's own wording.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from recipe.config.olympiad_section import ProofTTSSection
from recipe.eval.olympiad.completion_client import ChatModel, JudgeError

GENERATE = ("Solve the following olympiad problem. Write a complete and rigorous proof.\n\n"
            "Problem:\n{problem}")
VERIFY = ("You are checking a proof of an olympiad problem. Find every error or gap, then rate the proof: 1 if it is "
          "complete and rigorous, 0.5 if it has minor gaps, 0 if it is wrong or incomplete. End with the rating in "
          "\\boxed{{}}.\n\nProblem:\n{problem}\n\nProof:\n{proof}")
REFINE = ("Here is a proof of an olympiad problem and reviews of it. Fix every issue the reviews raise and write "
          "the improved complete proof.\n\nProblem:\n{problem}\n\nProof:\n{proof}\n\nReviews:\n{analyses}")
_RATING = re.compile(r"\\boxed\{\s*(0|0\.5|1|1\.0|0\.0)\s*\}")


def parse_rating(text: str) -> float | None:
    found = _RATING.findall(text.rsplit("</think>", 1)[-1])
    return float(found[-1]) if found else None


def _budget(cfg: ProofTTSSection, problem_id: str | None) -> dict:
    b = {"generations": cfg.generations, "verifications": cfg.verifications, "refine_top": cfg.refine_top,
         "max_rounds": cfg.max_rounds}
    if problem_id is not None and cfg.reduced is not None and problem_id in cfg.reduced_problems:
        b.update(cfg.reduced.model_dump())
    return b


def _visible(text: str) -> str:
    return text.rsplit("</think>", 1)[-1].strip() if "<think>" in text or "</think>" in text else text.strip()


def run_proof_tts(problem: str, model: ChatModel, cfg: ProofTTSSection, *, problem_id: str | None = None,
                  verifier: ChatModel | None = None, store: Callable[[dict], None] | None = None) -> dict:
    verifier = verifier or model
    budget = _budget(cfg, problem_id)
    sampling = {"temperature": cfg.temperature, "top_p": cfg.top_p, "max_tokens": cfg.max_tokens}
    pool: list[dict] = []
    calls = {"generate": 0, "verify": 0, "refine": 0}

    def emit(rec: dict) -> None:
        if store:
            store({"problem_id": problem_id} | rec)

    def ask(m: ChatModel, content: str, kind: str) -> str:
        calls[kind] += 1
        try:
            return m.complete([{"role": "user", "content": content}], **sampling)
        except JudgeError as e:
            return f"[request failed: {e}]"

    def add(proof_text: str, rnd: int, parent: int | None) -> dict:
        p = {"index": len(pool), "round": rnd, "parent": parent, "proof": _visible(proof_text), "verifications": []}
        for _ in range(budget["verifications"]):
            out = ask(verifier, VERIFY.format(problem=problem, proof=p["proof"]), "verify")
            v = {"rating": parse_rating(out), "analysis": _visible(out)}
            p["verifications"].append(v)
            emit({"kind": "verification", "proof_index": p["index"]} | v)
        valid = [v["rating"] for v in p["verifications"] if v["rating"] is not None]
        p["rating"] = sum(valid) / len(valid) if valid else 0.0
        pool.append(p)
        emit({"kind": "proof", **{k: p[k] for k in ("index", "round", "parent", "proof", "rating")}})
        return p

    for _ in range(budget["generations"]):
        add(ask(model, GENERATE.format(problem=problem), "generate"), 0, None)
    rounds = 0
    for rnd in range(1, budget["max_rounds"] + 1):
        if max(p["rating"] for p in pool) >= cfg.stop_mean_score:
            break
        rounds = rnd
        top = sorted(pool, key=lambda p: (-p["rating"], p["index"]))[:budget["refine_top"]]
        for p in top:
            analyses = sorted((v for v in p["verifications"]), key=lambda v: (v["rating"] is None, v["rating"] or 0))
            shown = "\n\n".join(f"Review (rating {v['rating']}):\n{v['analysis']}" for v in analyses[:cfg.analyses_per_refine])
            for _ in range(cfg.refined_per_proof):
                add(ask(model, REFINE.format(problem=problem, proof=p["proof"], analyses=shown), "refine"), rnd, p["index"])
    final = max(pool, key=lambda p: (p["rating"], -p["index"]))
    return {"problem_id": problem_id, "budget": budget, "rounds": rounds, "calls": calls, "final_index": final["index"],
            "final_proof": final["proof"], "final_rating": final["rating"], "pool": pool,
            "stopped_early": max(p["rating"] for p in pool) >= cfg.stop_mean_score}


def finished_problems(out_path: Path) -> dict[str, str]:
    """Problem ID -> final proof for every problem ``out_path`` records as finished (a ``final`` record). Records of a
    problem that was cut off before its ``final`` are dropped from the file, so a re-run redoes it from the start."""
    if not out_path.is_file():
        return {}
    recs = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = {r["problem_id"]: r["index"] for r in recs if r.get("kind") == "final"}
    proofs = {(r["problem_id"], r["index"]): r["proof"] for r in recs if r.get("kind") == "proof"}
    kept = [r for r in recs if r.get("problem_id") in done]
    if len(kept) < len(recs):
        out_path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return {pid: proofs[(pid, idx)] for pid, idx in done.items()}


def run_proofbench_tts(rows: list[dict], model: ChatModel, cfg: ProofTTSSection, out_path, *,
                       verifier: ChatModel | None = None, concurrency: int = 1, progress: bool = False) -> dict[str, Any]:
    """Run the loop on ProofBench rows, ``concurrency`` problems at a time; every proof and verification is appended to
    ``out_path`` (JSONL) as it is made. Problems the file already finishes are not run again (``finished_problems``).
    Returns Problem ID -> final proof, in row order (the input of ``imo_proof.score_proofbench``); ``progress``
    shows a bar of finished problems on stderr."""
    from tqdm.auto import tqdm

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    finals = finished_problems(out_path)
    todo = [row for row in rows if row["Problem ID"] not in finals]
    lock = threading.Lock()
    with open(out_path, "a", encoding="utf-8") as f:
        def store(rec: dict) -> None:
            with lock:
                f.write(json.dumps(rec) + "\n")
                f.flush()

        def one(row: dict) -> tuple[str, str]:
            res = run_proof_tts(row["Problem"], model, cfg, problem_id=row["Problem ID"], verifier=verifier, store=store)
            store({"problem_id": row["Problem ID"], "kind": "final", "index": res["final_index"],
                   "rating": res["final_rating"], "rounds": res["rounds"], "calls": res["calls"], "budget": res["budget"]})
            return row["Problem ID"], res["final_proof"]

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool, \
                tqdm(total=len(rows), initial=len(rows) - len(todo), desc="proofs", unit="problem",
                     file=sys.stderr, disable=not progress) as bar:
            for fut in as_completed([pool.submit(one, row) for row in todo]):
                pid, proof = fut.result()
                finals[pid] = proof
                bar.update()
    return {row["Problem ID"]: finals[row["Problem ID"]] for row in rows}


def prove_proofbench(data: str | Path, out: str | Path, cfg: ProofTTSSection, *, version: str, endpoint: str,
                     model: str, verifier_endpoint: str | None = None, verifier_model: str | None = None,
                     api_key_env: str | None = None, server: str = "vllm", limit: int | None = None,
                     concurrency: int = 4, progress: bool = True) -> dict:
    """``recipe eval prove``: final proofs for ProofBench (``data``: the IMO-Bench folder) by the loop above, with the
    served ``model`` as prover and as verifier unless ``verifier_*`` name another. Writes ``out/tts.jsonl`` (every
    proof and verification; a re-run resumes it) and ``out/responses.jsonl`` (``Problem ID`` + final proof, graded
    whole), the input of ``recipe eval score --suite imo-proof``. Returns a summary."""
    from recipe.eval.olympiad.completion_client import open_harness_chat, require_answering
    from recipe.eval.olympiad.imo.imo_proof import load_proofbench

    rows = load_proofbench(data, version)[:limit]
    if not rows:
        raise ValueError(f"{data}: no ProofBench rows to prove (--limit {limit})")
    sampling = {"temperature": cfg.temperature, "top_p": cfg.top_p, "max_tokens": cfg.max_tokens}
    prover = open_harness_chat(endpoint, model, sampling, key_env=api_key_env, server=server, concurrency=concurrency)
    verifier = (open_harness_chat(verifier_endpoint or endpoint, verifier_model or model, sampling, key_env=api_key_env,
                                  server=server, concurrency=concurrency)
                if verifier_endpoint or verifier_model else None)
    for chat in (prover, verifier):
        if chat is not None:
            require_answering(chat)
    out = Path(out)
    finals = run_proofbench_tts(rows, prover, cfg, out / "tts.jsonl", verifier=verifier, concurrency=concurrency,
                                progress=progress)
    with open(out / "responses.jsonl", "w", encoding="utf-8") as f:
        for pid, proof in finals.items():
            f.write(json.dumps({"Problem ID": pid, "response": proof, "thinking": False}) + "\n")
    return {"suite": "imo-proof", "version": version, "problems": len(finals), "out": str(out),
            "responses": str(out / "responses.jsonl"), "tts_log": str(out / "tts.jsonl"),
            "prover": prover.describe(), "verifier": (verifier or prover).describe(), "budget": cfg.model_dump()}
