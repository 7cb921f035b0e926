"""Curated data laid out the way the cluster renderer reads it: ``<data_root>/<stage>/{train,validation}.jsonl``.

``recipe data curate`` writes its outputs by kind (``sft/``, ``nemo_gym/``, ``records/``); a NeMo-RL job per stage
reads one directory per stage (``recipe.cluster.render``: ``<data_root>/<stage>/`` and, for SWE,
``swe_rl/agentless/`` and ``swe_rl/agentic/``). This module derives the per-stage files from the curated
``records/{train,validation}.jsonl`` so that ``--set cluster.data_root=<curate --out>`` feeds every job:

* ``sft/``: curate's own SFT chat rows (OpenAI ``messages`` rows, read with NeMo-RL's ``openai_format``) — already
  at the path render reads, nothing is copied;
* each RL stage: the prompt-only records of the stage's domains as NeMo-Gym rows, with ``agent_ref`` set to the Gym
  agent that serves the domain in that stage when the row has none (NeMo-RL routes by it). A record from one of the
  released RL data configs (RECIPE.md §7.2: ``IF-RL``, ``multi-domain-RL``, ``MOPD``, ``SWE-RL``) goes only to that
  config's stage; others go to every stage that serves their domain;
* SWE: rows whose agent is Gym's ``swe_agents`` go to ``agentic/``, the others to ``agentless/``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe.config import STAGE_PLAN

# nvidia/Nemotron-Cascade-2-RL-data config -> the stage it was released for (RECIPE.md §7.2)
RL_CONFIG_STAGE = {"IF-RL": "if_rl", "multi-domain-RL": "multi_domain_rl", "MOPD": "mopd", "SWE-RL": "swe_rl"}
SPLITS = ("train", "validation")


def _released_stage(record: dict) -> str | None:
    src = record.get("source") or {}
    name = str(src.get("name") or "") + "/" + str(src.get("config") or "")
    for cfg_name, stage in RL_CONFIG_STAGE.items():
        if cfg_name in name.split("/") or name.endswith(cfg_name) or f"/{cfg_name}/" in f"/{name}/":
            return stage
    return None


def _targets(cfg) -> list[tuple[str, str | None, list[str]]]:
    """(stage, phase, domains) for every RL job of the plan."""
    out = []
    for stage in STAGE_PLAN:
        if stage == "sft":
            continue
        if stage == "swe_rl":
            out += [("swe_rl", "agentless", list(cfg.swe_rl.agentless.domains)),
                    ("swe_rl", "agentic", list(cfg.swe_rl.agentic.domains))]
        else:
            out.append((stage, None, list(getattr(cfg.stage(stage), "domains", []) or [])))
    return out


def write_stage_layout(out_dir: str | Path, cfg) -> dict[str, dict[str, int]]:
    """Write ``<out_dir>/<stage>[/<phase>]/{train,validation}.jsonl`` for every RL job; returns rows per file."""
    from recipe.data.formats import to_nemo_gym
    from recipe.data.gym_envs import agent_for
    from recipe.data.record import is_prompt_only

    out = Path(out_dir)
    targets = _targets(cfg)
    counts: dict[str, dict[str, int]] = {}
    for stage, phase, _ in targets:
        d = out / stage / (phase or "")
        d.mkdir(parents=True, exist_ok=True)
        counts[str(Path(stage) / (phase or ""))] = {s: 0 for s in SPLITS}
    for split in SPLITS:
        handles: dict[str, Any] = {k: open(out / k / f"{split}.jsonl", "w") for k in counts}
        try:
            src = out / "records" / f"{split}.jsonl"
            lines = src.open() if src.is_file() else []
            for line in lines:
                if not line.strip():
                    continue
                rec = json.loads(line)
                if not is_prompt_only(rec):
                    continue
                released = _released_stage(rec)
                for stage, phase, domains in targets:
                    if rec.get("domain") not in domains or (released and released != stage):
                        continue
                    row = to_nemo_gym(rec)
                    name = (row.get("agent_ref") or {}).get("name")
                    if stage == "swe_rl":
                        agentic = bool(name and "swe_agents" in name)
                        if agentic != (phase == "agentic"):
                            continue
                    if not name:
                        try:
                            row["agent_ref"] = {"type": "responses_api_agents",
                                                "name": agent_for(rec["domain"], phase=phase)}
                        except KeyError:
                            continue
                    key = str(Path(stage) / (phase or ""))
                    handles[key].write(json.dumps(row, ensure_ascii=False) + "\n")
                    counts[key][split] += 1
        finally:
            for h in handles.values():
                h.close()
    return counts
