"""Instruction following from the reference registry: 1-3 IFEval constraints composed onto requests of our own.

The constraints are IFEval's own instructions (Google's code as shipped in lm-eval, loaded by
``recipe.rewards.reference_if``): each is drawn from ``INSTRUCTION_DICT``, its description and arguments are what its
own ``build_description`` writes when it draws them at random (under a seed derived from the generator's), and
pairs the registry lists in ``INSTRUCTION_CONFLICTS`` (either way round) are never combined. Grading is the
``instruction_following`` verifier with the same reference checkers, every instruction strict ("all"), as IF-RL's
reward and IFEval's strict prompt-level score. No constraint text and no checker is written here.

IFBench's instruction types are not drawn (only IFEval's registry is): IFBench is the held-out test of transfer to
constraints never trained on. Requests come from our bank (``recipe.domains.if_requests``: templates x topics),
never from a benchmark; the data phase checks them at the 13-gram level (``recipe.domains.if_decontam``).

The reference answer (what SFT learns from) is built from the bank's sentences so that it meets every constraint,
then graded by the reference checkers: a draw whose built answer fails any of them, or runs past
``if_max_answer_words``, is drawn again, so every record's reference scores 1. In practice this keeps what the
builder can write -- formatting, structure, keywords, case, and length limits an answer of that size can meet --
and drops e.g. "at least 300 words" (longer than the validation and rollout caps) and ids excluded by
``if_exclude_ids`` (the small profile: ``language:response_language``, a 135M English model cannot write 30
languages; ``keywords:letter_frequency``, no builder).
"""
from __future__ import annotations

import json
import random
import sys

from recipe.config.schema import TinyDomainSpec
from recipe.domains.example import Example
from recipe.domains.if_requests import BULLETS, PLACEHOLDERS, SENTENCES, TEMPLATES, TOPICS
from recipe.rewards.instruction_following import check_instructions
from recipe.rewards.reference_if import IFEVAL_REGISTRY, global_random, registry

MAX_DRAWS = 400  # rejected draws before giving up on one example (a constraint set nothing can satisfy)


def request_of(prompt: str) -> str:
    """The bank request a generated prompt starts with (every template is one sentence ending in its only '.')."""
    return prompt[: prompt.index(".") + 1]


def ifeval_registry():
    """lm-eval's IFEval ``instructions_registry`` module, loaded through ``reference_if`` (its import guards)."""
    registry()
    return sys.modules[IFEVAL_REGISTRY]


def training_ids(spec: TinyDomainSpec) -> list[str]:
    """The IFEval instruction ids the generator draws from: the registry's, less ``if_exclude_ids``."""
    reg = ifeval_registry()
    unknown = sorted(set(spec.if_exclude_ids) - set(reg.INSTRUCTION_DICT))
    if unknown:
        raise KeyError(f"domains.tiny.if_exclude_ids: {unknown} are not IFEval instruction ids")
    return [i for i in reg.INSTRUCTION_DICT if i not in spec.if_exclude_ids]


def _conflicts(a: str, b: str) -> bool:
    table = ifeval_registry().INSTRUCTION_CONFLICTS
    return a == b or b in table.get(a, ()) or a in table.get(b, ())



def draw_instructions(rng: random.Random, spec: TinyDomainSpec, request: str) -> list[tuple[str, str, dict]]:
    """``[(id, description, kwargs)]``: 1..``if_max_constraints`` non-conflicting IFEval instructions, each described
    and parameterised by its own ``build_description`` (``combination:repeat_prompt`` repeats ``request``)."""
    ids = training_ids(spec)
    k = rng.randint(spec.if_min_constraints, spec.if_max_constraints)
    chosen: list[str] = []
    for iid in rng.sample(ids, len(ids)):
        if len(chosen) == k:
            break
        if not any(_conflicts(iid, c) for c in chosen):
            chosen.append(iid)
    out = []
    for iid in chosen:
        inst = ifeval_registry().INSTRUCTION_DICT[iid](iid)
        given = {"prompt_to_repeat": request} if iid == "combination:repeat_prompt" else {}
        with global_random(rng.getrandbits(64)):
            text = inst.build_description(**given)
        out.append((iid, text, dict(inst.get_instruction_args() or {})))
    return out


def _split(items: list, parts: int) -> list[list]:
    size, extra = divmod(len(items), parts)
    out, at = [], 0
    for i in range(parts):
        n = size + (1 if i < extra else 0)
        out.append(items[at:at + n])
        at += n
    return out


def _body(rng: random.Random, topic: str, a: dict, n_sent: int) -> list[str]:
    """Body sentences: the bank's, then the sentences the keyword and placeholder constraints ask for."""
    fill = {"topic": topic, "Topic": topic[0].upper() + topic[1:]}
    sents = [s.format(**fill) for s in rng.sample(SENTENCES, min(n_sent, len(SENTENCES)))]
    if "keywords:existence" in a:
        sents.append("It also touches on " + " and ".join(a["keywords:existence"]["keywords"]) + ".")
    kw = a.get("keywords:frequency")
    if kw and kw["relation"] == "at least":
        sents += [f"Think about {kw['keyword']} here."] + [f"Then {kw['keyword']} again."] * (kw["frequency"] - 1)
    if "detectable_content:number_placeholders" in a:
        n = a["detectable_content:number_placeholders"]["num_placeholders"]
        sents.append("Fill in " + " and ".join(f"[{p}]" for p in PLACEHOLDERS[:n]) + " before you share it.")
    hl = a.get("detectable_format:number_highlighted_sections")
    for i in range(min(len(sents), hl["num_highlights"]) if hl else 0):
        sents[i] = f"*{sents[i]}*"
    return sents


def _layout(rng: random.Random, topic: str, a: dict, sents: list[str]) -> str:
    """Sentences -> paragraphs, sections and bullets as the structural constraints ask."""
    if "length_constraints:number_paragraphs" in a:
        return "\n***\n".join(" ".join(p) for p in _split(sents, a["length_constraints:number_paragraphs"]
                                                           ["num_paragraphs"]))
    nth = a.get("length_constraints:nth_paragraph_first_word")
    if nth:
        paras = [" ".join(p) for p in _split(sents, nth["num_paragraphs"])]
        i = nth["nth_paragraph"] - 1
        if i < len(paras):
            paras[i] = f"{nth['first_word'].capitalize()} {paras[i][0].lower()}{paras[i][1:]}"
        return "\n\n".join(paras)
    sec = a.get("detectable_format:multiple_sections")
    if sec:
        return "\n".join(f"{sec['section_spliter']} {i + 1}\n" + " ".join(p)
                         for i, p in enumerate(_split(sents, sec["num_sections"])))
    text = " ".join(sents)
    if "detectable_format:number_bullet_lists" in a:
        n = a["detectable_format:number_bullet_lists"]["num_bullets"]
        text += "\n" + "\n".join(f"* {b}." for b in rng.sample(BULLETS, n))
    return text


def build_answer(rng: random.Random, request: str, topic: str, instructions: list[tuple[str, str, dict]]) -> str:
    """A response to ``request`` written to meet ``instructions`` (the caller checks it with the reference checkers)."""
    a = {iid: kw for iid, _, kw in instructions}
    if "detectable_format:constrained_response" in a:
        return f"My answer is {rng.choice(('yes', 'no', 'maybe'))}."
    n_sent = rng.randint(2, 4)
    ns = a.get("length_constraints:number_sentences")
    if ns:
        n_sent = ns["num_sentences"] + rng.randint(0, 1) if ns["relation"] == "at least" else 1
    for iid, key in (("length_constraints:number_paragraphs", "num_paragraphs"),
                     ("length_constraints:nth_paragraph_first_word", "num_paragraphs"),
                     ("detectable_format:multiple_sections", "num_sections"),
                     ("detectable_format:number_highlighted_sections", "num_highlights")):
        if iid in a:
            n_sent = max(n_sent, a[iid][key])
    text = _layout(rng, topic, a, _body(rng, topic, a, n_sent))
    if "detectable_format:title" in a:
        text = f"<<{topic.title()}>>\n{text}"
    if "combination:two_responses" in a:
        text += "\n******\n" + " ".join(s.format(topic=topic, Topic=topic.capitalize())
                                          for s in rng.sample(SENTENCES, 2))
    if "combination:repeat_prompt" in a:
        text = f"{request}\n{text}"
    if "detectable_content:postscript" in a:
        text += f"\n{a['detectable_content:postscript']['postscript_marker']} I hope this helps."
    if "startend:end_checker" in a:
        text += f"\n{a['startend:end_checker']['end_phrase']}"
    cap = a.get("change_case:capital_word_frequency")
    if cap and cap["capital_relation"] == "at least":
        words = text.split(" ")
        for i in range(min(len(words), cap["capital_frequency"] + 2)):
            words[i] = words[i].upper()
        text = " ".join(words)
    if "change_case:english_lowercase" in a:
        text = text.lower()
    if "change_case:english_capital" in a:
        text = text.upper()
    if "punctuation:no_comma" in a:
        text = text.replace(",", "")
    if "detectable_format:json_format" in a:
        text = json.dumps({"topic": topic, "answer": text})
    if "startend:quotation" in a:
        text = f'"{text}"'
    return text


def _reasoning(topic: str, instructions: list[tuple[str, str, dict]]) -> str:
    names = [iid.split(":")[1].replace("_", " ") for iid, _, _ in instructions]
    return f"The request is about {topic}. Constraints to meet: {'; '.join(names)}."


def generate(rng: random.Random, spec: TinyDomainSpec) -> Example:
    """One prompt: a bank request with 1..3 registry constraints appended (their own descriptions), the reference
    verifier, and a built reference answer that the reference checkers accept."""
    for _ in range(MAX_DRAWS):
        topic = rng.choice(TOPICS)
        request = rng.choice(TEMPLATES).format(topic=topic)
        instructions = draw_instructions(rng, spec, request)
        prompt = " ".join([request, *(text for _, text, _ in instructions)])
        answer = build_answer(rng, request, topic, instructions)
        ids, kwargs = [i for i, _, _ in instructions], [kw for _, _, kw in instructions]
        if len(answer.split()) > spec.if_max_answer_words:
            continue
        followed, errors = check_instructions(answer, ids, kwargs, prompt)
        if all(followed) and not errors:
            return Example(prompt=(("user", prompt),),
                           verifier={"name": "instruction_following", "instruction_id_list": ids, "kwargs": kwargs,
                                     "grading_mode": "all"},
                           reasoning=_reasoning(topic, instructions), content=answer)
    raise ValueError(f"instruction_following: no draw in {MAX_DRAWS} met its constraints within "
                     f"{spec.if_max_answer_words} words; raise domains.tiny.if_max_answer_words or exclude ids")
