"""The executor: programs run in limited worker processes, their tool calls come back to the hub."""

from .result import EXIT_CODES, ExecutionResult, ExecutionStatus
from .runner import DEFAULT_GRACE, DEFAULT_TIMEOUT, Executor

__all__ = ["DEFAULT_GRACE", "DEFAULT_TIMEOUT", "EXIT_CODES", "ExecutionResult", "ExecutionStatus", "Executor"]
