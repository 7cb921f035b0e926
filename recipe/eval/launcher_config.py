"""Table 1 at scale through NVIDIA's own evaluators: a ``nemo-evaluator-launcher`` config (``nel run --config``) that
serves a checkpoint with vLLM on Slurm and runs every Table 1 row that NVIDIA's task list covers, each with the
paper's repeats and sampling.

Where things come from:
- the paper's value and settings per row: ``benchmarks.suites.<row>.paper`` of the paper profile (EVAL.md §2), read
  here, never restated;
- the task names: ``nemo-evaluator-launcher`` 0.2.6's task list (``resources/all_tasks_irs.yaml``) and the tasks
  NVIDIA's Nemotron-3 Nano / Super launcher configs run (NVIDIA-NeMo/Evaluator ``examples/nemotron/``): NeMo-Skills
  tasks (``ns_*``, repeats as ``extra.num_repeats``), RULER (``ruler-*-chat``), tau2-bench (``tau2_bench_*``,
  repeats as ``extra.n_samples``) and lm-eval's chat MMLU-Redux;
- serving: the paper profile's ``benchmarks.serving`` (image, tensor parallel, the model card's vLLM flags; EVAL.md §1).

A row no task covers is listed with the reason (the launcher's ``swebench_test`` and ``terminalbench`` are
contamination probes of those datasets, not the benchmarks). Judges and user simulators that a task needs are left as
``???`` (the launcher's own mark for a value it requires), so ``nel`` refuses to start until they are filled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

LAUNCHER_VERSION = "nemo-evaluator-launcher==0.2.6"   # the task names below are that release's


@dataclass(frozen=True)
class LauncherTask:
    """One launcher task for a Table 1 row: its name, how the row's repeats are passed, and fixed extras."""
    name: str
    repeats_key: str | None = "num_repeats"   # params.extra key of the sample count (None: one sample)
    repeats: int | None = None                # the count when the paper states it per task (tau2's domains)
    extra: dict = field(default_factory=dict)
    note: str = ""


# Table 1 row (a paper-profile suite name) -> the launcher tasks that measure it.
TABLE1_TASKS: dict[str, tuple[LauncherTask, ...]] = {
    "aime25": (LauncherTask("ns_aime2025"),),
    "aime26": (LauncherTask("ns_aime2026"),),
    "hmmt_feb25": (LauncherTask("ns_hmmt_feb2025"),),
    # the task's default split is the paper's window, v6 2408-2505 (454 problems)
    "livecodebench": (LauncherTask("ns_livecodebench", extra={"dataset_split": "test_v6_2408_2505"}),),
    "scicode": (LauncherTask("ns_scicode"),),
    "mmlu_redux": (LauncherTask("mmlu_redux_instruct", repeats_key=None,
                                note="lm-evaluation-harness chat task, zero-shot"),),
    # prompt configs as in NVIDIA's Nemotron-3 Nano launcher config
    "mmlu_pro": (LauncherTask("ns_mmlu_pro", extra={"args": "++prompt_config=eval/aai/mcq-10choices-boxed"}),),
    "gpqa_diamond": (LauncherTask("ns_gpqa", extra={"args": "++prompt_config=eval/aai/mcq-4choices"}),),
    "hle": (LauncherTask("ns_hle", extra={"judge_support": True, "judge": {"model_id": "???", "url": "???"}},
                         note="judge: the paper's is GPT-OSS-120B (EVAL.md §2)"),),
    "arena_hard_v2": (LauncherTask("ns_arena_hard_v2", extra={"judge_support": True,
                                                              "judge": {"model_id": "???", "url": "???"}},
                                   note="judge: the paper's is GPT-4.1, no style control"),),
    "ifbench": (LauncherTask("ns_ifbench"),),
    "aa_lcr": (LauncherTask("ns_aa_lcr"),),
    "niah_1m": (LauncherTask("ruler-1m-chat", repeats_key=None,
                             note="RULER at 1M tokens; the paper scores 100 instances x 4 NIAH variants"),),
    "bfcl_v4": (LauncherTask("ns_bfcl_v4", extra={"args": "++use_client_parsing=False"}),),
    "tau2_bench": tuple(LauncherTask(f"tau2_bench_{d}", repeats_key="n_samples", repeats=n,
                                     extra={"user": {"url": "???", "model_id": "???"}},
                                     note="needs a user-simulator endpoint (the task's default is NVIDIA's own)")
                        for d, n in (("airline", 16), ("retail", 8), ("telecom", 8))),   # EVAL.md §2
    "mmlu_prox": (LauncherTask("ns_mmlu_prox"),),
    "wmt24pp": (LauncherTask("ns_wmt24pp_comet", extra={"comet": {"model_path": "???"}},
                             note="XCOMET-XXL, as the paper scores it"),),
}

NOT_COVERED: dict[str, str] = {
    "imo_2025": "human / LLM grading of proofs: `recipe eval score --suite imo-proof` (EVAL.md §4)",
    "imo_answerbench": "no launcher task: `recipe eval score --suite imo-answer`",
    "imo_proofbench": "no launcher task: `recipe eval score --suite imo-proof`",
    "ioi_2025": "no launcher task: `recipe eval score --suite ioi` (EVAL.md §6)",
    "icpc_wf_2025": "no launcher task: `recipe eval score --suite icpc` (EVAL.md §7)",
    "lcb_pro_25q2_easy": "no launcher task for LiveCodeBench-Pro",
    "lcb_pro_25q2_medium": "no launcher task for LiveCodeBench-Pro",
    "multi_challenge": "no launcher task for Multi-Challenge",
    "longbench_v2": "no launcher task: `recipe eval --suite longbench_v2`",
    "swebench_verified": "the launcher's swebench_test is a contamination probe, not SWE-bench Verified (OpenHands)",
    "terminal_bench_2": "the launcher's terminalbench is a contamination probe, not Terminal Bench 2.0 (Terminus-2)",
    "cl_bench": "no launcher task for CL-Bench",
}


def task_entries(profile: str = "paper") -> list[dict]:
    """The launcher's ``evaluation.tasks``: per covered row, each task with the paper's sampling, repeats and mode."""
    from recipe.eval.paper_values import profile_benchmarks
    suites = profile_benchmarks(profile).suites
    missing = sorted(set(TABLE1_TASKS) - {n for n, e in suites.items() if e.paper})
    if missing:
        raise ValueError(f"no paper value in the {profile} profile's benchmarks for {missing}")
    out = []
    for row, tasks in TABLE1_TASKS.items():
        paper = suites[row].paper
        for t in tasks:
            params: dict = {}
            if paper.temperature is not None:
                params["temperature"] = paper.temperature
            if paper.top_p is not None:
                params["top_p"] = paper.top_p
            if paper.max_tokens is not None:
                params["max_new_tokens"] = paper.max_tokens
            extra = dict(t.extra)
            repeats = t.repeats or paper.k
            if t.repeats_key and repeats:
                extra[t.repeats_key] = repeats
            if extra:
                params["extra"] = extra
            cfg: dict = {"config": {"params": params}} if params else {}
            if paper.thinking is not None:   # Nemotron 3's template switch (EVAL.md §1)
                cfg["target"] = {"api_endpoint": {"adapter_config": {
                    "params_to_add": {"chat_template_kwargs": {"enable_thinking": paper.thinking}}}}}
            entry = {"name": t.name}
            if cfg:
                entry["nemo_evaluator_config"] = cfg
            out.append({"row": row, "entry": entry, "note": t.note, "paper": paper.value})
    return out


def launcher_config(checkpoint: str, *, served_name: str = "nemotron-cascade-2", hf_home: str | None = None,
                    hostname: str | None = None, account: str | None = None, output_dir: str | None = None,
                    partition: str | None = None, walltime: str = "08:00:00", tensor_parallel: int | None = None,
                    profile: str = "paper", entries: list[dict] | None = None) -> dict:
    """The config as a dict (``write_launcher_config`` writes it with the rows' notes); ``entries``: those of
    ``task_entries(profile)`` when the caller has them already."""
    from recipe.eval.paper_values import profile_benchmarks
    serving = profile_benchmarks(profile).serving
    flags = [f for f in serving.flags if f != "--trust-remote-code"]   # the launcher's vLLM command passes it
    execution = {"hostname": hostname or "???", "account": account or "???", "output_dir": output_dir or "???",
                 "walltime": walltime}
    if partition:
        execution["partition"] = partition
    env_vars = {}
    if hf_home:   # an offline node: datasets and tokenizers from a filled HF cache, nothing from the Hub
        execution["mounts"] = {"deployment": {hf_home: "/workspace/hf_home"},
                               "evaluation": {hf_home: "/workspace/hf_home"}}
        env_vars = {"HF_HOME": "lit:/workspace/hf_home", "HF_DATASETS_OFFLINE": "lit:1",
                    "TRANSFORMERS_OFFLINE": "lit:1", "HF_HUB_OFFLINE": "lit:1"}   # the launcher's "lit:" = a value
    return {
        "defaults": [{"execution": "slurm/default"}, {"deployment": "vllm"}, "_self_"],
        **({"env_vars": env_vars} if env_vars else {}),
        "execution": execution,
        "deployment": {"image": serving.image, "checkpoint_path": str(checkpoint), "served_model_name": served_name,
                       "tensor_parallel_size": tensor_parallel or serving.tensor_parallel,
                       "extra_args": " ".join(flags)},
        "evaluation": {
            "env_vars": {"NEMO_EVALUATOR_TELEMETRY_LEVEL": "lit:0"},
            "nemo_evaluator_config": {"config": {"params": {"request_timeout": 3600, "max_retries": 10,
                                                            "parallelism": 16}}},
            "tasks": [t["entry"] for t in (entries if entries is not None else task_entries(profile))],
        },
    }


def write_launcher_config(path: Path, checkpoint: str, **kw) -> dict:
    """Write the config to ``path`` with a header naming each task's Table 1 row and every row no task covers;
    returns {"tasks": n, "rows": covered rows, "not_covered": {row: why}}."""
    entries = task_entries(kw.get("profile", "paper"))
    cfg = launcher_config(checkpoint, entries=entries, **kw)
    lines = [f"# Nemotron-Cascade 2 Table 1 through NeMo Evaluator ({LAUNCHER_VERSION}), written by `recipe eval "
             "launcher-config`.", "# Run: nel run --config THIS_FILE   (check first: nel run --config THIS_FILE "
             "--dry-run)", "# Values marked ??? must be filled (Slurm login, account, output folder, judges).",
             "# Task -> Table 1 row (paper value):"]
    lines += [f"#   {e['entry']['name']:<22} {e['row']} ({e['paper']})" + (f"; {e['note']}" if e["note"] else "")
              for e in entries]
    lines += ["# Table 1 rows no launcher task covers:"] + [f"#   {r}: {why}" for r, why in NOT_COVERED.items()]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n" + yaml.safe_dump(cfg, sort_keys=False, width=120))
    return {"path": str(path), "tasks": len(entries), "rows": sorted({e["row"] for e in entries}),
            "not_covered": NOT_COVERED}
