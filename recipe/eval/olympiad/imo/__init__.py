"""IMO: IMO-AnswerBench (``imo_answer``), IMO-ProofBench grading (``imo_proof``) and the proof
generate -> verify -> refine loop (``proof_tts``)."""
