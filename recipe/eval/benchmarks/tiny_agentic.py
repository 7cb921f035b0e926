"""``tiny_swe_agentic``: the agentic SWE domain evaluated as validation scores it, by playing episodes.

A sample is a whole episode of the tool loop of ``recipe.train.agentic_rollouts`` (paper §4.8's execution-based agentic SWE
in miniature), not one response: the episode starts from the repository's issue (``verifier``: files, hidden tests),
the backend generates each turn in non-thinking mode with the agent's tools declared, the action runs in the
episode's sandbox and its output goes back as a tool turn, until ``submit``, a turn that is not one well-formed tool
call, an unfinished turn, or the turn cap. The score is the hidden tests on the final files (1 if all pass). The
split holds several steps of each reference trajectory; like validation, the suite keeps one row per repository.
Any backend plays: in-process Hugging Face, or an OpenAI-compatible server (the tool turns go back as ``tool``
messages; the server's chat template renders them).
"""
from __future__ import annotations

from typing import Iterator

from recipe.eval.backends.backend_interface import Generation, Job
from recipe.eval.benchmarks.suite_registry import RowError, Suite, register_suite
from recipe.eval.benchmarks.tiny import tiny_suite_name
from recipe.eval.sampling_settings import SamplingParams

DOMAIN = "swe_agentic"
TURN_TIME_LIMIT_S = 2.0  # the sandbox's CPU-time limit of one action, as in training (RLStageConfig.turn_time_limit_s)


def _messages(row: dict, thinking: bool) -> list[dict]:
    from recipe.domains.swe_domain import agentic_prompt
    spec = row.get("verifier")
    if not isinstance(spec, dict) or not isinstance(spec.get("issue"), str):
        raise RowError("field 'verifier' must hold the repository's 'issue', 'files' and 'tests'")
    return [{"role": "user", "content": agentic_prompt(spec["issue"])}]


def _tools(row: dict) -> list:
    from recipe.domains.swe_domain import AGENT_TOOLS
    return list(AGENT_TOOLS)


def play_episodes(jobs: list[Job], rows: dict[str, dict], backend, sampling: SamplingParams, *,
                  max_turns: int | None = None, turn_time_limit_s: float = TURN_TIME_LIMIT_S
                  ) -> Iterator[tuple[Job, Generation]]:
    """Every job's episode, all advanced turn by turn (one backend call per turn for the episodes still open);
    yields (job, Generation) as each episode ends. ``Generation.content`` is the policy's turns, one per line;
    ``Generation.episode``: reward, how it ended, turns, actions, the final test report."""
    from recipe.train.agentic_rollouts import (VALIDATION_MAX_TURNS, safe_act, safe_final, start_episode, take_turn,
                                      turn_limits)
    max_turns = max_turns or VALIDATION_MAX_TURNS
    turn = sampling.model_copy(update={"thinking": False})  # episodes are non-thinking (paper §4.8)
    limits = turn_limits(turn_time_limit_s)
    tools = _tools({})  # the same tools for every row
    open_eps = {}
    try:
        for job in jobs:
            ep, env = start_episode(rows[job.item_id], limits)  # its messages: the issue prompt, as job.messages
            open_eps[job.key] = (job, ep, env, {"completion_tokens": 0, "prompt_tokens": 0, "finish": "stop",
                                                "said": []})
        while open_eps:
            asks = [Job(job.item_id, job.sample, ep.messages, job.seed + 7919 * ep.turns, tools)
                    for job, ep, _, _ in open_eps.values()]
            ended = []
            for ask, g in backend.generate(asks, turn):
                job, ep, env, usage = open_eps[ask.key]
                usage["completion_tokens"] += g.completion_tokens or 0
                usage["prompt_tokens"] += g.prompt_tokens or 0
                if g.error:
                    ep.done, ep.end_reason, usage["error"] = True, "backend_error", g.error
                else:
                    usage["said"].append(g.content)  # every turn, a malformed or cut last one included
                    if g.finish_reason == "length":
                        usage["finish"] = "length"
                    action = take_turn(ep, g.content, g.finish_reason != "length")  # the training loop's rule
                    if action is not None:  # the action runs; at the turn cap the episode then ends
                        ep.messages.append({"role": "tool", "content": safe_act(env, *action)})
                        if ep.turns >= max_turns:
                            ep.done, ep.end_reason = True, "turn_cap"
                if ep.done:
                    ended.append(ask.key)
            for key in ended:
                job, ep, env, usage = open_eps.pop(key)
                if usage.get("error"):
                    # a failed request is not a sample: the harness does not cache it, a re-run plays it again
                    env.s.close()
                    yield job, Generation(content="", error=usage["error"])
                    continue
                reward, report = safe_final(env)
                env.s.close()
                yield job, Generation(
                    content="\n".join(usage["said"]),
                    finish_reason=usage["finish"], prompt_tokens=usage["prompt_tokens"],
                    completion_tokens=usage["completion_tokens"],
                    episode={"reward": reward, "end": ep.end_reason, "turns": ep.turns, "actions": ep.actions,
                             "tests": report})
    finally:
        for _, ep, env, _ in open_eps.values():
            env.s.close()


def _score(row: dict, episode, thinking: bool | None) -> dict:
    if not isinstance(episode, dict) or "reward" not in episode:
        raise RowError("an episode suite scores played episodes (recipe eval plays them); a response file cannot "
                       "be scored")
    no_answer = episode["end"] in ("malformed_action", "overlong_turn") and not episode.get("actions")
    return {"score": float(episode["reward"]), "no_answer": no_answer, "reason": episode["end"],
            "extracted": ",".join(episode.get("actions") or [])}


def _summarize(verdicts: dict[str, list[dict]]) -> dict:
    ends = [v["reason"] for vs in verdicts.values() for v in vs]
    return {"episode_ends": {e: ends.count(e) for e in sorted(set(ends))}}


def _one_row_per_repository(rows: list[dict]) -> list[dict]:
    from recipe.train.agentic_rollouts import distinct_repositories
    return distinct_repositories(rows)


SUITE = register_suite(Suite(
    name=tiny_suite_name(DOMAIN), description="tiny agentic SWE: episodes of the tool loop, graded by hidden tests",
    id_field="id", required_fields=("verifier",), messages=_messages, score=_score,
    defaults=SamplingParams(temperature=1.0, top_p=1.0, max_tokens=54, thinking=False, k=2),
    scorer_version="recipe.train.agentic_rollouts", metric="resolved", summarize=_summarize,
    adapt_rows=_one_row_per_repository, tools=_tools, play=play_episodes))
