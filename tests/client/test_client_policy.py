"""Trust in P̂: pinned mechanism ids and confidence-set floors refuse what plain verification accepts.

A lying aggregator can state ten times the public samples it has: with the same P̂ and the
radius that the inflated n implies, the document passes its own audit, but its confidence
set is too small for the real population. Pinning and the policy floors refuse it.
"""

from __future__ import annotations

import numpy as np
import pytest
from documents import ADMIN_TOKEN, SMALL_ALPHABET, grr

from rldp.admin import AdminClient
from rldp.client import Client, Mechanism, MechanismRejected, VerificationPolicy
from rldp.shared.divergence import confidence_radius
from rldp.shared.document import build_document

N_PUBLIC = 32_561
BETA = 0.05
P_HAT = np.array([[0.10, 0.15, 0.08], [0.22, 0.25, 0.20]])


def document(n: int, tag: str) -> dict:
    radius = confidence_radius(n, BETA, SMALL_ALPHABET.size, 2.0)
    return build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": radius, "n": n, "beta": BETA}},
        extra={"test": tag},
    )


@pytest.fixture(scope="module")
def honest() -> dict:
    return document(N_PUBLIC, "policy-honest")


@pytest.fixture(scope="module")
def inflated() -> dict:
    return document(10 * N_PUBLIC, "policy-inflated")  # same P̂, radius from the inflated n


def test_the_inflated_document_passes_plain_verification(honest, inflated):
    for doc in (honest, inflated):
        assert Mechanism.from_document(doc).audit.passed
    r_honest = honest["privacy"]["uncertainty"]["radius"]
    r_inflated = inflated["privacy"]["uncertainty"]["radius"]
    assert r_inflated < r_honest / 9  # ~ q/n: ten times the samples, a tenth of the radius


def test_pinning_refuses_any_other_mechanism(honest, inflated):
    policy = VerificationPolicy(pinned=[honest["id"]])
    assert Mechanism.from_document(honest, policy=policy).id == honest["id"]
    with pytest.raises(MechanismRejected) as info:
        Mechanism.from_document(inflated, policy=policy)
    assert info.value.mechanism_id == inflated["id"]
    assert f"{inflated['id']}: is not pinned; this client accepts only {honest['id']}" in str(info.value)


def test_max_public_n_refuses_an_inflated_n(honest, inflated):
    policy = VerificationPolicy(max_public_n=N_PUBLIC)
    Mechanism.from_document(honest, policy=policy)
    with pytest.raises(
        MechanismRejected, match=f"states n = {10 * N_PUBLIC} public samples, more than max_public_n = {N_PUBLIC}"
    ):
        Mechanism.from_document(inflated, policy=policy)


def test_max_public_n_also_refuses_a_small_radius_without_n(honest):
    # Omitting n does not help: the radius must still be that of at most max_public_n samples.
    radius = confidence_radius(10 * N_PUBLIC, BETA, SMALL_ALPHABET.size, 2.0)
    sly = build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": radius}},
    )
    Mechanism.from_document(sly)  # plain verification accepts it
    with pytest.raises(MechanismRejected, match=r"below .* the 0.95-confidence radius of max_public_n = 32561"):
        Mechanism.from_document(sly, policy=VerificationPolicy(max_public_n=N_PUBLIC))


def test_min_radius_refuses_a_smaller_confidence_set(honest, inflated):
    policy = VerificationPolicy(min_radius=honest["privacy"]["uncertainty"]["radius"])
    Mechanism.from_document(honest, policy=policy)
    with pytest.raises(
        MechanismRejected, match="confidence set is smaller than this app accepts: radius .* min_radius"
    ):
        Mechanism.from_document(inflated, policy=policy)


def test_documents_without_a_finite_set_pass_the_floors():
    unbounded = build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
    )
    ldp = build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "ldp", "epsilon": 1.0},
    )
    policy = VerificationPolicy(min_radius=1.0, max_public_n=10)
    for doc in (unbounded, ldp):
        Mechanism.from_document(doc, policy=policy)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pinned": "ab" * 32}, "not one string"),
        ({"pinned": ["xyz"]}, "64 lowercase hex"),
        ({"pinned": []}, "refuse every mechanism"),
        ({"min_radius": -1.0}, "min_radius"),
        ({"max_public_n": 0}, "max_public_n"),
        ({"max_public_n": 1.5}, "max_public_n"),
        ({"max_epsilon": 0}, "max_epsilon"),
        ({"beta": 1.0}, "beta"),
    ],
)
def test_bad_policies_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VerificationPolicy(**kwargs)


def test_the_ceiling_only_tightens():
    policy = VerificationPolicy(max_epsilon=1.0)
    assert policy.with_max_epsilon(2.0).max_epsilon == 1.0
    assert policy.with_max_epsilon(0.5).max_epsilon == 0.5
    assert VerificationPolicy().with_max_epsilon(None).max_epsilon is None


def test_a_pinned_client_refuses_before_downloading(aggregator, honest, inflated):
    agg = aggregator(honest, inflated)
    with Client(agg.url, pinned=[honest["id"]], state_path=None) as client:
        with pytest.raises(MechanismRejected, match="is not pinned"):
            client.mechanism(inflated["id"])
        assert agg.gets == 0
        assert client.mechanism(honest["id"]).id == honest["id"]
        with pytest.raises(MechanismRejected, match="is not pinned"):
            client.submit(inflated["id"], [("Male", "red")])
    assert not agg.posts


def test_clients_with_floors_against_the_real_server(server, honest, inflated):
    with AdminClient(server.url, token=ADMIN_TOKEN) as admin:
        for doc in (honest, inflated):
            admin.publish(doc)
    with Client(server.url, state_path=None) as client:
        assert client.mechanism(inflated["id"]).id == inflated["id"]  # no policy: accepted
    radius = honest["privacy"]["uncertainty"]["radius"]
    for kwargs in ({"pinned": [honest["id"]]}, {"max_public_n": N_PUBLIC}, {"min_radius": radius}):
        with Client(server.url, **kwargs, state_path=None) as client:
            assert client.mechanism(honest["id"]).id == honest["id"]
            with pytest.raises(MechanismRejected):
                client.mechanism(inflated["id"])
            with pytest.raises(MechanismRejected):
                client.submit(inflated["id"], [("Male", "red")])


def test_changing_the_ceiling_applies_to_cached_mechanisms(aggregator, honest):
    agg = aggregator(honest)
    with Client(agg.url, state_path=None) as client:
        client.mechanism(honest["id"])
        client.max_epsilon = 0.5
        with pytest.raises(MechanismRejected, match="above the allowed maximum 0.5"):
            client.mechanism(honest["id"])
        assert client.policy.max_epsilon == 0.5 and agg.gets == 1


def test_a_confidence_set_at_a_large_beta_is_refused_by_default():
    """D3: β → 1 shrinks F to a point; the default policy refuses β above 0.05, as the service does."""
    radius = confidence_radius(N_PUBLIC, 0.999999, SMALL_ALPHABET.size, 2.0)
    doc = build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={
            "notion": "rldp",
            "epsilon": 1.0,
            "uncertainty": {"order": 2, "radius": radius, "n": N_PUBLIC, "beta": 0.999999},
        },
        extra={"test": "policy-large-beta"},
    )
    with pytest.raises(MechanismRejected, match="beta = 0.999999, above max_beta = 0.05"):
        Mechanism.from_document(doc)
    Mechanism.from_document(doc, policy=VerificationPolicy(max_beta=None))  # an app may opt out, explicitly
    with pytest.raises(ValueError, match="max_beta"):
        VerificationPolicy(max_beta=1.5)


def test_a_pilot_box_is_refused_by_a_floor_unless_pinned():
    """A box narrows F whatever the radius says: an app with a floor accepts it only pinned; without floors it
    is a document like any other."""
    box = {"lower": np.zeros(P_HAT.shape).tolist(), "upper": np.ones(P_HAT.shape).tolist()}
    boxed = build_document(
        method="grr",
        matrix=grr(SMALL_ALPHABET.size, 1.0),
        alphabet=SMALL_ALPHABET,
        public_distribution=P_HAT,
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": 1.0, "box": box}},
        extra={"test": "policy-box"},
    )
    VerificationPolicy().check(boxed)
    for floors in ({"min_radius": 0.001}, {"max_public_n": 10}):
        with pytest.raises(MechanismRejected, match=r"narrowed by a pilot's box .* pin its id"):
            VerificationPolicy(**floors).check(boxed)
        VerificationPolicy(pinned=[boxed["id"]], **floors).check(boxed)
    # the advice followed literally: pinned, the box is accepted, and the radius floor still applies
    with pytest.raises(MechanismRejected, match="radius 1 is below min_radius 2"):
        VerificationPolicy(pinned=[boxed["id"]], min_radius=2.0).check(boxed)
