"""Nemotron-Cascade 2 post-training recipe (arXiv 2603.19220), reproducible on a laptop and at scale.

Sub-packages: ``config`` (typed profiles), ``model`` (tiny NemotronH + chat template), ``domains`` (tiny
toy-but-real tasks), ``rewards`` (verifiers), ``sandbox`` (the only place model output runs), ``train``
(on-policy trainer with pluggable advantage estimators), ``stages`` (one function per cascade stage),
``runs`` (run layout), ``data`` (curation), ``hub``, ``cluster`` (NeMo-RL on Slurm), ``cli``.
"""
__version__ = "0.1.0"
