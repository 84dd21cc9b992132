"""Collections: a stable name an app subscribes to, whose mechanism can change (like a DAP task).

A collection has a name, a description, a claim policy (the privacy notion and the largest
parameters any of its mechanisms may claim: ε; δ under ``distp``; ε_l and ε_u under
``alip``), a window (that of its mechanisms' documents, or none) and a sequence of
mechanisms, exactly one of them current. :meth:`Collections.rotate` makes another published
mechanism current, after checking that it is active, over the same X (same alphabet) and
window, in no collection yet, and that its claim satisfies the policy; each refusal is a
typed :class:`~.errors.ServiceError`. Reports stay keyed by mechanism (a mechanism belongs to
at most one collection, so its reports are the collection's); :meth:`Collections.estimate`
combines every mechanism's reports in one likelihood
(:func:`rldp.aggregator.estimate.estimate_combined`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import msgpack
import numpy as np

from rldp.aggregator.estimate import estimate_combined
from rldp.aggregator.estimate.numeric import numeric_summaries
from rldp.aggregator.storage import CollectionChanged, CollectionRecord, MechanismTaken, Storage
from rldp.shared.audit import notions
from rldp.shared.collection import DEFAULT_WINDOW, DRIFT_POLICIES, NO_WINDOW, Window, window_choice
from rldp.shared.errors import ValidationError, one_line
from rldp.shared.notions import NOTIONS, lookup
from rldp.shared.parameters import check_text
from rldp.shared.reports import describe_value
from rldp.shared.tolerances import AUDIT_TOLERANCE

from .errors import (
    ClaimPolicyViolated,
    CollectionConflict,
    CollectionExists,
    CollectionRetired,
    InvalidParameter,
    MechanismRetired,
    MissingField,
    RotationRefused,
    UnknownCollection,
    WrongType,
)
from .estimates import check_minimum, estimate_parameters, estimate_window
from .mechanisms import MechanismCatalog

__all__ = ["COLLECTION_NAME", "POLICY_PARAMETERS", "Collections", "check_policy", "claim_violations"]

#: A collection's name: what an app writes in its code (lowercase, digits, '.', '_', '-').
COLLECTION_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
#: The parameters of a claim policy per notion: its claim fields (the notion table's).
POLICY_PARAMETERS: dict[str, tuple[str, ...]] = {n.name: n.claim for n in NOTIONS.values()}
_DESCRIPTION_MAX = 1000


def _number(policy: Mapping[str, Any], key: str, *, low: float, closed: bool, high: float = math.inf) -> float:
    value = policy.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidParameter(f"policy.{key} must be a finite number; got {describe_value(value)}", parameter="policy")
    if not ((value >= low if closed else value > low) and value < high):
        interval = f"{'[' if closed else '('}{low:g}, {high:g})"
        raise InvalidParameter(f"policy.{key} must be in {interval}; got {value!r}", parameter="policy")
    return float(value)


def check_policy(policy: Any) -> dict[str, Any]:
    """A claim policy ``{"notion", <its parameters>}`` checked and normalised (InvalidParameter otherwise)."""
    if not isinstance(policy, Mapping):
        raise WrongType(
            f"policy must be an object such as {{'notion': 'rldp', 'epsilon': 1}}; got {describe_value(policy)}"
        )
    notion = policy.get("notion")
    if notion not in notions():
        raise InvalidParameter(
            f"policy.notion must be one of {', '.join(notions())}; got {describe_value(notion)}", parameter="policy"
        )
    params = POLICY_PARAMETERS.get(notion, ("epsilon",))
    unknown = sorted(set(policy) - {"notion", "drift", "contamination", "switch", *params})
    if unknown:
        raise InvalidParameter(
            f"policy has unknown field {unknown[0]!r} for notion {notion!r}; its fields are notion, "
            f"{', '.join(params)}, drift, contamination, switch",
            parameter="policy",
        )
    out: dict[str, Any] = {"notion": notion}
    if "drift" in policy:  # what a detected drift does (services.core._drift_policy); absent: warn
        if policy["drift"] not in DRIFT_POLICIES:
            raise InvalidParameter(
                f"policy.drift must be one of {', '.join(DRIFT_POLICIES)}; got {describe_value(policy['drift'])}",
                parameter="policy",
            )
        out["drift"] = policy["drift"]
    if "contamination" in policy:  # γ: the share of a window's reports that may be forged (estimate.evidence)
        out["contamination"] = _number(policy, "contamination", low=0.0, closed=True, high=0.5)
    if "switch" in policy:  # the pilot's automatic end; its fields are checked by services.pilots.switch_policy
        if not isinstance(policy["switch"], Mapping):
            raise InvalidParameter(
                f"policy.switch must be an object such as {{'after': 1000, 'method': 'polyopt'}}; "
                f"got {describe_value(policy['switch'])}",
                parameter="policy",
            )
        out["switch"] = dict(policy["switch"])
    for key in params:
        if key not in policy:
            raise InvalidParameter(f"policy.{key} is required for notion {notion!r}", parameter="policy")
        if key == "delta":
            out[key] = _number(policy, key, low=0.0, closed=True, high=1.0)
        else:  # (0, δ)-DistP is a claim (total variation ≤ δ); every other ε is > 0
            out[key] = _number(policy, key, low=0.0, closed=NOTIONS[notion].zero_epsilon)
    return out


def claim_violations(policy: Mapping[str, Any], privacy: Mapping[str, Any]) -> list[str]:
    """What in a document's privacy block exceeds the policy (empty: the claim satisfies it)."""
    if privacy.get("notion") != policy["notion"]:
        return [f"its notion is {privacy.get('notion')!r}, the policy's {policy['notion']!r}"]
    out = []
    for key in POLICY_PARAMETERS.get(policy["notion"], ("epsilon",)):
        claimed = float(privacy.get(key, 0.0))  # a distp document without delta claims δ = 0
        if claimed > policy[key] + AUDIT_TOLERANCE:
            out.append(f"it claims {key} = {claimed:.6g} > {policy[key]:.6g}")
    return out


def _refusal(message: str, *, parameter: str) -> InvalidParameter:
    return InvalidParameter(message, parameter=parameter)


def _text(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    if key not in data:
        if default is None:
            raise MissingField(f"the body needs {key!r}", field=key)
        return default
    value = data[key]
    if not isinstance(value, str):
        raise WrongType(f"{key} must be a string; got {describe_value(value)}", field=key)
    return value


def _check_window_asked(data: Mapping[str, Any], window: Window | None, mechanism_id: str) -> None:
    """A new collection's ``window`` against its first mechanism's: absent, the mechanism must collect by
    some window (windows are the default, :data:`rldp.shared.collection.DEFAULT_WINDOW`); ``"none"`` (or
    null) asks for a mechanism without windows; a duration must be the mechanism's. RotationRefused if not."""
    if "window" not in data:
        if window is None:
            raise RotationRefused(
                f"mechanism {mechanism_id} collects without windows, and a collection collects by window unless "
                f"asked not to (without one a repeat reporter is counted each time it reports): publish a mechanism "
                f"designed with a window (rldp design --window {DEFAULT_WINDOW}, the default), or create the "
                f"collection with window {NO_WINDOW!r}",
                mechanism=mechanism_id,
            )
        return
    try:
        asked = window_choice(data["window"])
    except ValidationError as exc:
        raise InvalidParameter(f"window: {one_line(exc)}", parameter="window") from None
    if (None if window is None else window.seconds) != (None if asked is None else Window.parse(asked).seconds):
        raise RotationRefused(
            f"window is {asked or NO_WINDOW} but mechanism {mechanism_id} collects "
            + ("without windows" if window is None else f"by {window.text} windows"),
            mechanism=mechanism_id,
        )


class Collections:
    """Create, list, rotate, retire and estimate collections over one storage and mechanism catalog."""

    def __init__(self, storage: Storage, catalog: MechanismCatalog) -> None:
        self.storage = storage
        self.catalog = catalog

    def get(self, name: Any) -> CollectionRecord:
        """A collection (UnknownCollection if there is none)."""
        if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name):
            raise UnknownCollection(
                f"no collection {describe_value(name)} here; names are 1-64 of a-z 0-9 . _ - (see GET /v1/collections)"
            )
        record = self.storage.get_collection(name)
        if record is None:
            raise UnknownCollection(f"no collection {name!r} here (see GET /v1/collections)", collection=name)
        return record

    def list(self) -> list[CollectionRecord]:
        """Every collection, oldest first."""
        return self.storage.list_collections()

    def document(self, mechanism_id: str) -> dict[str, Any]:
        """A published mechanism's document."""
        return self._document(mechanism_id)

    def _document(self, mechanism_id: str) -> dict[str, Any]:
        doc: dict[str, Any] = msgpack.unpackb(self.catalog.document(mechanism_id, "msgpack"), raw=False)
        return doc

    def _check_mechanism(self, mechanism_id: Any, policy: Mapping[str, Any], what: str) -> tuple[str, Window | None]:
        """(id, window) of a mechanism that may join a collection under ``policy``; refusals otherwise."""
        record = self.catalog.get(mechanism_id)  # UnknownMechanism
        if record.status != "active":
            raise MechanismRetired(f"mechanism {record.id} is retired; {what} needs an active one", mechanism=record.id)
        violations = claim_violations(policy, self.catalog.view(record.id).claim)
        if violations:
            raise ClaimPolicyViolated(
                f"mechanism {record.id} does not satisfy the claim policy {policy}: {'; '.join(violations)}",
                mechanism=record.id,
            )
        owners = self.storage.collections_of(record.id)
        if owners:
            raise RotationRefused(
                f"mechanism {record.id} already belongs to collection {owners[0]!r}; its reports are that "
                "collection's (publish another mechanism)",
                mechanism=record.id,
            )
        return record.id, self.catalog.window(record.id)

    def _taken(self, exc: MechanismTaken) -> RotationRefused:
        """The refusal of a creation or rotation that lost the race for a mechanism (the storage's check)."""
        owners = [exc.collection] if exc.collection else self.storage.collections_of(exc.mechanism)
        where = f"collection {owners[0]!r}" if owners else "another collection"
        return RotationRefused(
            f"mechanism {exc.mechanism} already belongs to {where}; its reports are that collection's "
            "(publish another mechanism)",
            mechanism=exc.mechanism,
        )

    def create(self, data: Any) -> tuple[CollectionRecord, bool]:
        """Create a collection from a decoded body ``{"name", "description"?, "policy", "window"?, "mechanism"}``;
        (collection, created). The same body again answers the existing collection (created False)."""
        if not isinstance(data, Mapping):
            raise WrongType(f"the body must be an object; got {describe_value(data)}")
        name = _text(data, "name")
        if not COLLECTION_NAME.fullmatch(name):
            raise InvalidParameter(
                f"name must be 1-64 characters of a-z 0-9 . _ - starting with a letter or digit; got {name!r}",
                parameter="name",
            )
        description = _text(data, "description", "")
        if len(description) > _DESCRIPTION_MAX:
            raise InvalidParameter(f"description is longer than {_DESCRIPTION_MAX} characters", parameter="description")
        # No control, format, bidi or separator character, no lone surrogate (tab and line feed are allowed):
        # refused here, with the code point, rather than failing in the database (a 500 or a 503 before).
        check_text(description, "description", blank=True, multiline=True, error=_refusal)
        if "policy" not in data:
            raise MissingField("the body needs 'policy', e.g. {'notion': 'rldp', 'epsilon': 1}", field="policy")
        policy = check_policy(data["policy"])
        mechanism_id = _text(data, "mechanism")
        existing = self.storage.get_collection(name)
        if existing is not None:
            if (existing.description, existing.policy, existing.mechanisms[0].mechanism) == (
                description,
                policy,
                mechanism_id,
            ):
                return existing, False
            raise CollectionExists(f"collection {name!r} exists with other settings", collection=name)
        mechanism_id, window = self._check_mechanism(mechanism_id, policy, "a collection")
        _check_window_asked(data, window, mechanism_id)
        try:
            created, record = self.storage.create_collection(
                name, description, policy, None if window is None else window.text, mechanism_id
            )
        except MechanismTaken as exc:  # another request put it in a collection since _check_mechanism
            raise self._taken(exc) from None
        if not created and record.mechanisms[0].mechanism != mechanism_id:  # another request created it first
            raise CollectionExists(f"collection {name!r} exists with other settings", collection=name)
        return record, created

    def rotate(self, name: Any, data: Any, *, expected: str | None = None) -> CollectionRecord:
        """Make the mechanism ``data["mechanism"]`` the collection's current one (see the module docstring);
        with ``expected``, only if that is still the current one (CollectionConflict otherwise)."""
        record = self.get(name)
        if expected is not None and record.current != expected:
            raise CollectionConflict(
                f"collection {record.name!r} is no longer at {expected} (now {record.current}); not rotated",
                collection=record.name,
            )
        if not isinstance(data, Mapping):
            raise WrongType(f"the body must be an object {{'mechanism': id}}; got {describe_value(data)}")
        mechanism_id = _text(data, "mechanism")
        if record.status != "active":
            raise CollectionRetired(f"collection {record.name!r} is retired; it cannot rotate", collection=record.name)
        if mechanism_id in {e.mechanism for e in record.mechanisms}:
            raise RotationRefused(
                f"mechanism {mechanism_id} is already in collection {record.name!r}"
                + (" (its current one)" if mechanism_id == record.current else "")
                + "; rotate to a new mechanism",
                mechanism=mechanism_id,
            )
        mechanism_id, window = self._check_mechanism(mechanism_id, record.policy, "a rotation")
        current_alpha = self.catalog.parsed(record.current)[1]
        alpha = self.catalog.parsed(mechanism_id)[1]
        if alpha != current_alpha:
            raise RotationRefused(
                f"mechanism {mechanism_id} is over another X ({', '.join(alpha.names)}: {alpha.size} values) than "
                f"collection {record.name!r} ({', '.join(current_alpha.names)}: {current_alpha.size} values)",
                mechanism=mechanism_id,
            )
        scopes = [self.catalog.view(i).uncertainty is None for i in (record.current, mechanism_id)]
        # A notion whose claim may rest on F or not (ldp): a claim over F is weaker than the one for every P.
        if lookup(record.policy["notion"]).uncertainty == "optional" and scopes[0] and not scopes[1]:
            raise RotationRefused(  # ε-LDP w.r.t. S over F is weaker than the collection's ε-LDP w.r.t. X
                f"mechanism {mechanism_id} claims ε-LDP with respect to S over an uncertainty set; collection "
                f"{record.name!r} is private with respect to X for every distribution",
                mechanism=mechanism_id,
            )
        if (None if window is None else window.text) != record.window:
            raise RotationRefused(
                f"mechanism {mechanism_id} collects {'without windows' if window is None else f'by {window.text}'}; "
                f"collection {record.name!r} {'has no window' if record.window is None else f'by {record.window}'}",
                mechanism=mechanism_id,
            )
        try:
            rotated = self.storage.rotate_collection(record.name, mechanism_id, expected or record.current)
        except CollectionChanged as exc:
            raise CollectionConflict(str(exc), collection=record.name) from None
        except MechanismTaken as exc:  # another request put it in a collection since _check_mechanism
            raise self._taken(exc) from None
        if rotated is None:  # storage never deletes a collection: only by hand
            raise UnknownCollection(f"no collection {record.name!r} here", collection=record.name)
        return rotated

    def retire(self, name: Any) -> CollectionRecord:
        """Retire a collection (idempotent): it no longer rotates; clients stop reporting to it."""
        record = self.storage.retire_collection(self.get(name).name)
        if record is None:
            raise UnknownCollection(f"no collection {name!r} here", collection=name)
        return record

    def estimate(self, name: Any, args: Mapping[str, str], min_reports: int = 1) -> dict[str, Any]:
        """P(S, U) from the reports of every mechanism of the collection, in one likelihood.

        The answer is the estimate's JSON form plus ``collection`` and ``mechanisms`` (each with
        its id, its reports and whether it is current); ``window`` restricts every mechanism to
        one window. NoReports when no mechanism has a report (in that window), TooFewReports when they
        have fewer than ``min_reports`` together."""
        record = self.get(name)
        params = estimate_parameters(args)
        label = estimate_window(None if record.window is None else Window.parse(record.window), args.get("window"))
        ids = [e.mechanism for e in record.mechanisms]
        parsed = [self.catalog.parsed(i) for i in ids]
        counts = [self.storage.counts(i, self.catalog.outputs(i), window=label) for i in ids]
        where = "" if label is None else f" in window {label}"
        total = sum(int(c.sum()) for c in counts)
        check_minimum(total, min_reports, f"collection {record.name!r}", where, collection=record.name)
        alpha, p_hat = parsed[-1][1], np.asarray(parsed[-1][2])
        shape = (1, alpha.size) if alpha.latent else alpha.shape
        if alpha.latent:
            p_hat = p_hat.sum(axis=0, keepdims=True)
        try:
            est, totals = estimate_combined(
                [p[0] for p in parsed],
                counts,
                shape,
                method=params["method"],
                interval=params["interval"],
                prior=p_hat if params["prior"] == "public" else None,
                prior_weight=params["prior_weight"],
            )
        except ValueError as exc:
            raise InvalidParameter(one_line(exc)) from None
        out = est.to_dict(None) if alpha.latent else est.to_dict(alpha)
        # one report comes from one of these mechanisms; computed only for a numeric U's note
        input_epsilon = (
            max(self.catalog.input_epsilon(i) for i in ids)
            if any(a.numeric is not None for a in alpha.released)
            else math.inf
        )
        if numeric := numeric_summaries(est, alpha, input_epsilon):  # a numeric U's mean, quantiles, CDF
            out["numeric"] = numeric
        if alpha.latent:
            out["labels"] = {"rows": [], "columns": alpha.labels()}
            out["latent"] = True
        n = sum(totals)
        theta = est.joint.reshape(-1)
        out.pop("fitted", None)  # of the stacked matrix: per mechanism below
        out["log_likelihood"] = float(est.log_likelihood) - sum(t * math.log(t / n) for t in totals if t)
        out["collection"] = record.name
        out["status"] = record.status
        out["mechanisms"] = [
            {"mechanism": i, "reports": t, "current": i == record.current, "fitted": (p[0] @ theta).tolist()}
            for i, t, p in zip(ids, totals, parsed, strict=True)
        ]
        if record.window is not None:
            out["window"] = label
        return out
