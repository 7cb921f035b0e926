"""Model cards for published stages, generated from the run layout only (DESIGN.md §3, §7).

The card's YAML front matter is built with ``huggingface_hub.ModelCardData`` (so ``model-index`` has the
Hub's schema): license, ``base_model``, library, tags, the datasets the run consumed, and one
``model-index`` result per validation domain of this stage (``validation.json``). The body states the
lineage: base model, stages passed (each with its validation average), data revisions, git commit,
container digest, config hash, profile and seed -- read from ``run.json``; missing values are written
as "not recorded", never guessed. The card is deterministic (no publish timestamp), so re-publishing
unchanged content produces byte-identical files (idempotence, see ``publish.py``).
"""
from __future__ import annotations

from typing import Any

from recipe.config.schema import STAGE_PLAN
from recipe.runs.layout import RunDir

NOT_RECORDED = "not recorded"
# sections every generated model card has (Hugging Face model card layout; tests/test_hub_config_and_card.py)
MODEL_CARD_SECTIONS = ("Model Details", "Training Details", "Evaluation", "Licensing", "Limitations", "Citation")


def other_license(base_id: str | None) -> tuple[str, str]:
    """(license_name, license_link) for ``license: other``: a checkpoint derived from an NVIDIA base inherits
    the NVIDIA Open Model License; otherwise the publisher did not name one and the card says so."""
    from recipe.data.dataset_cards import LICENSE_LINKS
    if base_id and base_id.startswith("nvidia/"):
        return "NVIDIA Open Model License", LICENSE_LINKS["NVIDIA Open Model License"]
    return "not specified by the publisher (set hub.publish.license)", "README.md#licensing"


def _first(d: dict, *keys: str) -> Any:
    for k in keys:
        if d.get(k) not in (None, "", {}):
            return d[k]
    return None


def lineage(run: RunDir, stage: str) -> dict[str, Any]:
    """Provenance of ``stage`` read from the run layout (also written as ``provenance.json``)."""
    info = run.read_run_json()
    upto = STAGE_PLAN[: STAGE_PLAN.index(stage) + 1]
    passed = []
    for s in upto:
        manifest = run.read_manifest(s) or {}
        scores = run.read_validation(s)
        passed.append({"stage": s, "status": manifest.get("status", "absent"),
                       "validation": scores,
                       "validation_mean": round(sum(scores.values()) / len(scores), 6) if scores else None})
    revisions = _data_revisions(run, info, upto)
    return {
        "run_id": run.run_id,
        "stage": stage,
        "profile": info.get("profile"),
        "seed": info.get("seed"),
        "config_hash": _first(info, "config_hash", "resolved_config_hash"),
        "git_commit": _first(info, "git_commit", "commit"),
        "git_dirty": info.get("git_dirty"),
        "container_digest": _first(info, "container_digest", "container", "image_digest"),
        "started_at": _first(info, "started", "started_at", "start_time", "created_at"),
        "data_revisions": revisions,
        "stages": passed,
    }


def run_base_model(run: RunDir) -> tuple[str | None, str]:
    """(Hub id of the base model or None, how the card states it), from the run's resolved config.yaml."""
    try:
        from recipe.config import load_config

        model = load_config(run.config_path).model
    except Exception:  # no/old config: say so rather than guess
        return None, NOT_RECORDED
    if model.source == "pretrained":
        rev = getattr(model, "revision", None)
        return model.name, f"`{model.name}`" + (f" @ `{rev}`" if rev else " (revision not pinned in the config)")
    return None, f"none: `{model.name}` was built from scratch by the recipe (model.source: {model.source})"


def _data_revisions(run: RunDir, info: dict, stages: tuple[str, ...]) -> dict[str, str]:
    """What data the checkpoint saw, as ``{dataset or file: revision or sha256}``.

    Sources, in order: ``run.json: data_revisions`` (when a data step records released-data revisions), the
    cluster provenance of each stage (``run.json: cluster.<stage>.jobs.*.data.source``: dataset id + revision),
    and the data phase's manifest (``00_data/manifest.json: outputs``, sha256 of the generated/curated files).
    """
    out: dict[str, str] = {}
    recorded = info.get("data_revisions")
    if isinstance(recorded, dict):
        out.update({str(k): str(v) for k, v in recorded.items()})
    for stage in stages:
        for job in ((info.get("cluster") or {}).get(stage) or {}).get("jobs", {}).values():
            src = (job.get("data") or {}).get("source") or {}
            name = src.get("dataset") or src.get("repo_id") or src.get("name")
            if name:
                out[str(name)] = str(src.get("revision") or "unpinned")
    from recipe.runs.layout import DATA_PHASE

    data_manifest = run.read_manifest(DATA_PHASE) or {}
    for name, digest in sorted((data_manifest.get("outputs") or {}).items()):
        out[f"{run.run_id}/00_data/{name}"] = f"sha256:{digest}"
    return out


def _dataset_ids(revisions: Any) -> list[str]:
    if isinstance(revisions, dict):  # Hub dataset ids only (ORG/NAME), not run-local files
        return sorted(k for k in revisions if k.count("/") == 1 and not str(revisions[k]).startswith("sha256:"))
    if isinstance(revisions, list):
        return sorted({r.get("repo_id") or r.get("name") for r in revisions if isinstance(r, dict)} - {None})
    return []


def model_card(run: RunDir, stage: str, repo_id: str, *, license: str, base_model: str | None = None) -> str:
    """README.md text for ``stage`` of ``run`` published to ``repo_id`` (branch = stage)."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    lin = lineage(run, stage)
    base_id, base_text = (base_model, f"`{base_model}`") if base_model else run_base_model(run)
    scores = run.read_validation(stage) or {}
    name = repo_id.split("/")[-1]
    evals = [EvalResult(task_type="text-generation", task_name="Text Generation",
                        dataset_type=f"{lin['profile'] or 'recipe'}/{domain}", dataset_name=f"{domain} (validation)",
                        dataset_split="validation", metric_type="accuracy", metric_name=f"{domain} accuracy",
                        metric_value=float(score))
             for domain, score in sorted(scores.items())]
    from recipe.hub.model_index import eval_results_for_card  # recipe eval results of this stage
    evals += eval_results_for_card(run, stage)
    lic_name, lic_link = other_license(base_id) if license == "other" else (None, None)
    data = ModelCardData(
        license=license, license_name=lic_name, license_link=lic_link, library_name="transformers",
        pipeline_tag="text-generation",
        base_model=base_id, datasets=_dataset_ids(lin["data_revisions"]) or None,
        tags=["nemotron-cascade-2-recipe", f"stage-{stage}", f"profile-{lin['profile'] or 'unknown'}"],
        model_name=name, eval_results=evals or None)
    license_text = license if license != "other" else \
        f"other: {lic_name}" + (f" ({lic_link})" if lic_link.startswith("http") else "")

    def _mean(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.4f}"

    rows = "\n".join(f"| {i + 1} | `{s['stage']}` | {s['status']} | {_mean(s['validation_mean'])} |"
                     for i, s in enumerate(lin["stages"]))
    revs = lin["data_revisions"]
    if isinstance(revs, dict) and revs:
        rev_lines = "\n".join(f"- `{k}`: `{v}`" for k, v in sorted(revs.items()))
    elif isinstance(revs, list) and revs:
        rev_lines = "\n".join(f"- `{r}`" for r in revs)
    else:
        rev_lines = f"- {NOT_RECORDED}"
    score_lines = "\n".join(f"| {d} | {v:.4f} |" for d, v in sorted(scores.items())) or f"| {NOT_RECORDED} | |"
    body = f"""
# {name} — stage `{stage}`

## Model Details

Checkpoint after stage `{stage}` of a Nemotron-Cascade 2 post-training reproduction (arXiv 2603.19220),
run `{lin['run_id']}` (profile `{lin['profile'] or NOT_RECORDED}`, seed `{lin['seed'] if lin['seed'] is not None else NOT_RECORDED}`).
This branch (`{stage}`) holds exactly this stage; other stages of the run are on their own branches.

## Training Details

Lineage:

- Base model: {base_text}
- Git commit: `{lin['git_commit'] or NOT_RECORDED}`{' (dirty tree)' if lin['git_dirty'] else ''}
- Container digest: `{lin['container_digest'] or NOT_RECORDED}`
- Resolved-config hash: `{lin['config_hash'] or NOT_RECORDED}`
- Run started: {lin['started_at'] or NOT_RECORDED}

Stages passed (the cascade order of the paper, §4.1):

| # | stage | status | validation mean |
|---|---|---|---|
{rows}

Data revisions:
{rev_lines}

## Evaluation

Validation of this checkpoint (the stage's own validation split, `validation.json`):

| domain | score |
|---|---|
{score_lines}

## Loading

Safetensors weights only; no repository code is needed:

```python
from transformers import AutoModelForCausalLM, AutoTokenizer
model = AutoModelForCausalLM.from_pretrained("{repo_id}", revision="{stage}", use_safetensors=True,
                                             trust_remote_code=False)
tokenizer = AutoTokenizer.from_pretrained("{repo_id}", revision="{stage}")
```

`provenance.json` in this branch holds the same lineage as data; `validation.json` the scores.

## Licensing

{license_text}.
Training data: see the data revisions above and their dataset cards.

## Limitations

- A research reproduction of one stage of the recipe, not a product: scores are the recipe's validation tasks
  (listed above with their split), not a safety or capability assessment.
- A tiny-profile checkpoint (`profile-tiny`) is a few-hundred-thousand-parameter model trained on toy tasks: it
  demonstrates the pipeline and says nothing about the paper's model.

## Citation

```bibtex
@misc{{nvidia2026nemotroncascade2,
  title         = {{Nemotron-Cascade 2: Post-Training LLMs with Cascade RL and Multi-Domain On-Policy Distillation}},
  author        = {{NVIDIA}},
  year          = {{2026}},
  eprint        = {{2603.19220}},
  archivePrefix = {{arXiv}}
}}
```
"""
    return ModelCard.from_template(data, template_str="---\n{{ card_data }}\n---\n" + body).content
