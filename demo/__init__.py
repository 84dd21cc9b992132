"""rldp.demo: the end-to-end demo, the papers' experiments and the shipped Adult data.

* :mod:`.run` — ``rldp demo``: many simulated users, each running the client SDK against
  an aggregator service.
* :mod:`.experiments` — ``rldp experiment NAME``: [LZG24, Sec 8] and [LZG21, Sec V].
* :mod:`.user_worker` — what each simulated user's process runs (the SDK only).
* :mod:`.datasets` — the UCI Adult data (``data/``); :mod:`.plots` — the figures;
  :mod:`.cli` — the two subcommands.
"""
