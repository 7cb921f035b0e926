"""Cluster backend: every cascade stage as a NeMo-RL job on Slurm, from a pinned container, driven by the
same config as the tiny cascade (DESIGN.md §5, NEMO_RL.md).

Modules, one job each:

* ``release``      the pinned NeMo-RL release (tag, entry points, base configs) and where its YAML lives
* ``nrl_yaml``     NeMo-RL's YAML rules (``defaults:`` inheritance, ``_override_``, interpolation) re-implemented
* ``keymap``       the ONE table: our stage field -> NeMo-RL key (no value typed twice)
* ``gym``          stage -> NeMo-Gym environments, agent names, data paths; MOPD teacher map from teachers.json
* ``lock``         container lock file, registry digest lookup, in-container fingerprint check
* ``provenance``   git commit / dirty tree, config hash, data revisions
* ``resume``       ``auto | never | from_step=N`` on top of NeMo-RL's unconditional auto-resume
* ``sbatch``       the sbatch script around ``ray.sub`` and the post-stage HF conversion script
* ``render``       render one stage (or the cascade) into the run layout
* ``status``       NeMo-RL checkpoint dir + logs -> manifest.json / metrics.jsonl / validation.json
* ``validate``     checks of rendered configs against a release tree (used by tests and ``render --check``)
* ``cluster_notebook_api`` render / diff / submit / monitor for notebooks with ``backend="cluster"``

Nothing here needs a GPU: rendering, validation and status run anywhere; launching needs Slurm + pyxis.
"""
