"""Operation diagnostics: the per-session operation log, its metrics and progress text."""

from .log import RETENTION, LogWriter, log_path, state_root
from .metrics import Diagnostics, LogSource, Metrics, compute_metrics, read_diagnostics
from .operation import Call, CallUsage, Operation, OperationLogs, log_model_call, tool_signature
from .progress import progress_text

__all__ = [
    "RETENTION",
    "Call",
    "CallUsage",
    "Diagnostics",
    "LogSource",
    "LogWriter",
    "Metrics",
    "Operation",
    "OperationLogs",
    "compute_metrics",
    "log_model_call",
    "log_path",
    "progress_text",
    "read_diagnostics",
    "state_root",
    "tool_signature",
]
