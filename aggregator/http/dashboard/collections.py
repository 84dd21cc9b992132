"""Collections on the dashboard: the list (read, admin) and, for the admin, create, rotate and retire.

Each form is one call of :class:`rldp.aggregator.services.Collections`, the same checks as the API
(a refusal is shown above the forms, which keep their values).
"""

from __future__ import annotations

from typing import Any

from flask import redirect, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import DRIFT_POLICIES, ServiceError
from rldp.shared.collection import drift_contamination, drift_policy

from ..responses import current_service
from .pages import blueprint, checked_form, login_required, page
from .session import User

__all__ = ["collection_request_from_form"]

_POLICY_FIELDS = ("epsilon", "delta", "epsilon_lower", "epsilon_upper")


def collection_request_from_form() -> dict[str, Any]:
    """The POST /v1/collections body the submitted form stands for (numbers left to the service to check)."""
    form = request.form
    policy: dict[str, Any] = {"notion": form.get("notion", "").strip()}
    for key in _POLICY_FIELDS:
        text = form.get(key, "").strip()
        if text:
            try:
                policy[key] = float(text)
            except ValueError:
                policy[key] = text  # refused by the service, naming the field
    data: dict[str, Any] = {
        "name": form.get("name", "").strip(),
        "description": form.get("description", "").strip(),
        "policy": policy,
        "mechanism": form.get("mechanism", "").strip().lower(),
    }
    window = form.get("window", "").strip()
    if window:
        data["window"] = window
    drift = form.get("drift", "").strip()
    if drift and drift != DRIFT_POLICIES[0]:
        policy["drift"] = drift
    contamination = form.get("contamination", "").strip()
    if contamination:
        try:
            policy["contamination"] = float(contamination)
        except ValueError:
            policy["contamination"] = contamination  # refused by the service, naming the field
    after = form.get("switch_after", "").strip()
    if after:
        policy["switch"] = {"after": int(after) if after.isdigit() else after}  # the notion's recommended method
    return data


def _page(user: User, error: str | None = None, done: str | None = None) -> BaseResponse:
    service = current_service()
    collections = service.collections.list()
    return page(
        "collections.html",
        422 if error else 200,
        user=user,
        collections=collections,
        paused={c.current: p for c in collections if (p := service.pauses.get(c.current)) is not None},
        upload_tokens=service.upload_credentials.collections(),
        claim_keys=_POLICY_FIELDS,
        drift_policies=DRIFT_POLICIES,
        drift_policy=drift_policy,
        drift_contamination=drift_contamination,
        default_contamination=drift_contamination({}),
        error=error,
        done=done,
        form=request.form if error else {},
    )


@blueprint.route("/collections", methods=["GET", "POST"])
@login_required()
def collections(user: User) -> BaseResponse:
    if request.method == "GET":
        return _page(user, done=request.args.get("done"))
    if not user.admin:
        return _page(user, error="creating a collection needs the admin token; you are logged in with a read token")
    refused = checked_form(user)
    if refused is not None:
        return refused
    try:
        record, _ = current_service().create_collection(collection_request_from_form())
    except ServiceError as exc:
        return _page(user, error=exc.detail)
    return redirect(url_for("dashboard.collections", done=f"created {record.name}"), 303)


@blueprint.post("/collections/<name>/<action>")
@login_required(admin=True)
def collection_action(user: User, name: str, action: str) -> BaseResponse:
    refused = checked_form(user)
    if refused is not None:
        return refused
    service = current_service()
    try:
        if action == "rotate":
            record = service.collections.rotate(name, {"mechanism": request.form.get("mechanism", "").strip().lower()})
        elif action == "retire":
            record = service.collections.retire(name)
        elif action == "resume":
            record = service.resume_collection(name)
        else:
            return _page(user, error=f"no action {action!r} on a collection (rotate, resume or retire)")
    except ServiceError as exc:
        return _page(user, error=exc.detail)
    verb = {"rotate": "rotated", "retire": "retired", "resume": "resumed"}[action]
    return redirect(url_for("dashboard.collections", done=f"{verb} {record.name}"), 303)
