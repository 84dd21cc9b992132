"""The aggregator's HTTP layer (Flask): routes, problem+json answers, metrics, ``rldp serve``.

It decodes requests and encodes answers; every operation is a call into
:mod:`rldp.aggregator.services` (it never reaches storage, design or estimation directly).
"""

from .app import create_app
from .problems import MEDIA_TYPE, PROBLEMS, Problem, ProblemType, problem_type_uri

__all__ = ["create_app", "MEDIA_TYPE", "PROBLEMS", "Problem", "ProblemType", "problem_type_uri"]
