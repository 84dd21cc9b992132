"""Floor 3 of design/, the orchestration: from a request to an audited document.

* :mod:`.registry` — the designers (one object per method, one call signature) and the method tables;
* :mod:`.request` — :func:`validate_request`, the rules of a design request;
* :mod:`.build` — :func:`design` / :func:`design_matrix`: design, audit, package as a document;
* :mod:`.sources` — where the counts of a design come from (public data, a pilot);
* :mod:`.pilot` — the pilot design and the switch after it;
* :mod:`.choose` — the method ``auto`` (every certified method, the best kept) and the warning for an ε
  that lets any mechanism release the data nearly as it is.
"""
