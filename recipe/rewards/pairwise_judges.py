"""Pairwise judges: (prompt, response A, response B) → preference with a reason.

- ``OpenAIPairwiseJudge``: calls an OpenAI-compatible ``/v1/chat/completions`` endpoint, which is how the
  paper's GenRM and LLM judges are served at scale (e.g. vLLM; RECIPE.md stage 4 RLHF and stage 5
  long-context judge). Its verdict is parsed from ``[[A]]`` / ``[[B]]`` / ``[[TIE]]`` (MT-Bench /
  ArenaHard style), a JSON object ``{"preference": "A"|"B"|"tie", "reason": …}``, or a GenRM ranking
  score ``\\boxed{r}`` with r in 1..6 (1–3 prefer response 1, 4–6 prefer response 2; Nemotron GenRM).
  Reasoning before ``</think>`` is ignored. Network errors retry with backoff, then give a ``tie`` with
  reason ``judge_error:<Type>`` so a batch never breaks; an unparseable verdict is ``tie`` / ``unparsed``.
  The API key is read from an environment variable named in the config, never stored.
- ``DeterministicRubricJudge`` (alias ``RubricJudge``): a rule-based stand-in for the tiny profile, NOT a
  model judge. Rubric (each response): empty or unterminated thinking → 0; otherwise the sum of
  answered (non-empty visible text), length in a sane band relative to the prompt, low repetition
  (distinct-trigram ratio), and word overlap with the prompt. Higher total wins; equal totals tie.
Position bias is not corrected here; callers that need it judge both orders (``judge_both_orders``).
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from recipe.rewards.extract import BadResponse, last_boxed, parse_response
from recipe.rewards.verifier_registry import UnknownVerifierError, register

Preference = Literal["A", "B", "tie"]

DEFAULT_TEMPLATE = (
    "Please act as an impartial judge and compare the two assistant responses to the user prompt below. "
    "Judge helpfulness, correctness and instruction following; ignore response order and length alone. "
    "Explain briefly, then output your final verdict strictly as [[A]] if response A is better, [[B]] if "
    "response B is better, or [[TIE]].\n\n[User Prompt]\n{prompt}\n\n[Response A]\n{response_a}\n\n[Response B]\n{response_b}"
)


@dataclass(frozen=True)
class PairwiseVerdict:
    preference: Preference
    reason: str
    score_a: float = 0.5
    score_b: float = 0.5
    details: dict[str, Any] = field(default_factory=dict)


class PairwiseJudge(Protocol):
    def compare(self, prompt: str, response_a: Any, response_b: Any) -> PairwiseVerdict: ...


def _verdict(pref: Preference, reason: str, **details: Any) -> PairwiseVerdict:
    sa, sb = {"A": (1.0, 0.0), "B": (0.0, 1.0), "tie": (0.5, 0.5)}[pref]
    return PairwiseVerdict(pref, reason, sa, sb, details)


def parse_judgement(text: str) -> tuple[Preference | None, str]:
    """(preference, how) from a judge's output text; (None, "unparsed") when no verdict is found."""
    if "</think>" in text:
        text = text.rpartition("</think>")[2]
    tags = re.findall(r"\[\[\s*(A|B|TIE|C|A=B)\s*\]\]", text, re.IGNORECASE)
    if tags:
        t = tags[-1].upper()
        return ("A" if t == "A" else "B" if t == "B" else "tie"), "tag"
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m:
        try:
            obj = json.loads(m.group(0))
            p = str(obj.get("preference", "")).strip().upper()
            if p in ("A", "B", "TIE"):
                return ("tie" if p == "TIE" else p), "json"  # type: ignore[return-value]
        except (ValueError, AttributeError):
            pass
    boxed = last_boxed(text)
    if boxed is not None:
        try:
            r = float(boxed.strip())
        except ValueError:
            return None, "unparsed"
        if 1 <= r <= 6:
            return ("A" if r <= 3 else "B"), "ranking_score"
    return None, "unparsed"


def _visible(response: Any) -> str | None:
    try:
        return parse_response(response, None).answer
    except BadResponse:
        return None


class OpenAIPairwiseJudge:
    """Client for an OpenAI-compatible chat-completions endpoint (vLLM, NIM, OpenAI)."""

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = None, timeout_s: float = 120.0,
                 max_retries: int = 2, temperature: float = 0.0, max_tokens: int = 2048, template: str = DEFAULT_TEMPLATE):
        self.url = base_url.rstrip("/") + ("/chat/completions" if base_url.rstrip("/").endswith("/v1") else "/v1/chat/completions")
        self.model, self.timeout_s, self.max_retries = model, timeout_s, max_retries
        self.temperature, self.max_tokens, self.template = temperature, max_tokens, template
        self.api_key_env = api_key_env

    def _post(self, payload: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(self.url, data=json.dumps(payload).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - configured endpoint
            return json.loads(resp.read().decode())

    def compare(self, prompt: str, response_a: Any, response_b: Any) -> PairwiseVerdict:
        a, b = _visible(response_a), _visible(response_b)
        if a is None or b is None or not (a or "").strip() or not (b or "").strip():
            # An empty / unfinished response loses without asking the judge.
            if (a or "").strip():
                return _verdict("A", "b_empty_or_unfinished")
            if (b or "").strip():
                return _verdict("B", "a_empty_or_unfinished")
            return _verdict("tie", "both_empty_or_unfinished")
        payload = {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                   "messages": [{"role": "user", "content": self.template.format(prompt=prompt, response_a=a, response_b=b)}]}
        last_err: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                out = self._post(payload)
                text = out["choices"][0]["message"].get("content") or ""
                pref, how = parse_judgement(text)
                if pref is None:
                    return _verdict("tie", "unparsed", judge_output=text[-500:])
                return _verdict(pref, f"judge:{how}", judge_output=text[-500:])
            except (urllib.error.URLError, TimeoutError, ConnectionError, KeyError, IndexError, ValueError) as e:
                last_err = e
                if attempt < self.max_retries:
                    time.sleep(min(2.0, 0.2 * 2**attempt))
        return _verdict("tie", f"judge_error:{type(last_err).__name__}", error=str(last_err)[:300])


class DeterministicRubricJudge:
    """Rule-based pairwise judge for the tiny profile: deterministic, no model, see module docstring."""

    name = "deterministic_rubric"

    def score(self, prompt: str, response: Any) -> tuple[float, dict]:
        text = _visible(response)
        if text is None or not text.strip():
            return 0.0, {"answered": False}
        words = re.findall(r"\w+", text.lower())
        n = len(words)
        p_words = set(re.findall(r"\w+", prompt.lower()))
        trigrams = [tuple(words[i : i + 3]) for i in range(max(0, n - 2))]
        distinct = len(set(trigrams)) / len(trigrams) if trigrams else 1.0
        overlap = len(p_words & set(words)) / len(p_words) if p_words else 0.0
        length_ok = 1.0 if 3 <= n <= max(400, 20 * len(p_words)) else 0.0
        parts = {"answered": 1.0, "length_ok": length_ok, "distinct_trigrams": round(distinct, 4), "prompt_overlap": round(overlap, 4)}
        return round(sum(parts.values()), 6), parts

    def compare(self, prompt: str, response_a: Any, response_b: Any) -> PairwiseVerdict:
        sa, da = self.score(prompt, response_a)
        sb, db = self.score(prompt, response_b)
        pref: Preference = "A" if sa > sb else "B" if sb > sa else "tie"
        return PairwiseVerdict(pref, "rubric", *(_norm(sa, sb)), {"a": da, "b": db})


RubricJudge = DeterministicRubricJudge


class HiddenRubricJudge:
    """The tiny profile's pairwise judge (the ``rubric_pairwise`` kind): a response with no visible answer
    (unfinished thinking, or nothing after it) loses to one that answers, as a GenRM shown NeMo-Gym's placeholder
    for an empty output would judge it; otherwise the response that meets more of the record's hidden rubric items
    wins (``recipe.rewards.chat_rubric``); equal counts go to the shorter answer (fewer words) when
    ``length_tie_break`` is on, else tie. Deterministic and checkable by hand."""

    name = "rubric_pairwise"

    def __init__(self, length_tie_break: bool = True):
        self.length_tie_break = length_tie_break

    def compare(self, record: dict, response_a: Any, response_b: Any) -> PairwiseVerdict:
        from recipe.rewards.chat_rubric import rubric_met, visible_answer, words
        ta, tb = (visible_answer(r) for r in (response_a, response_b))
        answered_a, answered_b = bool(ta and ta.strip()), bool(tb and tb.strip())
        if answered_a != answered_b:
            return _verdict("A" if answered_a else "B", "no_answer")
        rubric = record["verifier"]["rubric"]
        ma, mb = sum(rubric_met(rubric, response_a)), sum(rubric_met(rubric, response_b))
        if ma != mb:
            return _verdict("A" if ma > mb else "B", "more_rubric_items", met_a=ma, met_b=mb)
        la, lb = (len(words(t or "")) for t in (ta, tb))
        if self.length_tie_break and la != lb:
            return _verdict("A" if la < lb else "B", "tie_broken_by_length", met_a=ma, met_b=mb, len_a=la, len_b=lb)
        return _verdict("tie", "same_items" if la != lb else "same_items_and_length", met_a=ma, met_b=mb)


def _norm(sa: float, sb: float) -> tuple[float, float]:
    total = sa + sb
    return (0.5, 0.5) if total == 0 else (sa / total, sb / total)


def judge_both_orders(judge: PairwiseJudge, prompt: str, a: Any, b: Any) -> PairwiseVerdict:
    """Judge (A, B) and (B, A); a preference that flips with the order becomes a tie."""
    first = judge.compare(prompt, a, b)
    second = judge.compare(prompt, b, a)
    swapped = {"A": "B", "B": "A", "tie": "tie"}[second.preference]
    if first.preference == swapped:
        return first
    return _verdict("tie", "order_inconsistent", first=first.preference, second=swapped)


def make_judge(kind: str, **kw: Any) -> PairwiseJudge:
    if kind == "openai":
        return OpenAIPairwiseJudge(**kw)
    if kind in ("rubric", "deterministic_rubric"):
        return DeterministicRubricJudge()
    raise ValueError(f"unknown judge kind {kind!r}; use 'openai' or 'deterministic_rubric'")


def judge_from_section(section) -> PairwiseJudge:
    """The judge a ``verify.judge`` config section (``recipe.config.verify_section.JudgeSection``) describes."""
    if section.kind == "openai":
        return make_judge("openai", base_url=section.base_url, model=section.model, api_key_env=section.api_key_env,
                          timeout_s=section.timeout_s, max_retries=section.max_retries,
                          temperature=section.temperature, max_tokens=section.max_tokens)
    return make_judge("deterministic_rubric")


@register("pairwise_judge")
def _pairwise_is_not_per_response(record: dict, response: Any):
    raise UnknownVerifierError(
        "verifier 'pairwise_judge' compares two responses: score these rows with "
        "recipe.rewards.pairwise_judges.make_judge(...).compare(prompt, response_a, response_b), not verify()/verify_batch()"
    )


_pairwise_is_not_per_response.per_response = False  # type: ignore[attr-defined]
