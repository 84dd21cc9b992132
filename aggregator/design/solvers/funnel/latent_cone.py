"""The cone Γ of [LZG24, Def 3] on rows that do not depend on s (a latent S): the exact designer
(:mod:`.ldp`) and column generation (:mod:`.latent_cg`) both search it."""

from __future__ import annotations

from typing import cast

import numpy as np

from ...primitives.cone import GammaCone

__all__ = ["LatentGammaCone"]


class LatentGammaCone(GammaCone):
    """Γ_ε of [LZG24, Def 3] on rows w ∈ R^U that are the same for every s (a latent S)."""

    def __init__(self, lower_bounds: np.ndarray, epsilon: float) -> None:
        super().__init__(lower_bounds, epsilon)
        self.size = self.a2

    def sides(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = np.atleast_2d(rows).reshape(-1, self.a2)
        return super().sides(np.tile(w, (1, self.a1)))

    def inequalities(self) -> np.ndarray:
        """Def 3's rows with v_{s,u} = w_u: the coefficients of every s summed; shape (m, |U|)."""
        full = GammaCone(self.lower, self.epsilon).inequalities().reshape(-1, self.a1, self.a2).sum(axis=1)
        _, keep = np.unique(np.round(full, 14), axis=0, return_index=True)
        return cast("np.ndarray", full[np.sort(keep)])
