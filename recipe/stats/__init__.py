"""Statistics for every score the project reports: 95% intervals on means and paired bootstrap intervals on
differences between two checkpoints scored on the same items (``recipe.stats.intervals``)."""
from recipe.stats.intervals import Estimate, average_ci, item_means, mean_ci, paired_bootstrap_delta, percentile_interval

__all__ = ["Estimate", "average_ci", "item_means", "mean_ci", "paired_bootstrap_delta", "percentile_interval"]
