"""Floor 1 of design/, the primitives: what every solver builds on and nothing in design/ is below.

* :mod:`.errors` — DesignError and the solvers' errors;
* :mod:`.options` — :class:`DesignRequest` (= ``DesignOptions``), the fields of a design request;
* :mod:`.families` — GRR, SRR, IR, CR matrices ([LZG24, Def 4-5], [LZG21, Protocol 2]);
* :mod:`.cone` — the cone Γ of PolyOpt ([LZG24, Def 3]);
* :mod:`.exact` — exact PolyOpt by vertex enumeration ([LZG24, Thm 3]).

Imports only rldp.shared (the layers contract of pyproject.toml holds it to this).
"""
