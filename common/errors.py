"""The kernel's own errors: what can go wrong before any RPC or collection runs.

They are not RPC errors: `services.common.errors` maps them to status codes for the APIs, and the
worker's `main.py` maps them to exit codes.
"""

from __future__ import annotations


class SchemaTooOld(RuntimeError):
    """The database answered with a schema older than this release needs: refuse to start."""


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached (or refused us) right now."""


class PortUnavailable(RuntimeError):
    """A port this process is configured to serve on cannot be listened on (in use, not allowed)."""
