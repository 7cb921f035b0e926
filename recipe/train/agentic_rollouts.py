"""Agentic SWE rollouts (paper §4.8, RECIPE.md §4.1 row 7b in miniature): a multi-turn loop in non-thinking mode.

Each episode gets its own sandbox session holding a copy of the record's repository. Per turn the policy sees the
conversation so far (rendered with the chat template, tools declared in ``<tools>``) and emits one XML tool call
(``<tool_call><function=NAME><parameter=P>v</parameter></function></tool_call>``); the action runs *in the
sandbox* and its output goes back as a ``<tool_response>`` user turn:

- ``list_files``: ``find`` in the work dir;  ``read_file(path)``: ``cat``;
- ``edit_file(path, old, new)``: a small editor program replaces the one occurrence of ``old`` (paths that leave the
  work dir, missing or ambiguous ``old`` are reported back as errors);
- ``run_tests``: the hidden tests run on the current files (then removed again), answered ``N/M tests passed``;
- ``submit``: the episode ends.

The episode also ends at the turn cap (``max_turns``), on a turn that is not a well-formed tool call
(``malformed_action``) or on an unfinished (overlong) turn. Every action has the sandbox's per-turn limits
(``turn_limits``): a hung or hostile action costs its time limit and the episode goes on. Reward is
execution-based: after the episode the hidden tests run once more on the final files; 1 if all pass, else 0.

For training, an episode is one row: [prompt | turn 1 | tool response + next header | turn 2 | ...], with the loss
mask on the policy's own tokens only (tool responses and chat headers are context). Generation re-renders the
conversation with the chat template each turn; the row joins the sampled token ids with the tokenized in-between
text (the template renders history so that each turn's prompt extends the previous one; a turn that breaks this
ends the episode as ``malformed_action``).
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import torch

from recipe.domains.swe_domain import format_test_report
from recipe.sandbox import Limits, Session

EDITOR = r'''
import json, os, sys
a = json.load(sys.stdin)
root = os.path.realpath(os.getcwd())
p = os.path.realpath(os.path.join(root, a["path"]))
if not p.startswith(root + os.sep) or os.path.basename(p).startswith("_"):
    print("error: path outside the repository"); sys.exit(0)
if not os.path.isfile(p):
    print("error: no such file"); sys.exit(0)
t = open(p).read()
n = t.count(a["old"]) if a["old"] else 0
if n != 1:
    print("error: old text found %d times" % n); sys.exit(0)
open(p, "w").write(t.replace(a["old"], a["new"], 1))
print("edited")
'''

RESPONSE_CHARS = 600
VALIDATION_MAX_TURNS = 6  # validation and the eval phase play episodes of at most this many turns


def distinct_repositories(records: list[dict]) -> list[dict]:
    """One record per repository (an ``swe_agentic`` split holds several steps of each reference trajectory; an
    episode always starts at step 0 from the record's ``verifier``)."""
    repos: dict[str, dict] = {}
    for r in records:
        repos.setdefault(r["verifier"]["issue"] + r["verifier"]["path"], r)
    return list(repos.values())


def turn_limits(time_limit_s: float) -> Limits:
    return Limits(time_limit_s=time_limit_s, memory_mb=512, max_processes=16, stdout_limit_bytes=64 << 10,
                  workdir_quota_mb=16, max_file_mb=8)


def parse_action(text: str) -> tuple[str, dict] | None:
    """The single tool call of a turn, or None when the turn is not exactly one well-formed call."""
    from recipe.rewards.tool_call import parse_xml_tool_calls

    if "</tool_call>" not in text:
        return None
    calls = parse_xml_tool_calls(text)
    if len(calls) != 1 or not isinstance(calls[0].get("name"), str):
        return None
    args = calls[0].get("arguments") or {}
    if not isinstance(args, dict):
        return None
    return calls[0]["name"].strip(), {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in args.items()}


@dataclass
class Episode:
    record: dict
    session: Session
    messages: list[dict]
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    inf_lp: list[float] = field(default_factory=list)
    prompt_text: str = ""
    turns: int = 0
    done: bool = False
    finished: bool = True
    end_reason: str = ""
    actions: list[str] = field(default_factory=list)


class SandboxRepo:
    """The actions of one episode, each a sandboxed run in the episode's session."""

    TOOLS = ("list_files", "read_file", "edit_file", "run_tests", "submit")

    def __init__(self, session: Session, spec: dict, limits: Limits):
        self.s, self.spec, self.limits = session, spec, limits

    def act(self, name: str, args: dict) -> str:
        from recipe.rewards.pytests import run_tests_in_session

        if name == "list_files":
            v = self.s.run(["find", ".", "-type", "f", "-not", "-name", "_*", "-not", "-path", "*/__pycache__/*"],
                           limits=self.limits)
            out = "\n".join(sorted(ln[2:] for ln in v.stdout.splitlines() if ln.startswith("./")))
        elif name == "read_file":
            v = self.s.run(["cat", "--", str(args.get("path", ""))], limits=self.limits)
            out = v.stdout if v.ok else f"error: {v.stderr.strip()[:200] or v.status}"
        elif name == "edit_file":
            payload = json.dumps({k: str(args.get(k, "")) for k in ("path", "old", "new")})
            v = self.s.run(["python3", "-c", EDITOR], stdin=payload, limits=self.limits)
            out = v.stdout.strip() if v.ok else f"error: {v.status}"
        elif name == "run_tests":
            rep = run_tests_in_session(self.s, self.spec["tests"], self.limits)
            out = format_test_report(rep.passed, rep.total) if rep.status == "ok" else f"error: {rep.status}"
        else:
            return f"error: unknown tool {name!r}; tools: {', '.join(self.TOOLS)}"
        return out[:RESPONSE_CHARS]

    def final_reward(self) -> tuple[float, dict]:
        from recipe.rewards.pytests import run_tests_in_session

        rep = run_tests_in_session(self.s, self.spec["tests"], self.limits)
        return (1.0 if rep.all_passed else 0.0), rep.to_dict()


def take_turn(ep: Episode, text: str, finished: bool) -> tuple[str, dict] | None:
    """One policy turn of ``ep``: counts it and ends the episode on an unfinished turn, a turn that is not one
    well-formed tool call, or ``submit``; otherwise records the turn and returns the action to run in the sandbox.
    (The turn cap is checked after the action has run: an edit on the last turn still counts.)"""
    ep.turns += 1
    if not finished:
        ep.done, ep.finished, ep.end_reason = True, False, "overlong_turn"
        return None
    action = parse_action(text)
    if action is None:
        ep.done, ep.end_reason = True, "malformed_action"
        return None
    ep.actions.append(action[0])
    ep.messages.append({"role": "assistant", "content": text})
    if action[0] == "submit":
        ep.done, ep.end_reason = True, "submitted"
        return None
    return action


def start_episode(record: dict, limits: Limits) -> tuple[Episode, SandboxRepo]:
    from recipe.domains.swe_domain import agentic_prompt

    spec = record["verifier"]
    s = Session(limits)
    for path, text in spec["files"].items():
        s.write(path, text)
    ep = Episode(record=record, session=s, messages=[{"role": "user", "content": agentic_prompt(spec["issue"])}])
    return ep, SandboxRepo(s, spec, limits)


@dataclass
class AgenticRollout:
    ro: object                  # RolloutBatch, one row per episode
    rewards_B: torch.Tensor
    turns_B: torch.Tensor
    end_reasons: list[str]
    details: list[dict]


def run_episodes(model, tokenizer, records: list[dict], *, max_turns: int, max_new_tokens: int, temperature: float,
                 top_p: float, greedy: bool = False, turn_time_limit_s: float = 2.0,
                 threads: int = 2) -> AgenticRollout:
    """Play one episode per record (batched generation across episodes, sandbox actions in a thread pool)."""
    from recipe.domains.swe_domain import AGENT_TOOLS
    from recipe.model.chat_render import apply_template
    from recipe.train.rollout import RolloutBatch, generate

    tools = list(AGENT_TOOLS)
    limits = turn_limits(turn_time_limit_s)
    eos = tokenizer.eos_token
    started = [start_episode(r, limits) for r in records]
    eps = [e for e, _ in started]
    envs = [env for _, env in started]
    render = lambda msgs: apply_template(tokenizer, msgs, tools=tools, add_generation_prompt=True,  # noqa: E731
                                         enable_thinking=False)
    enc = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    rewards, details = [0.0] * len(eps), [{} for _ in eps]
    try:
        for ep in eps:
            ep.prompt_text = render(ep.messages)
            ep.ids = enc(ep.prompt_text)
            ep.mask = [0] * len(ep.ids)
            ep.inf_lp = [0.0] * len(ep.ids)
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            while True:
                active = [i for i, e in enumerate(eps) if not e.done]
                if not active:
                    break
                ro = generate(model, tokenizer, [eps[i].prompt_text for i in active], max_new_tokens=max_new_tokens,
                              temperature=temperature, top_p=top_p, greedy=greedy)
                todo = []
                for j, i in enumerate(active):
                    ep = eps[i]
                    m = ro.mask_BS[j].bool()
                    ep.ids += ro.input_ids_BS[j][m].tolist()
                    ep.mask += [1] * int(m.sum())
                    ep.inf_lp += ro.inf_logprobs_BS[j][m].tolist()
                    action = take_turn(ep, ro.texts[j], bool(ro.finished_B[j]))
                    if action is not None:
                        todo.append((i, action))
                results = list(pool.map(lambda ia: safe_act(envs[ia[0]], *ia[1]), todo))
                for (i, _), out in zip(todo, results):
                    ep = eps[i]
                    if ep.turns >= max_turns:
                        ep.done, ep.end_reason = True, "turn_cap"
                        continue
                    before = ep.prompt_text + ep.messages[-1]["content"] + eos
                    ep.messages.append({"role": "tool", "content": out})
                    nxt = render(ep.messages)
                    if not nxt.startswith(before):
                        ep.done, ep.end_reason = True, "malformed_action"
                        continue
                    mid = enc(nxt[len(before):])
                    ep.ids += mid
                    ep.mask += [0] * len(mid)
                    ep.inf_lp += [0.0] * len(mid)
                    ep.prompt_text = nxt
                for i in [i for i in active if not eps[i].done and eps[i].turns >= max_turns]:
                    eps[i].done, eps[i].end_reason = True, "turn_cap"
            finals = list(pool.map(safe_final, envs))
        for k, (r, d) in enumerate(finals):
            rewards[k], details[k] = r, {**d, "end": eps[k].end_reason, "turns": eps[k].turns,
                                         "actions": eps[k].actions}
    finally:
        for e in eps:
            e.session.close()
    # one left-padded row per episode
    S = max(len(e.ids) for e in eps)
    pad = tokenizer.pad_token_id
    B = len(eps)
    ids = torch.full((B, S), pad, dtype=torch.long)
    attn = torch.zeros(B, S, dtype=torch.long)
    mask = torch.zeros(B, S)
    inf = torch.zeros(B, S)
    for b, e in enumerate(eps):
        n = len(e.ids)
        ids[b, S - n:] = torch.tensor(e.ids)
        attn[b, S - n:] = 1
        mask[b, S - n:] = torch.tensor(e.mask, dtype=torch.float32)
        inf[b, S - n:] = torch.tensor(e.inf_lp)
    batch = RolloutBatch(input_ids_BS=ids, attention_mask_BS=attn, mask_BS=mask, inf_logprobs_BS=inf,
                         texts=["\n".join(m["content"] for m in e.messages[1:] if m["role"] == "assistant") for e in eps],
                         finished_B=torch.tensor([e.finished for e in eps]))
    return AgenticRollout(batch, torch.tensor(rewards, dtype=torch.float32),
                          torch.tensor([e.turns for e in eps]), [e.end_reason for e in eps], details)


def safe_act(env: SandboxRepo, name: str, args: dict) -> str:
    try:
        return env.act(name, args)
    except Exception as e:  # noqa: BLE001 - a hostile action (e.g. a file turned into a directory) is its own error
        return f"error: {type(e).__name__}"


def safe_final(env: SandboxRepo) -> tuple[float, dict]:
    try:
        return env.final_reward()
    except Exception as e:  # noqa: BLE001
        return 0.0, {"status": "error", "detail": f"{type(e).__name__}: {e}"[:200]}


def episode_metrics(rollouts: list[AgenticRollout]) -> dict:
    """Step metrics of agentic rounds: mean turns, share of episodes that hit the turn cap, how episodes ended."""
    turns = torch.cat([r.turns_B for r in rollouts]).float()
    ends = [e for r in rollouts for e in r.end_reasons]
    out = {"turns_mean": turns.mean().item(), "turn_cap_frac": ends.count("turn_cap") / max(1, len(ends))}
    for reason in sorted(set(ends)):
        out[f"episode_end/{reason}"] = ends.count(reason) / len(ends)
    return out


@torch.no_grad()
def agentic_validation_rows(model, tokenizer, records: list[dict], domain: str, *, samples: int, greedy: bool,
                            temperature: float, top_p: float, max_turns: int = VALIDATION_MAX_TURNS,
                            max_new_tokens: int = 48) -> list[dict]:
    """Validation rows (one per episode: domain, item_id, sample, response, reward) for ``samples`` episodes of
    every distinct repository in ``records`` (the caller seeds torch)."""
    k = 1 if greedy else samples
    eps = [r for r in distinct_repositories(records) for _ in range(k)]
    if not eps:
        return []
    ar = run_episodes(model, tokenizer, eps, max_turns=max_turns, max_new_tokens=max_new_tokens,
                      temperature=temperature, top_p=top_p, greedy=greedy)
    return [{"domain": domain, "item_id": r["id"], "sample": i % k, "response": ar.ro.texts[i],
             "reward": float(ar.rewards_B[i]), "end": ar.end_reasons[i]} for i, r in enumerate(eps)]
