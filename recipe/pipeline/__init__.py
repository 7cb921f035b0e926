"""Running the cascade (local backend): the phases over a run directory (data -> stages -> report), the shared kernel
of ``recipe run``, the phase notebooks' APIs, compare-to-start. Showing a run is ``recipe.reporting``'s."""
