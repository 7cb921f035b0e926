"""A reduced-step tiny profile for end-to-end tests (seconds, not minutes). Shrunken settings, each on purpose:
few items per domain, a few steps per stage, small rollout batches, short generations, and the model at hidden size
64 (0.34M parameters, the same layer pattern; a cascade ~20% faster than at the profile's 96). These tests check the
wiring (resume, notebooks, caching, reports), not what the stages teach: docs/EVIDENCE.md measures that at 96."""
from recipe.reporting.capacity import ModelSize

FAST = [*ModelSize(64).overrides(),
    "run.torch_threads=1",  # make test runs two workers on two cores
    "evaluation.lanes=1",   # the same (validation in process); tests/test_validation_lanes.py covers the lanes
    "domains.tiny.train_items=200", "domains.tiny.val_items=16", "model.tokenizer.corpus_examples=400",
    "sft.steps=30", "sft.global_batch=16", "sft.warmup_steps=5", "sft.save_every=10",
    "if_rl.steps=4", "if_rl.prompts_per_step=4", "if_rl.generations_per_prompt=4", "if_rl.save_every=2",
    "if_rl.max_response_tokens=16",
    "multi_domain_rl.steps=3", "multi_domain_rl.prompts_per_step=4", "multi_domain_rl.generations_per_prompt=4",
    "multi_domain_rl.max_response_tokens=16",
    "mopd.steps=3", "mopd.prompts_per_step=8", "mopd.warmup_steps=1", "mopd.max_response_tokens=16",
    "domains.tiny.selection_items=8", "if_rl.teacher_candidate_every=2", "multi_domain_rl.teacher_candidate_every=2",
    "rlhf_branch.steps=2", "rlhf_branch.prompts_per_step=4", "rlhf_branch.generations_per_prompt=4",
    "rlhf_branch.max_response_tokens=16",
    "rlhf.steps=2", "rlhf.prompts_per_step=4", "rlhf.generations_per_prompt=4", "rlhf.max_response_tokens=16",
    "evaluation.max_new_tokens=16", "evaluation.max_new_tokens_per_domain={}",
    "domains.tiny.train_items_per_domain={long_context: 60, code: 60, swe: 60, swe_agentic: 80}",
    "domains.tiny.val_items_per_domain={long_context: 6, code: 6, swe: 6, swe_agentic: 3}",
    "domains.tiny.long_context_filler=20",
    "long_context_rl.steps=2", "long_context_rl.prompts_per_step=4", "long_context_rl.generations_per_prompt=4",
    "long_context_rl.max_response_tokens=16",
    "code_rl.steps=2", "code_rl.prompts_per_step=4", "code_rl.generations_per_prompt=4",
    "code_rl.max_response_tokens=24", "code_rl.hard_prompt_filter_samples=2",
    "swe_rl.agentless.steps=2", "swe_rl.agentless.prompts_per_step=2", "swe_rl.agentless.generations_per_prompt=4",
    "swe_rl.agentless.max_response_tokens=24",
    "swe_rl.agentic.steps=1", "swe_rl.agentic.prompts_per_step=2", "swe_rl.agentic.generations_per_prompt=2",
    "swe_rl.agentic.max_turns=2", "swe_rl.agentic.max_response_tokens=16",
]
