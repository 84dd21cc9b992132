"""Floor 2 of design/, the solvers: each designs one kind of matrix from the primitives.

* :mod:`.search` — the one-dimensional searches the designers share;
* :mod:`.calibrate` — IR / CR parameters from the theorems or from the exact audit;
* :mod:`.cg` — PolyOpt and NR by column generation; :mod:`.polyopt` — the PolyOpt and NR designers;
* :mod:`.per_report` — the per-report layer R at the single-report ε₁;
* :mod:`.optimal_transport` — costs, couplings (POT's ``ot.emd``), the Earth mover's distance ([KM19, Defs 7-8]);
* :mod:`.coupling` — the coupling mechanism ([KM19, Defs 16, 18; Prop 2]); :mod:`.xdistp` — XDistP ([KM19, Def 12]);
* :mod:`.funnel` — the designers of the notions ``ldp`` (w.r.t. S), ``lip`` and ``alip`` ([LTS20], [ZDS23]).

Imports the primitives, never the orchestration (the layers contract of pyproject.toml).
"""
