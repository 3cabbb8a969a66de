"""The errors an RPC may end with, and the one place they become status codes.

    FleetError                 anything an RPC raises on purpose
     ├── NotFound              NOT_FOUND: an id that names nothing (visible to this caller)
     ├── InvalidArgument       INVALID_ARGUMENT: a bad request field or page token
     ├── Unauthenticated       UNAUTHENTICATED: a missing or bad credential
     └── Unavailable           UNAVAILABLE: the database is unreachable or too slow

`map_errors()` is used by the request stack shared by Connect and gRPC
(`services/common/serving/request_stack.py`), so both protocols answer the same code for the same
failure. Database failures (`psycopg.OperationalError`, which covers `QueryCanceled`;
`psycopg_pool.PoolTimeout`; the kernel's `DatabaseUnavailable` and `SchemaTooOld`) and timeouts
become UNAVAILABLE; anything unexpected becomes a bare INTERNAL. Messages never carry SQL or stack
traces: the cause is logged once, here.
"""

from __future__ import annotations

import logging
from types import TracebackType

import psycopg
import psycopg_pool
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from common.errors import DatabaseUnavailable, SchemaTooOld

logger = logging.getLogger(__name__)


class FleetError(Exception):
    """An error an RPC raises on purpose; its message is safe to show the caller."""

    code: Code = Code.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(FleetError):
    code = Code.NOT_FOUND


class InvalidArgument(FleetError):
    code = Code.INVALID_ARGUMENT


class Unauthenticated(FleetError):
    code = Code.UNAUTHENTICATED


class Unavailable(FleetError):
    code = Code.UNAVAILABLE


class map_errors:
    """Turn whatever the block raises into a `ConnectError` with the right code and a safe message.

    A class rather than a generator-based context manager: it runs around every call of both APIs, and
    this form costs a fraction of contextlib's."""

    __slots__ = ("_procedure",)

    def __init__(self, procedure: str) -> None:
        self._procedure = procedure

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if e is None or isinstance(e, ConnectError) or not isinstance(e, Exception):
            return  # nothing raised, already mapped, or not an error of the call (cancellation, exit)
        procedure = self._procedure
        if isinstance(e, FleetError):
            raise ConnectError(e.code, e.message) from e
        if isinstance(e, _UNAVAILABLE):
            logger.warning("database unavailable", extra={"procedure": procedure, "cause": type(e).__name__})
            raise ConnectError(Code.UNAVAILABLE, "the database is unavailable, try again later") from e
        logger.error("internal error", extra={"procedure": procedure}, exc_info=e)
        raise ConnectError(Code.INTERNAL, "internal error") from e


_UNAVAILABLE = (psycopg_pool.PoolTimeout, psycopg.OperationalError, DatabaseUnavailable, SchemaTooOld, TimeoutError)
