"""What each phase does and why, in one place: the notebooks' opening cells render these texts together with the
config values in force (``explain``), so the markdown a reader sees follows the config instead of repeating it.

Each entry: what the phase does, its objective (LaTeX), why the cascade has it (paper section), the config fields
that matter, and what to look for in the plots and tables below it. Values are never written here: they are read
from the loaded config when the text is rendered.
"""
from __future__ import annotations

from dataclasses import dataclass

from recipe.config.schema import STAGE_PLAN, RecipeConfig

GRPO_OBJECTIVE = (
    r"$$A_i=\frac{r_i-\operatorname{mean}(r_1..r_G)}{\operatorname{std}(r_1..r_G)},\qquad "
    r"\mathcal{J}(\theta)=\frac{1}{\sum_i|y_i|}\sum_{i=1}^{G}\sum_{t}"
    r"\frac{\pi_\theta(y_{i,t}\mid x,y_{i,<t})}{\operatorname{sg}[\pi_\theta(y_{i,t}\mid x,y_{i,<t})]}A_i"
    r"\;-\;\beta\,\mathrm{KL}(\pi_\theta\,\|\,\pi_{\mathrm{ref}})$$" "\n"
    "G responses per prompt, group-normalised reward as the advantage, a token-level mean, exactly one optimizer "
    "update per rollout batch (on-policy; paper §4.1.2).")

GRPO_FIELDS = ("init_from", "domains", "domain_weights", "mode", "reward", "steps", "prompts_per_step",
               "generations_per_prompt", "max_response_tokens", "temperature", "lr", "kl_coef", "dynamic_filtering",
               "overlong_filtering", "overlong_reward_zero", "prompt_mask_max_reward")
GRPO_LOOK_FOR = (
    "`train/reward` rising; `kept_groups` (groups left after dynamic filtering drops those with equal rewards): "
    "near 0 means the prompts are too easy or too hard for the policy; `overlong_frac` (responses cut at "
    "`max_response_tokens`) growing means the policy drifts to longer outputs; the heatmap row of this stage "
    "against its input row: the trained domains should rise, the others may fall (the cascade's forgetting).")


@dataclass(frozen=True)
class PhaseDoc:
    title: str
    does: str
    why: str
    objective: str
    fields: tuple[str, ...]
    look_for: str


DOCS: dict[str, PhaseDoc] = {
    "data": PhaseDoc(
        "Data phase", "Generates each domain's prompts with disjoint train / selection / validation splits, every "
        "answer checkable by the real verifiers, then curates the training files (dedup, decontamination against the "
        "evaluation files).", "Every later phase reads these files; decontamination keeps validation honest.",
        "", ("names",), "Per-domain counts per split; what curation kept, dropped (by reason) and quarantined."),
    "sft": PhaseDoc(
        "Stage 0: SFT", "Cross-entropy on the assistant tokens only, over thinking and instruct renderings of every "
        "domain.", "RL needs a policy that already emits the chat format and sometimes the right answer "
        "(paper §3.1).",
        r"$$\mathcal{L}_{\mathrm{SFT}}(\theta)=-\frac{1}{\sum_i|y_i|}\sum_i\sum_t\log\pi_\theta(y_{i,t}\mid x_i,y_{i,<t})$$",
        ("steps", "global_batch", "max_seq_len", "lr", "min_lr", "lr_schedule", "warmup_steps", "mode_mix",
         "domain_fraction"),
        "`train/loss` falling smoothly (spikes after warm-up mean the LR is too high); every domain's validation "
        "score above zero, which is what RL starts from."),
    "if_rl": PhaseDoc(
        "IF-RL: instruction-following RL", "GRPO on instruction-following prompts graded by IFEval-style checkers.",
        "First RL stage: instruction following conflicts least with later stages, so it goes first (paper §4.2).",
        GRPO_OBJECTIVE, GRPO_FIELDS, GRPO_LOOK_FOR),
    "multi_domain_rl": PhaseDoc(
        "Multi-domain RL", "GRPO on a weighted mix of domains (MCQA, tool calls, structured output) in one stage.",
        "Domains that do not interfere are trained together to save stages (paper §4.3).",
        GRPO_OBJECTIVE, GRPO_FIELDS, GRPO_LOOK_FOR + " Per-domain reward curves show whether one domain dominates."),
    "rlhf_branch": PhaseDoc(
        "RLHF side branch (the RLHF teacher)", "RLHF from the SFT checkpoint, off the main line: a pairwise judge "
        "compares all pairs of a prompt's responses; scores are aggregated per response, length-normalised, plus a "
        "quality-gated conciseness bonus; KL to the reference; thinking mode only.",
        "Its checkpoint is MOPD's chat teacher (paper §4.4), trained from SFT so it does not inherit RL drift.",
        GRPO_OBJECTIVE, GRPO_FIELDS + ("judge",), GRPO_LOOK_FOR + " The chat win rate against the fixed baselines."),
    "mopd": PhaseDoc(
        "MOPD: multi-domain on-policy distillation", "The student samples; each prompt's teacher (by domain, "
        "`teacher_routing`: math from SFT, chat from the RLHF branch, one selected multi-domain teacher) scores the "
        "sampled tokens; the advantage is teacher minus student log-prob.",
        "Recovers each domain's best checkpoint in one student after the cascade's forgetting (paper §4.4).",
        r"$$A_t=\operatorname{sg}\big[\log\pi_{T(d)}(y_t\mid\cdot)-\log\pi_\theta(y_t\mid\cdot)\big],\quad "
        r"w_t=\operatorname{sg}\Big[\tfrac{\pi_\theta(y_t\mid\cdot)}{\pi_{\mathrm{inf}}(y_t\mid\cdot)}\Big]"
        r"\,\mathbb{1}[w_t\in[\ell,h]],\quad \mathcal{J}=\frac{1}{N}\sum_i\frac{1}{|y_i|}\sum_t w_t A_t\log\pi_\theta(y_t)$$" "\n"
        r"$-\operatorname{mean}_t A_t$ is the sampled reverse KL $\mathrm{KL}(\pi_\theta\|\pi_T)$ (paper Eq. 2-4).",
        ("init_from", "domains", "teacher_routing", "steps", "prompts_per_step", "max_response_tokens", "lr",
         "importance_mask_low", "importance_mask_high", "loss_normalization"),
        "`train/reverse_kl` falling towards 0 (the student approaching its teachers); `train/masked_frac` "
        "(tokens whose importance ratio falls outside the band) staying small — a large value means the trainer's "
        "and the sampler's log-probs disagree; `train/probs_ratio` near 1; in the heatmap, the MOPD row at or above "
        "each teacher's cell."),
    "rlhf": PhaseDoc(
        "RLHF (main line)", "The same pairwise-judge RLHF as the side branch, now on the MOPD student.",
        "Helpfulness and style after distillation, with KL to the reference keeping it close (paper §4.5).",
        GRPO_OBJECTIVE, GRPO_FIELDS + ("judge",), GRPO_LOOK_FOR + " The chat win rate, and the other domains holding."),
    "long_context_rl": PhaseDoc(
        "Long-context RL", "GRPO on question answering over long documents whose facts are spread through filler "
        "(some questions need two facts); exact match on a normalised answer, an LLM judge at paper scale.",
        "Runs alone so long sequences do not share batches with short ones (paper §4.6).",
        GRPO_OBJECTIVE, GRPO_FIELDS, GRPO_LOOK_FOR),
    "code_rl": PhaseDoc(
        "Code RL", "GRPO on writing a function from a specification, graded by hidden unit tests in the sandbox with "
        "a strict binary reward; prompts the input checkpoint already solves on every sample are dropped.",
        "Execution-verified reward for competitive programming (paper §4.7).",
        GRPO_OBJECTIVE, GRPO_FIELDS, GRPO_LOOK_FOR),
    "swe_rl": PhaseDoc(
        "SWE RL: agentless, then agentic", "Agentless: the model sees the issue and the relevant files and writes an "
        "edit (search/replace or a diff) that is applied in the sandbox and tested; prompts whose best rollout scores "
        "<= `prompt_mask_max_reward` are masked out. Agentic: a multi-turn loop in instruct mode with XML tool calls "
        "(list/read a file, edit, run tests, submit), every action in the sandbox, a turn cap and an execution-based "
        "reward.", "Software-engineering tasks need both one-shot patching and tool use (paper §4.8).",
        GRPO_OBJECTIVE, GRPO_FIELDS, GRPO_LOOK_FOR),
    "report": PhaseDoc(
        "Evaluation report", "Per-domain validation scores of every checkpoint: avg@k of sampled responses (k samples "
        "per prompt at the evaluation temperature, 95% CI), the checkpoint x domain heatmap with MOPD's teachers "
        "marked, and every stage's training curves.", "One table shows what each stage gained and cost.", "",
        ("samples_per_prompt", "temperature", "max_new_tokens"),
        "Each RL row should raise the domains its stage trains; the MOPD row should reach each teacher's cell."),
}
for _name in ("swe_rl_agentless", "swe_rl_agentic"):  # if the plan names the two SWE phases separately
    DOCS[_name] = DOCS["swe_rl"]


def doc_for(phase: str) -> PhaseDoc:
    if phase not in DOCS:
        raise KeyError(f"no description for phase {phase!r}; described: {', '.join(DOCS)}")
    return DOCS[phase]


def _section(cfg: RecipeConfig, phase: str):
    if phase == "data":
        return cfg.domains
    if phase == "report":
        return cfg.evaluation
    return cfg.stage(phase)


def config_values(cfg: RecipeConfig, phase: str) -> dict[str, object]:
    """The phase's documented fields as the loaded config has them (sub-sections such as swe_rl.agentless
    flattened with a dot)."""
    section = _section(cfg, phase).model_dump(mode="json")
    out: dict[str, object] = {}
    for key in doc_for(phase).fields:
        if key in section and section[key] is not None:
            out[key] = section[key]
    for sub, val in section.items():  # nested stage sections (swe_rl: agentless / agentic)
        if isinstance(val, dict) and "steps" in val:
            for key in doc_for(phase).fields:
                if val.get(key) is not None:
                    out[f"{sub}.{key}"] = val[key]
    return out


def explain(cfg: RecipeConfig, phase: str) -> str:
    """Markdown: title, what and why, objective, the config values in force, what to look for."""
    d = doc_for(phase)
    rows = "\n".join(f"| `{k}` | `{v}` |" for k, v in config_values(cfg, phase).items())
    parts = [f"## {d.title}", f"**What it does.** {d.does}", f"**Why.** {d.why}"]
    if d.objective:
        parts.append(f"**Objective.**\n\n{d.objective}")
    section = "evaluation" if phase == "report" else "domains" if phase == "data" else phase
    parts.append(f"**Config in force** (profile `{cfg.profile}`, section `{section}`):\n\n| field | value |\n|---|---|\n{rows}")
    parts.append(f"**What to look for.** {d.look_for}")
    return "\n\n".join(parts)


def rl_stage_menu(cfg: RecipeConfig) -> str:
    """Markdown list of every stage the RL-stage notebook's ``stage`` parameter can take, from the plan."""
    lines = []
    for s in STAGE_PLAN:
        if s in ("sft", "mopd"):
            continue
        d = doc_for(s)
        local = getattr(cfg.stage(s), "implemented_locally", True)
        lines.append(f"- **`{s}`** — {d.title}: {d.does}" + ("" if local else " *(cluster backend only in this "
                                                                              "profile)*"))
    return "**Stages this notebook runs** (`stage` parameter):\n\n" + "\n".join(lines)
