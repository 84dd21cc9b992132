"""The aggregator's domain services: what the HTTP API offers, without HTTP.

Publish and audit mechanism documents, ingest report batches, estimate distributions,
run design jobs, load the configuration. Every refusal is a typed exception
(:mod:`.errors`, and :mod:`rldp.shared.reports` for a batch's content); the HTTP layer
(rldp.aggregator.http) reaches storage, design and estimation only through this package.
"""

from rldp.aggregator.storage import CollectionRecord, JobRecord, MechanismRecord
from rldp.shared.reports import (
    BatchError,
    BatchFieldType,
    EmptyBatch,
    FutureWindow,
    InvalidWindow,
    MissingBatchField,
    ReportOutOfRange,
    TooManyReports,
    UnexpectedWindow,
    WindowRequired,
)

from .collections import COLLECTION_NAME, POLICY_PARAMETERS, Collections
from .config import DEFAULT_URL, DEFAULTS, hash_token, load_config, token_allowed, tokens_configured
from .core import AggregatorService
from .designs import COUPLING_COSTS, COUPLING_TARGETS, DESIGN_NOTIONS, DESIGN_REQUEST_FIELDS, DESIGN_SOLVERS
from .errors import (
    AddressInUse,
    AuditFailed,
    BatchConflict,
    BodySyntaxError,
    BodyTooLarge,
    ClaimPolicyViolated,
    CollectionConflict,
    CollectionExists,
    CollectionRetired,
    ConfigError,
    DatabaseUnavailable,
    DocumentIdMismatch,
    InvalidDocument,
    InvalidParameter,
    MechanismRetired,
    MissingField,
    NoReports,
    PublicDataMismatch,
    RotationRefused,
    ServiceError,
    StorageError,
    TooFewReports,
    Unauthorized,
    UnknownCollection,
    UnknownJob,
    UnknownMechanism,
    UnsupportedMediaType,
    WrongType,
)
from .estimates import ESTIMATE_INTERVALS, ESTIMATE_METHODS, ESTIMATE_PRIORS
from .events import ServiceEvents
from .ingest import Receipt
from .jobs import JOB_LIST_DEFAULT, JOB_LIST_MAX, job_list_limit
from .labels import LABEL_MAX, check_label
from .mechanisms import MECHANISM_ID, MechanismCatalog
from .runtime import WriterProcess, check_storage, clean_stale_dirs, open_service_storage, start_writer

__all__ = [
    "COLLECTION_NAME",
    "POLICY_PARAMETERS",
    "ClaimPolicyViolated",
    "CollectionConflict",
    "CollectionExists",
    "CollectionRecord",
    "CollectionRetired",
    "Collections",
    "RotationRefused",
    "UnknownCollection",
    "COUPLING_COSTS",
    "COUPLING_TARGETS",
    "AddressInUse",
    "AggregatorService",
    "AuditFailed",
    "BatchConflict",
    "BatchError",
    "BatchFieldType",
    "BodySyntaxError",
    "BodyTooLarge",
    "ConfigError",
    "DEFAULTS",
    "DEFAULT_URL",
    "DatabaseUnavailable",
    "ESTIMATE_INTERVALS",
    "LABEL_MAX",
    "check_label",
    "ESTIMATE_METHODS",
    "ESTIMATE_PRIORS",
    "DocumentIdMismatch",
    "EmptyBatch",
    "FutureWindow",
    "InvalidWindow",
    "InvalidDocument",
    "InvalidParameter",
    "DESIGN_NOTIONS",
    "DESIGN_REQUEST_FIELDS",
    "DESIGN_SOLVERS",
    "JOB_LIST_DEFAULT",
    "JOB_LIST_MAX",
    "JobRecord",
    "MECHANISM_ID",
    "MechanismRecord",
    "MechanismCatalog",
    "MechanismRetired",
    "MissingBatchField",
    "MissingField",
    "NoReports",
    "TooFewReports",
    "PublicDataMismatch",
    "Receipt",
    "ReportOutOfRange",
    "ServiceError",
    "ServiceEvents",
    "StorageError",
    "TooManyReports",
    "UnexpectedWindow",
    "Unauthorized",
    "UnknownJob",
    "UnknownMechanism",
    "UnsupportedMediaType",
    "WindowRequired",
    "WriterProcess",
    "WrongType",
    "check_storage",
    "clean_stale_dirs",
    "hash_token",
    "job_list_limit",
    "load_config",
    "open_service_storage",
    "start_writer",
    "token_allowed",
    "tokens_configured",
]
