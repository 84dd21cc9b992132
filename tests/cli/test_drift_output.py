"""The drift line `rldp estimate` prints (admin/output.drift_line), from the API's answer."""

from __future__ import annotations

from rldp.admin.output import drift_line


def test_a_rejection_is_a_warning_with_the_server_s_statement():
    answer = {"drift": {"rejected": True, "statement": "the reporting population no longer looks like P̂ (...)"}}
    assert drift_line(answer) == "WARNING drift: the reporting population no longer looks like P̂ (...)"


def test_no_rejection_is_a_plain_line():
    answer = {"drift": {"rejected": False, "statement": "no evidence that the reporting population left F"}}
    assert drift_line(answer) == "drift: no evidence that the reporting population left F"


def test_a_missing_drift_object_says_why():
    assert drift_line({"drift": None, "drift_unavailable": "radius null"}) == "drift: radius null"
    assert drift_line({}) == "drift: not reported by this server"
