"""The progress display of ``rldp design`` (a tqdm bar on stderr)."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

__all__ = ["DesignProgress"]


class DesignProgress:
    """A progress display on stderr for the iterative solvers: elapsed time against the
    time budget, with the current utility (NMI of the best mechanism so far) and the
    proven upper bound when one is known (a tqdm bar)."""

    def __init__(self, enabled: bool, budget: float, entropy_nats: float) -> None:
        self.enabled = enabled
        self.budget = budget
        self.h = entropy_nats if entropy_nats > 0 else 1.0
        self.bar: Any = None

    def __enter__(self) -> DesignProgress:
        if self.enabled:
            try:
                self.bar = tqdm(
                    total=round(self.budget, 1),
                    unit="s",
                    file=sys.stderr,
                    leave=False,
                    bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}",
                )
            except KeyboardInterrupt:  # Ctrl-C as the bar is drawn: the next line must not follow it
                print(file=sys.stderr)
                raise
        return self

    def update(self, info: dict[str, Any]) -> None:
        if not self.enabled:
            return
        text = f"NMI {info['information'] / self.h:.4f}"
        if info.get("upper_bound") is not None:
            text += f" (<= {info['upper_bound'] / self.h:.4f})"
        text += f", round {info['iteration']}, {info['columns']} columns"
        self.bar.n = min(round(info["seconds"], 1), self.bar.total)
        self.bar.set_postfix_str(text, refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
