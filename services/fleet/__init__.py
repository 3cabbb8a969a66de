"""platform-admin-api: the staff fleet view (fleet.v1)."""
