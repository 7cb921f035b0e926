"""Results as a reader sees them: one run's suites and ours beside the paper's Table 1 (``tables``), and our IFEval
harness against a number someone else published (``published_ifeval``)."""
