"""The mechanism id the README quotes from the demo's output is the one the demo publishes (issue 27 rough
edge: the README quoted an id nobody got). The demo designs every candidate from adult.data with
``DemoConfig``'s defaults; the id is the content hash of the document, so it is the same on every run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rldp.aggregator.design import design
from rldp.demo.datasets import load_adult
from rldp.demo.run import DemoConfig
from rldp.shared.document import mechanism_matrix
from rldp.shared.records import Alphabet

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
def test_the_readme_quotes_the_id_the_demo_publishes() -> None:
    match = re.search(r"^mechanism +(\S+) \((\d+) outputs\), id ([0-9a-f]{12,64})…", README.read_text("utf-8"), re.M)
    assert match, "the README's demo output no longer shows the mechanism line"
    method, outputs, quoted = match.groups()
    cfg = DemoConfig()
    public = load_adult("data")
    alphabet = Alphabet.from_table(public, cfg.sensitive, list(cfg.released), latent=cfg.latent)
    doc = design(
        method,
        alphabet=alphabet,
        public_distribution=alphabet.empirical_distribution(public),
        epsilon=cfg.epsilon,
        n=public.n_rows,
        beta=cfg.beta,
        notion=cfg.notion,
    )
    assert doc["id"].startswith(quoted), (doc["id"], quoted)
    assert mechanism_matrix(doc).shape[0] == int(outputs)
