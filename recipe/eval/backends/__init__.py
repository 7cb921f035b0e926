"""Generation backends of the harness, one interface (``base.Backend``): in-process Hugging Face (``hf``), an
OpenAI-compatible server such as vLLM (``openai_client``), and the Slurm job that serves a model with vLLM at paper
scale (``serve_sbatch``)."""
