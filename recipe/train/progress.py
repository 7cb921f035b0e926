"""One progress bar for training loops: tqdm.auto renders as a widget in Jupyter and as text in a terminal."""
from __future__ import annotations

import sys


def progress_bar(total: int, initial: int, desc: str, enabled: bool = True):
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, desc=desc, disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                mininterval=0.5)
