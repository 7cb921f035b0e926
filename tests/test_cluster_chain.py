"""`recipe cluster submit --stage all` submits the cascade as one afterok chain, with teacher
selection as its own job before MOPD; resume starts after the last finished stage. sbatch and git are stand-ins on
PATH that record their calls; the selection job's work is then run here on synthetic stage outputs."""
from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recipe.cli.cluster_cmd import app
from recipe.cluster.chain import chain_stages, select_teachers, submit_chain
from recipe.cluster.nrl_yaml import load_yaml
from recipe.cluster.release import RELEASE_COMMIT
from recipe.config import STAGE_PLAN, load_config
from recipe.runs.layout import RunDir

HUB_DL = "hub.download_dir=" + str(__import__("pathlib").Path(__file__).parent / "fixtures/cluster/hub_downloads")  # stand-in released tokenizer download
OVERRIDES = [HUB_DL, "swe_rl.agentic.steps=100", "cluster.account=acct", "cluster.partition=batch", "cluster.hf_home=/shared/hf",
             "cluster.swe_container_formatter=/shared/sif/{instance_id}.sif",
             "cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch"]

FAKE_SBATCH = r"""#!/usr/bin/env bash
n=$(( $(cat "$FAKE_DIR/n" 2>/dev/null || echo 100) + 1 ))
echo "$n" > "$FAKE_DIR/n"
echo "$n|$*" >> "$FAKE_DIR/sbatch.log"
echo "$n"
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    import shutil

    real_git = shutil.which("git")
    fake_git = (f'#!/usr/bin/env bash\nif [ "$2" = "$NEMO_RL_CHECKOUT" ]; then echo "{RELEASE_COMMIT}"; '
                f'else exec {real_git} "$@"; fi\n')   # only the NeMo-RL checkout is faked
    for name, body in (("sbatch", FAKE_SBATCH), ("git", fake_git)):
        (bindir / name).write_text(body)
        (bindir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DIR", str(tmp_path))
    monkeypatch.setenv("NEMO_RL_CHECKOUT", str(tmp_path / "RL"))
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_TOKEN", "test-token")
    return tmp_path


def _calls(tmp: Path) -> list[tuple[str, str]]:
    return [tuple(ln.split("|", 1)) for ln in (tmp / "sbatch.log").read_text().splitlines()]


def _name(args: str) -> str:
    return re.search(r"--job-name=recipe-\S+?-(\w+)", args).group(1)


def _dep(args: str) -> str | None:
    m = re.search(r"--dependency=(\S+)", args)
    return m.group(1) if m else None


def test_all_stages_chain_with_afterok_and_a_selection_job(fake):
    cfg = load_config("paper", overrides=OVERRIDES)
    run = RunDir.for_id("chain")
    jobs = submit_chain(cfg, run, render_kw={"allow_unpinned": True, "allow_dirty": True}, overrides=OVERRIDES,
                        segments=1)
    calls = _calls(fake)
    names = [_name(a) for _, a in calls]
    train = ["sft", "if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl",
             "swe_rl_agentless", "swe_rl_agentic"]
    assert [n for n in names if not n.endswith("_convert")] == train[:4] + ["teacher_selection"] + train[4:]
    assert [n for n in names if n.endswith("_convert")] == [f"{t}_convert" for t in train]   # one per training job
    ids = [i for i, _ in calls]
    by = dict(zip(names, ids))
    assert _dep(calls[0][1]) == "singleton"                          # the first stage waits for nothing else
    for (prev_id, prev), (_, args) in zip(calls, calls[1:]):
        name = _name(args)
        if name == "rlhf_branch":       # the RLHF teacher branch starts from SFT's conversion and waits for it only
            assert _dep(args) == f"singleton,afterok:{by['sft_convert']}", args
        elif name == "teacher_selection":   # every teacher stage before MOPD, the branch included
            want = ":".join(by[f"{s}_convert"] for s in ("sft", "if_rl", "multi_domain_rl", "rlhf_branch"))
            assert _dep(args) == f"afterok:{want}", args
        elif name.endswith("_convert"):     # a conversion waits for its stage's last segment
            assert _dep(args) == f"afterok:{by[name.removesuffix('_convert')]}", args
        else:
            assert _dep(args).endswith(f"afterok:{prev_id}"), (args, prev_id)   # the job before it
    sel = calls[names.index("teacher_selection")][1]
    assert "--nodes=1" in sel and "--gres" not in sel and "select-teachers" in sel and "--run-id chain" in sel
    assert "-s cluster.branches.rlhf_from_sft=/ckpt/rlhf_branch" in sel
    assert [i for j in jobs for i in j["job_ids"]] == ids
    # MOPD was rendered with deferred teachers: one link per routing slot, filled by the selection job
    tmap = load_yaml(run.stage_dir("mopd") / "cluster" / "mopd.yaml")["on_policy_distillation"][
        "teacher_model_by_agent_name"]
    assert set(Path(p).parent for p in tmap.values()) == {run.stage_dir("mopd") / "teachers"}
    assert len(set(tmap.values())) == 3     # stage:sft, branch:rlhf_from_sft, one select: group
    assert json.loads((run.path / "chain.json").read_text())[-1]["stages"] == list(STAGE_PLAN)


def test_resume_and_range(fake, tmp_path):
    run = RunDir.for_id("resume")
    for s in ("sft", "if_rl"):
        run.write_manifest(s, {"status": "done"})
    assert chain_stages(run) == list(STAGE_PLAN[2:])
    assert chain_stages(run, until="rlhf_branch") == ["multi_domain_rl", "rlhf_branch"]
    assert chain_stages(run, from_stage="code_rl") == ["code_rl", "swe_rl"]
    run.write_manifest("code_rl", {"status": "done"})
    assert chain_stages(run, from_stage="if_rl", until="code_rl") == []
    with pytest.raises(ValueError, match="comes after"):
        chain_stages(run, from_stage="mopd", until="sft")
    cli = CliRunner()
    slurm = [a for o in OVERRIDES for a in ("-s", o)]
    r = cli.invoke(app, ["submit", "--stage", "all", "--run-id", "resume", "--profile", "paper", *slurm,
                         "--from", "rlhf", "--allow-unpinned", "--allow-dirty", "--submit", "--segments", "1"])
    assert r.exit_code == 0, r.output
    names = [_name(a) for _, a in _calls(fake)]
    assert names == ["swe_rl_agentless", "swe_rl_agentless_convert", "swe_rl_agentic",
                     "swe_rl_agentic_convert"]     # code_rl is done: the chain resumes after it


def test_selection_job_reads_stage_outputs_and_links_teachers(fake):
    from recipe.runs.teachers import record_scores

    cfg = load_config("paper", overrides=OVERRIDES)
    run = RunDir.for_id("sel")
    submit_chain(cfg, run, until="mopd", render_kw={"allow_unpinned": True, "allow_dirty": True})
    for s, scores in (("sft", {"math": 0.8}),
                      ("if_rl", {"instruction_following": 0.8, "mcqa": 0.5, "workplace_tools": 0.5,
                                 "structured_output": 0.5}),
                      ("multi_domain_rl", {"instruction_following": 0.7, "mcqa": 0.7, "workplace_tools": 0.7,
                                           "structured_output": 0.9})):
        run.write_manifest(s, {**(run.read_manifest(s) or {}), "status": "done"})
        run.write_validation(s, scores, step=1, source="test")
        record_scores(run, s, scores)
        run.checkpoint_dir(s).mkdir(parents=True, exist_ok=True)
    res = select_teachers(cfg, run)
    tdir = run.stage_dir("mopd") / "teachers"
    assert os.readlink(tdir / "stage-sft") == str(run.checkpoint_dir("sft"))
    assert os.readlink(tdir / "branch-rlhf_from_sft") == "/ckpt/rlhf_branch"
    # one multi-domain teacher by group average over the four domains: MD-RL 0.75 > IF-RL 0.575
    assert os.readlink(tdir / "select-if_rl-multi_domain_rl") == str(run.checkpoint_dir("multi_domain_rl"))
    assert res["teachers"]["genrm_simple_agent"]["checkpoint"] == "/ckpt/rlhf_branch"
    # a stage that never finished: the selection job fails, so MOPD (afterok) never starts
    run2 = RunDir.for_id("sel2")
    submit_chain(cfg, run2, until="mopd", render_kw={"allow_unpinned": True, "allow_dirty": True})
    with pytest.raises(ValueError, match="not done|no teacher"):
        select_teachers(cfg, run2)


# --- the dry run: `recipe cluster submit --stage all` without --submit ---------------------------------------------

def _dry_run(run_id: str, extra: list[str] = ()):
    cli = CliRunner()
    slurm = [a for o in [*OVERRIDES, *extra] for a in ("-s", o)]
    return cli.invoke(app, ["submit", "--stage", "all", "--run-id", run_id, "--profile", "paper", *slurm,
                            "--allow-unpinned", "--allow-dirty"])


def _planned(output: str) -> list[tuple[str, str]]:
    """(job, sbatch line) in printed order, from lines '  JOB_<job>=$(<sbatch line>)'."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^  JOB_(\w+)=\$\((sbatch .*)\)$", output, re.M)]


def test_dry_run_renders_validates_and_prints_the_sbatch_lines_it_would_submit(fake, shared_dir, monkeypatch):
    monkeypatch.setenv("RECIPE_NEMO_RL_DIR", str(shared_dir / "fixtures/nemo_rl_configs/v0.7.0"))
    r = _dry_run("dry")
    assert r.exit_code == 0, r.output
    assert not (fake / "sbatch.log").exists()                       # nothing was submitted
    assert "all 11 jobs rendered and valid" in r.output and "NOT CHECKED" not in r.output
    assert r.output.count("NeMo-Gym parser rules") == 10            # every training job, not the CPU selection job
    planned = _planned(r.output)
    assert [j for j, _ in planned] == ["sft", "if_rl", "multi_domain_rl", "rlhf_branch", "teacher_selection", "mopd",
                                       "rlhf", "long_context_rl", "code_rl", "swe_rl_agentless", "swe_rl_agentic"]
    deps = dict(planned)
    assert "--dependency=singleton,afterok:$JOB_sft " in deps["rlhf_branch"]      # the branch needs SFT only
    assert "--dependency=afterok:$JOB_sft:$JOB_if_rl:$JOB_multi_domain_rl:$JOB_rlhf_branch " in deps["teacher_selection"]
    assert "--dependency=singleton,afterok:$JOB_teacher_selection " in deps["mopd"]
    assert "--dependency=singleton,afterok:$JOB_swe_rl_agentless " in deps["swe_rl_agentic"]
    run = RunDir.for_id("dry")
    for stage in STAGE_PLAN:                                       # every job was rendered, MOPD with deferred teachers
        assert list((run.stage_dir(stage) / "cluster").glob("*.yaml")), stage
    tmap = load_yaml(run.stage_dir("mopd") / "cluster" / "mopd.yaml")["on_policy_distillation"][
        "teacher_model_by_agent_name"]
    assert set(Path(p).parent for p in tmap.values()) == {run.stage_dir("mopd") / "teachers"}
    # the same chain submitted for real: sbatch receives exactly the printed lines, job ids filled in
    r2 = CliRunner().invoke(app, ["submit", "--stage", "all", "--run-id", "dry", "--profile", "paper",
                                  *[a for o in OVERRIDES for a in ("-s", o)], "--allow-unpinned", "--allow-dirty",
                                  "--submit"])
    assert r2.exit_code == 0, r2.output
    calls = _calls(fake)
    # each training job is submitted once per segment of its plan (steps x the profile's step time)
    segs = dict(re.findall(r"^\[\d+/\d+\] \w+/(\w+): ok.*\n  (\d+) segment", r.output, re.M))
    assert set(segs) == {j for j, _ in planned} - {"teacher_selection"}
    # ... then its conversion as a one-node job after the last segment; the next job waits for the conversion
    converts = dict(re.findall(r"^  JOB_(\w+)=.*\n  then the conversion job, which the next job waits for: (sbatch .*)$",
                               r.output, re.M))
    assert set(converts) == set(segs)
    assert int(segs["sft"]) > 1 and sum(int(n) + 1 for n in segs.values()) + 1 == len(calls)
    ids, i = {}, 0
    for job, line in planned:
        for name, jid in sorted(ids.items(), key=lambda kv: -len(kv[0])):
            line = line.replace(f"$JOB_{name}", jid)
        line = line.replace('"$NEMO_RL_CHECKOUT/ray.sub"', shlex.quote(os.environ["NEMO_RL_CHECKOUT"] + "/ray.sub"))
        for _ in range(int(segs.get(job, 1))):
            jid, args = calls[i]
            assert _name(args) == job and " ".join(shlex.split(line)[1:]) == args, job
            i += 1
        if job in converts:
            cid, args = calls[i]
            assert " ".join(shlex.split(converts[job].replace("$SEGMENT", jid))[1:]) == args, job
            assert "--nodes=1 " in args and _name(args) == f"{job}_convert"
            jid, i = cid, i + 1
        ids[job] = jid


def test_dry_run_exits_nonzero_naming_what_would_be_refused(fake, shared_dir, monkeypatch):
    monkeypatch.setenv("RECIPE_NEMO_RL_DIR", str(shared_dir / "fixtures/nemo_rl_configs/v0.7.0"))
    from recipe.cluster import gym

    # the render before the Gym fix: genrm_compare.yaml without the reasoning-off policy server
    monkeypatch.setattr(gym, "REASONING_OFF_POLICY", None)
    monkeypatch.setattr(gym, "GENRM_CONFIG", "not-a-config-path")
    r = _dry_run("dry_bad")
    assert r.exit_code == 1, r.output
    refused = re.findall(r"^\[\d+/\d+\] (\w+)/(\w+): REFUSED", r.output, re.M)
    assert [j for _, j in refused] == ["rlhf_branch", "mopd", "rlhf"], r.output
    assert r.output.count("responses_api_models/'policy_model_reasoning_off', which is not defined") == 3
    assert "3 of 11 jobs would be refused: rlhf_branch, mopd, rlhf" in r.output
    assert not (fake / "sbatch.log").exists()


def test_dry_run_refuses_an_unresolvable_teacher_slot_and_reports_unrendered_stages(fake):
    # no cluster.branches.rlhf_from_sft, no agentic SWE steps: selection job and swe_rl would be refused;
    # without a NeMo-RL tree the MasterConfig rules are reported as not checked
    keep = [o for o in OVERRIDES if not o.startswith(("cluster.branches", "swe_rl.agentic.steps"))]
    cli = CliRunner()
    r = cli.invoke(app, ["submit", "--stage", "all", "--run-id", "dry_sel", "--profile", "paper",
                         *[a for o in keep for a in ("-s", o)], "--allow-unpinned", "--allow-dirty"])
    assert r.exit_code == 1, r.output
    assert "NOT CHECKED: NeMo-RL's MasterConfig rules" in r.output
    assert re.search(r"teacher_selection: REFUSED.*\n(.*\n)*?  refused: routing slot 'branch:rlhf_from_sft' \(rlhf\): "
                     r"cluster.branches.rlhf_from_sft is not set", r.output), r.output
    assert re.search(r"swe_rl/swe_rl: REFUSED.*\n  refused: not rendered: steps is null", r.output), r.output
    assert "2 of 10 jobs would be refused: teacher_selection, swe_rl" in r.output
