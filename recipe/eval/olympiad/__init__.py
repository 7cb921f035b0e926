"""Olympiad scorers by the official rules (EVAL.md §4–8).

- ``imo.imo_answer``: IMO-AnswerBench with the AnswerAutoGrader judge prompt, a Math-Verify pre-check, avg@k ± SE.
- ``imo.imo_proof``: IMO-ProofBench grading on 0–7 with several judge samples; ``imo.proof_tts``: the generate →
  verify → refine loop.
- ``ioi``: CMS task packages, C++ judged in ``recipe.sandbox``, subtask/task arithmetic, ≤ 50 legal submissions.
- ``icpc``: Kattis packages, a submission policy, solved / submissions / simulated penalty.
- ``score_suites``: the ``recipe eval score --suite imo-answer|imo-proof|ioi|icpc`` entry points.
Judges are any object with ``complete(messages, **sampling) -> str`` (``completion_client.ChatModel``).
"""
