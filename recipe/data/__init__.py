"""Data curation: NVIDIA's released datasets and tiny-domain records in; decontaminated, deduplicated,
split, documented training data out (RECIPE.md §7).

Entry points: :func:`recipe.data.curate.curate` (also ``recipe data curate``), :func:`recipe.data.curation_report_views.report_table`
/ :func:`recipe.data.curation_report_views.plot_report`, :mod:`recipe.data.dataset_cards` (``recipe data card``). The record contract
is in :mod:`recipe.data.record`; row formats in :mod:`recipe.data.formats`.
"""
