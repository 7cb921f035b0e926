"""The agentic SWE loop (recipe.train.agentic_rollouts): the turn cap ends an episode, every action runs in the sandbox,
a good episode earns reward 1 from the hidden tests, a malformed turn ends the episode with reward 0."""
import torch

from recipe.model.chat_render import render_chat
from recipe.train import agentic_rollouts, rollout

REPO = {"name": "swe_patch", "files": {"m.py": "def a(x):\n    return x - 1\n"}, "path": "m.py",
        "issue": "a(1) returns 0 but should return 2.", "time_limit_s": 1.0,
        "tests": {"test_repo.py": "from m import a\n\ndef test_a():\n    assert a(1) == 2\n"}}


class CharTokenizer:
    eos_token, eos_token_id, pad_token_id = "<|im_end|>", 1, 0

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=False, tokenize=False,
                            enable_thinking=True):
        return render_chat(messages, tools, enable_thinking=enable_thinking, add_generation_prompt=add_generation_prompt)

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [2 + (ord(c) % 500) for c in text]}


def scripted_generate(script):
    """A stand-in policy: each call answers every active episode with the next scripted turn."""
    calls = {"n": 0}

    def generate(model, tok, prompts, **kw):
        text = script[min(calls["n"], len(script) - 1)]
        calls["n"] += 1
        B, R = len(prompts), len(text) + 1
        ids = torch.tensor([[5] * R] * B)
        return rollout.RolloutBatch(input_ids_BS=torch.cat([torch.full((B, 2), 7), ids], 1),
                                    attention_mask_BS=torch.ones(B, R + 2, dtype=torch.long),
                                    mask_BS=torch.cat([torch.zeros(B, 2), torch.ones(B, R)], 1),
                                    inf_logprobs_BS=torch.zeros(B, R + 2), texts=[text] * B,
                                    finished_B=torch.ones(B, dtype=torch.bool))
    return generate, calls


def call(name, **args):
    return f"<tool_call><function={name}>" + "".join(f"<parameter={k}>{v}</parameter>" for k, v in args.items()) \
        + "</function></tool_call>"


def test_turn_cap_ends_the_episode(monkeypatch):
    gen, calls = scripted_generate([call("list_files")])
    monkeypatch.setattr(rollout, "generate", gen)
    ar = agentic_rollouts.run_episodes(None, CharTokenizer(), [{"id": "r", "verifier": REPO}] * 2, max_turns=3,
                              max_new_tokens=64, temperature=1.0, top_p=1.0)
    assert calls["n"] == 3 and ar.turns_B.tolist() == [3, 3]
    assert ar.end_reasons == ["turn_cap", "turn_cap"] and ar.rewards_B.tolist() == [0.0, 0.0]
    assert ar.details[0]["actions"] == ["list_files"] * 3
    # one row per episode; the policy's tokens are trained, the tool responses are context only
    row_mask = ar.ro.mask_BS[0]
    assert 0 < row_mask.sum() < ar.ro.attention_mask_BS[0].sum()


def test_good_episode_is_rewarded_by_execution(monkeypatch):
    script = [call("read_file", path="m.py"), call("edit_file", path="m.py", old="x - 1", new="x + 1"),
              call("run_tests"), call("submit")]
    gen, _ = scripted_generate(script)
    monkeypatch.setattr(rollout, "generate", gen)
    ar = agentic_rollouts.run_episodes(None, CharTokenizer(), [{"id": "r", "verifier": REPO}], max_turns=6,
                              max_new_tokens=64, temperature=1.0, top_p=1.0)
    assert ar.end_reasons == ["submitted"] and ar.rewards_B.tolist() == [1.0]
    assert ar.details[0]["actions"] == ["read_file", "edit_file", "run_tests", "submit"]


def test_malformed_turn_and_escaping_edit(monkeypatch):
    gen, _ = scripted_generate([call("edit_file", path="../../etc/hosts", old="a", new="b"), "just text"])
    monkeypatch.setattr(rollout, "generate", gen)
    ar = agentic_rollouts.run_episodes(None, CharTokenizer(), [{"id": "r", "verifier": REPO}], max_turns=6,
                              max_new_tokens=64, temperature=1.0, top_p=1.0)
    assert ar.end_reasons == ["malformed_action"] and ar.rewards_B.tolist() == [0.0]


def test_sandbox_actions_report_errors():
    from recipe.sandbox import Session
    with Session(agentic_rollouts.turn_limits(1.0)) as s:
        s.write("m.py", REPO["files"]["m.py"])
        env = agentic_rollouts.SandboxRepo(s, REPO, agentic_rollouts.turn_limits(1.0))
        assert env.act("list_files", {}) == "m.py"
        assert env.act("edit_file", {"path": "../x.py", "old": "a", "new": "b"}).startswith("error: path outside")
        assert env.act("edit_file", {"path": "m.py", "old": "zzz", "new": "b"}).startswith("error: old text found 0")
        assert env.act("run_tests", {}) == "0/1 tests passed"
        assert "test_repo.py" not in env.act("list_files", {})  # hidden tests are removed after a run
        assert env.act("nope", {}).startswith("error: unknown tool")
