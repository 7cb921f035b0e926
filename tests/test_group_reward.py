"""The RLHF reward: the tiny hidden-rubric judge and the all-pairs aggregation, on hand-computed cases."""
from __future__ import annotations

import pytest

from recipe.config.judge_section import JudgeConfig
from recipe.rewards import verify
from recipe.rewards.group_reward import aggregate_pairwise, comparison_pairs, judge_group_rewards
from recipe.rewards.pairwise_judges import HiddenRubricJudge

REC = {"domain": "chat", "messages": [{"role": "user", "content": "Tell me about the fox. Answer in capitals."}],
       "verifier": {"name": "chat_rubric", "rubric": [{"check": "mentions", "word": "fox"},
                                                       {"check": "format", "style": "upper"},
                                                       {"check": "no_filler"}]}}


def test_hidden_rubric_judge_prefers_more_items_then_shorter():
    j = HiddenRubricJudge()
    # 3 items met vs 2 (filler): more items wins
    assert j.compare(REC, "x</think>THE FOX IS RED", "x</think>SURE, THE FOX IS RED").preference == "A"
    # 2 vs 2 (no capitals, 4 words) vs (filler, 5 words): the shorter wins
    v = j.compare(REC, "x</think>SURE, THE FOX IS RED", "x</think>the fox is red")
    assert (v.preference, v.reason) == ("B", "tie_broken_by_length")
    assert j.compare(REC, "x</think>THE FOX", "x</think>THE FOX").preference == "tie"
    # an unfinished response meets nothing and loses to anything that meets an item
    assert j.compare(REC, "<think>still thinking", "x</think>fox").preference == "B"
    assert verify(REC, "x</think>SURE THE FOX").score == pytest.approx(2 / 3)


def test_a_response_without_an_answer_loses_to_any_answer_and_ties_can_stay_ties():
    """An unfinished or empty answer loses even to an answer that meets no item (a GenRM sees NeMo-Gym's placeholder
    for an empty output), so stopping early never wins a tie by length; with the length tie-break off, equal
    rubric counts tie whatever the lengths."""
    j = HiddenRubricJudge()
    wrong = "x</think>well, a dog"                     # meets nothing: no fox, no capitals, a filler word
    for empty in ("<think>still thinking", "x</think>   "):
        v = j.compare(REC, empty, wrong)
        assert (v.preference, v.reason) == ("B", "no_answer")
        assert j.compare(REC, wrong, empty).preference == "A"
    assert j.compare(REC, "<think>a", "x</think>").preference == "tie"
    no_tie_break = HiddenRubricJudge(length_tie_break=False)
    v = no_tie_break.compare(REC, "x</think>SURE, THE FOX IS RED", "x</think>the fox is red")
    assert (v.preference, v.reason) == ("tie", "same_items")
    assert no_tie_break.compare(REC, "x</think>THE FOX IS RED", "x</think>the fox is red").preference == "A"


def test_the_judge_config_switches_the_length_tie_break():
    texts = ["x</think>SURE, THE FOX IS RED", "x</think>the fox is red"]   # 2 items each, 5 vs 4 words
    on = judge_group_rewards([REC, REC], texts, 2, JudgeConfig(kind="rubric_pairwise")).tolist()
    off = judge_group_rewards([REC, REC], texts, 2, JudgeConfig(kind="rubric_pairwise", length_tie_break=False))
    assert on == [0.0, 1.0] and off.tolist() == [0.5, 0.5]


def test_pairs():
    assert comparison_pairs(4, "all_pairs") == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert comparison_pairs(4, "circular") == [(0, 1), (1, 2), (2, 3), (3, 0)]
    with pytest.raises(ValueError, match="comparison_strategy"):
        comparison_pairs(3, "random")


def test_aggregation_length_normalisation_and_gated_bonus_by_hand():
    # (0 beats 1), (0 ties 2), (2 beats 1): per-response means r0 = (1 + .5)/2 = .75, r1 = 0, r2 = (.5 + 1)/2 = .75
    comps = [(0, 1, 1.0, 0.0), (0, 2, 0.5, 0.5), (1, 2, 0.0, 1.0)]
    assert aggregate_pairwise(3, comps, [4, 2, 6]) == [0.75, 0.0, 0.75]
    # length: mean 4, range 4, c = .2 -> r -= .2 * (len - 4)/4: r0 .75, r1 0 + .1 = .1, r2 .75 - .1 = .65
    got = aggregate_pairwise(3, comps, [4, 2, 6], length_coeff=0.2)
    assert got == pytest.approx([0.75, 0.1, 0.65])
    # NeMo-Gym's bonus: the globally shortest non-empty answer, only if it reaches the top quantile. Cut-off at
    # sorted position max(1, floor(.34 * 3)) = 1: .75. Response 1 is the shortest (2 words) but scores 0: nobody
    # gets the bonus (it does not pass to response 0, the shortest of the top)
    got = aggregate_pairwise(3, comps, [4, 2, 6], length_coeff=0.2, answer_bonus=0.5, top_percentile=0.34)
    assert got == pytest.approx([0.75, 0.1, 0.65])
    # the shortest (response 2, 2 words) is in the top: it gets .5 (length term: r -= .2 * (len - 4)/4)
    got = aggregate_pairwise(3, comps, [4, 6, 2], length_coeff=0.2, answer_bonus=0.5, top_percentile=0.34)
    assert got == pytest.approx([0.75, -0.1, 1.35])
    # an empty answer (0 words) is not the shortest: response 1 (0 words) is skipped, response 2 (3) gets it
    assert aggregate_pairwise(3, comps, [5, 0, 3], answer_bonus=0.5, top_percentile=1.0) == [0.75, 0.0, 1.25]


def test_judge_group_rewards_over_a_batch():
    cfg = JudgeConfig(kind="rubric_pairwise", comparison_strategy="all_pairs")
    # group: 3 items (4 words), filler (5 words), no capitals (4 words)
    texts = ["x</think>THE FOX IS RED", "x</think>SURE, THE FOX IS RED", "x</think>the fox is red"]
    # 0 beats 1 (items), 0 beats 2 (items), 2 beats 1 (length): r = [1, 0, .5]
    assert judge_group_rewards([REC] * 3, texts, 3, cfg).tolist() == [1.0, 0.0, 0.5]
    with pytest.raises(ValueError, match="whole groups"):
        judge_group_rewards([REC] * 3, texts, 2, cfg)
    with pytest.raises(ValueError, match="compare_url"):
        judge_group_rewards([REC] * 3, texts, 3, JudgeConfig(kind="genrm_compare"))


def test_genrm_compare_client_speaks_the_nemo_gym_compare_api():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body))
            n = len(body["response_objs"])
            data = json.dumps({"rewards": [float(i) for i in range(n)], "comparison_results": []}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        cfg = JudgeConfig(kind="genrm_compare", compare_url=f"http://127.0.0.1:{srv.server_address[1]}/")
        out = judge_group_rewards([REC] * 4, ["a", "b", "c", "d"], 2, cfg)
    finally:
        srv.shutdown()
        srv.server_close()
    assert out.tolist() == [0.0, 1.0, 0.0, 1.0]      # one /compare per group, rewards in response order
    path, body = seen[0]
    assert path == "/compare" and len(seen) == 2
    assert body["conversation_history"] == [{"role": "user", "content": REC["messages"][0]["content"]}]
    assert body["response_objs"][1]["output"][0]["content"][0] == {"type": "output_text", "text": "b"}
