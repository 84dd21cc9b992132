"""The dashboard's blueprint, what every page shares (login required, errors, headers), login and
logout, the mechanisms list, one mechanism, its label and its retirement."""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit

from flask import Blueprint, Response, current_app, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from rldp.aggregator.services import LABEL_MAX, InvalidParameter, ServiceError
from rldp.aggregator.services.dashboard import mechanism_rows, mechanism_view

from ..problems import problem_for
from ..responses import current_service, iso
from .charts import heatmap, shade_class
from .session import (
    User,
    csrf_valid,
    current_user,
    end_session,
    login_csrf_valid,
    login_nonce,
    secure_request,
    set_login_cookie,
    start_session,
    token_role,
)
from .throttle import login_throttle

__all__ = ["blueprint", "page", "login_required", "checked_form", "too_large_page"]

blueprint = Blueprint("dashboard", __name__, url_prefix="/ui", template_folder="templates", static_folder="static")

F = TypeVar("F", bound=Callable[..., Any])

#: The browser may load only this server's own files; no script runs on the dashboard's pages.
_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


@blueprint.after_request
def _headers(resp: Response) -> BaseResponse:
    resp.headers["Content-Security-Policy"] = _CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "same-origin"
    resp.headers.setdefault("Cache-Control", "no-store")
    return resp


@blueprint.app_template_filter("when")
def _when(ts: float | None) -> str:
    text = iso(ts)
    return "—" if text is None else text[:19].replace("T", " ") + " UTC"


@blueprint.app_template_filter("when_short")
def _when_short(ts: float | None) -> str:
    text = iso(ts)
    return "—" if text is None else text[:16].replace("T", " ")


@blueprint.app_template_filter("num")
def _num(value: Any, digits: int = 4) -> str:
    """A value as the pages show it: "—" for none, yes/no, lists joined, floats to ``digits`` significant figures."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_num(v, digits) for v in value) or "—"
    if isinstance(value, float):
        return (
            f"{value:.{digits}g}"
            if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6)
            else f"{value:.{digits}f}".rstrip("0").rstrip(".")
        )
    return str(value)


@blueprint.app_template_filter("p4")
def _p4(value: float | None) -> str:
    """A probability with 4 decimals ("—" for none: an unbounded interval end)."""
    return "—" if value is None else f"{value:.4f}"


@blueprint.app_template_filter("epsilon")
def _epsilon(value: float | None) -> str:
    """An ε to 3 significant figures ("∞" for none: the API writes an infinite ε as null)."""
    return "∞" if value is None else f"{value:.3g}"


def page(template: str, status: int = 200, user: User | None = None, **context: Any) -> BaseResponse:
    """Render a dashboard page (the template sees ``user``, ``secure``)."""
    html = render_template(template, user=user or current_user(), secure=secure_request(), **context)
    return Response(html, status=status, mimetype="text/html")


def _error_page(status: int, title: str, detail: str) -> BaseResponse:
    return page("error.html", status, title=title, detail=detail)


def too_large_page(limit: int) -> BaseResponse:
    """The 413 page for a dashboard form over ``MAX_BODY_BYTES`` (the API answers a JSON problem)."""
    return _error_page(
        413,
        "Upload too large",
        f"The form sent more than this server accepts: the limit is {limit:,} bytes ({limit / 2**20:.1f} MiB, "
        "MAX_BODY_BYTES). Upload a smaller CSV (only the columns you design for), or ask the operator "
        "to raise RLDP_MAX_BODY_BYTES.",
    )


@blueprint.errorhandler(ServiceError)
def _refused(exc: ServiceError) -> BaseResponse:
    problem = problem_for(exc, request.method, request.path)
    return _error_page(problem.type.status, problem.type.title, problem.detail)


def login_required(admin: bool = False) -> Callable[[F], F]:
    """Send a visitor without a session to the login page; a read-only session gets 403 on admin pages."""

    def wrap(view: F) -> F:
        @functools.wraps(view)
        def inner(*args: Any, **kwargs: Any) -> Any:
            user = current_user()
            if user is None:
                return redirect(url_for("dashboard.login", next=request.full_path.rstrip("?")))
            if admin and not user.admin:
                return _error_page(
                    403, "Admin only", "This page needs the admin token; you are logged in with a read token."
                )
            return view(user, *args, **kwargs)

        return inner  # type: ignore[return-value]

    return wrap


def checked_form(user: User) -> BaseResponse | None:
    """None if the posted form carries the session's CSRF token, else the 403 page to answer."""
    if csrf_valid(user, request.form.get("csrf_token")):
        return None
    return _error_page(
        403,
        "Form refused",
        "This form did not come from this dashboard page, or it has expired. Go back, reload the page and try again.",
    )


def _safe_next(target: str | None) -> str:
    """Where to go after login: a path of this dashboard only (never another site).

    Dot segments are resolved (percent-encoded ones too, as browsers do) before the /ui/ check,
    and a target holding control characters (a newline would break the Location header) or a
    backslash is dropped: any refusal goes to the mechanisms list.
    """
    fallback = url_for("dashboard.mechanisms")
    if not target or "\\" in target or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return fallback
    parts = urlsplit(target)
    path = unquote(parts.path)
    if parts.scheme or parts.netloc or "\\" in path or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        return fallback
    normal = posixpath.normpath(path) + ("/" if path.endswith("/") else "")
    if not normal.startswith("/ui/") or normal.startswith("//"):
        return fallback
    query = quote(parts.query, safe="=&/?:@!$'()*+,;-._~%")
    return quote(normal, safe="/:@!$&'()*+,;=-._~") + (f"?{query}" if query else "")


@blueprint.route("/login", methods=["GET", "POST"])
def login() -> BaseResponse:
    error, status = None, 200
    if request.method == "POST":
        throttle, address = login_throttle(current_app), request.remote_addr or ""
        wait = throttle.retry_after(address)
        if wait is not None:  # too many failed logins from this address: check no token for a while
            resp = _error_page(
                429,
                "Too many failed logins",
                f"{throttle.max_failures} logins from your address failed within {throttle.window:g} s. "
                f"Try again in {wait} s.",
            )
            resp.headers["Retry-After"] = str(wait)
            return resp
        if not login_csrf_valid(request.form.get("csrf_token")):
            error, status = "The login form expired or did not come from this page; try again.", 403
        else:
            role = token_role(request.form.get("token", "").strip())
            if role is not None:
                resp = redirect(_safe_next(request.form.get("next")), 303)
                start_session(resp, request.form.get("token", "").strip())
                return resp
            throttle.failed(address)
            error, status = "That token is not valid here: use the admin token or a read token.", 401
    elif current_user() is not None:
        return redirect(_safe_next(request.args.get("next")))
    nonce = login_nonce()
    resp = page("login.html", status, user=None, nonce=nonce, error=error, next=request.values.get("next", ""))
    set_login_cookie(resp, nonce)
    return resp


@blueprint.post("/logout")
@login_required()
def logout(user: User) -> BaseResponse:
    refused = checked_form(user)
    if refused is not None:
        return refused
    resp = redirect(url_for("dashboard.login"), 303)
    end_session(resp)
    return resp


@blueprint.get("/")
@login_required()
def mechanisms(user: User) -> BaseResponse:
    return page("mechanisms.html", user=user, rows=mechanism_rows(current_service()))


def _mechanism_page(user: User, mechanism_id: str, status: int = 200, **context: Any) -> BaseResponse:
    view = mechanism_view(current_service(), mechanism_id)
    return page(
        "mechanism.html",
        status,
        user=user,
        view=view,
        heatmap=heatmap(view["matrix"], view["columns"]),
        shade=shade_class(float(view["public"].max())),
        label_max=LABEL_MAX,
        **context,
    )


@blueprint.get("/mechanisms/<mechanism_id>")
@login_required()
def mechanism(user: User, mechanism_id: str) -> BaseResponse:
    return _mechanism_page(
        user, mechanism_id, retired_now=request.args.get("retired") == "1", labelled=request.args.get("labelled")
    )


@blueprint.post("/mechanisms/<mechanism_id>/label")
@login_required(admin=True)
def label(user: User, mechanism_id: str) -> BaseResponse:
    """Set or remove a mechanism's label: the API's PATCH through the same service call and validator."""
    refused = checked_form(user)
    if refused is not None:
        return refused
    catalog = current_service().catalog
    record = catalog.get(mechanism_id)
    remove = request.form.get("action") == "remove"
    text = request.form.get("label", "")
    try:
        # "" (Save with an empty field) goes to the validator, which refuses it naming what a label must be.
        catalog.set_label(record.id, None if remove else text)
    except InvalidParameter as exc:
        return _mechanism_page(user, record.id, 422, label_error=exc.detail, label_value=text)
    return redirect(
        url_for("dashboard.mechanism", mechanism_id=record.id, labelled="removed" if remove else "saved"), 303
    )


@blueprint.route("/mechanisms/<mechanism_id>/retire", methods=["GET", "POST"])
@login_required(admin=True)
def retire(user: User, mechanism_id: str) -> BaseResponse:
    service = current_service()
    record = service.catalog.get(mechanism_id)
    if request.method == "GET":
        return page("retire.html", user=user, record=record, reports=mechanism_view(service, record.id)["reports"])
    refused = checked_form(user)
    if refused is not None:
        return refused
    service.catalog.retire(record.id)
    return redirect(url_for("dashboard.mechanism", mechanism_id=record.id, retired=1), 303)
