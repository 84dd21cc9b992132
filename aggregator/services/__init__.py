"""The aggregator's domain services: what the HTTP API offers, without HTTP.

Publish and audit mechanism documents, ingest report batches, estimate distributions,
run design jobs, load the configuration. Every refusal is a typed exception
(:mod:`.errors`, and :mod:`rldp.shared.reports` for a batch's content); the HTTP layer
(rldp.aggregator.http) reaches storage, design and estimation only through this package.
"""

from rldp.aggregator.storage import CollectionRecord, JobRecord, MechanismRecord
from rldp.shared.collection import DRIFT_POLICIES

# Raised by the service and the client alike (declared in rldp.shared.problems): importable here, documented
# with rldp.client (so not in __all__).
from rldp.shared.problems import CollectionPaused as CollectionPaused
from rldp.shared.problems import CollectionRetired as CollectionRetired
from rldp.shared.problems import TooFewReports as TooFewReports
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
from .config import (
    DEFAULTS,
    default_url,
    hash_token,
    load_config,
    resolve_url,
    sqlite_file,
    token_allowed,
    tokens_configured,
)
from .core import AggregatorService
from .designs import (
    COUPLING_COSTS,
    COUPLING_TARGETS,
    DESIGN_NOTIONS,
    DESIGN_REQUEST_FIELDS,
    DESIGN_SOLVERS,
    DESIGN_TASKS,
    field_kind,
)
from .errors import (
    AddressInUse,
    AuditFailed,
    BatchConflict,
    BodySyntaxError,
    BodyTooLarge,
    ClaimPolicyViolated,
    CollectionConflict,
    CollectionExists,
    ConfigError,
    DatabaseUnavailable,
    DocumentIdMismatch,
    InvalidDocument,
    InvalidParameter,
    MechanismRetired,
    MechanismWithdrawn,
    MissingField,
    NoReports,
    PublicDataMismatch,
    RotationRefused,
    ServiceError,
    StorageError,
    StoreFull,
    Unauthorized,
    UnknownCollection,
    UnknownJob,
    UnknownMechanism,
    UnsupportedMediaType,
    UploadCredentialRequired,
    WrongType,
)
from .estimates import ESTIMATE_INTERVALS, ESTIMATE_METHODS, ESTIMATE_PRIORS
from .events import ServiceEvents, install_store_telemetry
from .ingest import AsyncCommit, CheckedBatch, Receipt
from .jobs import JOB_LIST_DEFAULT, JOB_LIST_MAX, job_list_limit
from .labels import LABEL_MAX, check_label
from .mechanisms import MECHANISM_ID, MechanismCatalog
from .runtime import (
    ServerLock,
    StoreInUse,
    WriterProcess,
    async_committer,
    check_storage,
    clean_stale_dirs,
    hold_store,
    open_service_storage,
    start_writer,
)
from .upload_credentials import UploadCredentials

__all__ = [
    "COLLECTION_NAME",
    "DRIFT_POLICIES",
    "POLICY_PARAMETERS",
    "ClaimPolicyViolated",
    "CollectionConflict",
    "MechanismWithdrawn",
    "UploadCredentialRequired",
    "UploadCredentials",
    "CollectionExists",
    "CollectionRecord",
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
    "default_url",
    "resolve_url",
    "sqlite_file",
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
    "DESIGN_TASKS",
    "field_kind",
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
    "PublicDataMismatch",
    "Receipt",
    "CheckedBatch",
    "ReportOutOfRange",
    "ServiceError",
    "ServiceEvents",
    "install_store_telemetry",
    "StorageError",
    "StoreFull",
    "TooManyReports",
    "UnexpectedWindow",
    "Unauthorized",
    "UnknownJob",
    "UnknownMechanism",
    "UnsupportedMediaType",
    "WindowRequired",
    "WriterProcess",
    "AsyncCommit",
    "async_committer",
    "WrongType",
    "check_storage",
    "clean_stale_dirs",
    "hold_store",
    "ServerLock",
    "StoreInUse",
    "hash_token",
    "job_list_limit",
    "load_config",
    "open_service_storage",
    "start_writer",
    "token_allowed",
    "tokens_configured",
]
