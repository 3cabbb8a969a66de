"""The kinds of drift reconcile finds, by the id stored in `tenant.drift_findings.kind`.

Defined once: reconcile's rule registry (`collector`) and the staff API's enum mapping
(`services.fleet.convert`) both take their ids from here, and a test ties the tuple to the database's
CHECK constraint and to the `fleet.v1.DriftKind` enum.
"""

from __future__ import annotations

ORPHAN_SHOOT = "orphan_shoot"
SHOOT_OF_DELETED_CLUSTER = "shoot_of_deleted_cluster"
MISSING_SHOOT = "missing_shoot"
VERSION_MISMATCH = "version_mismatch"
ORGANIZATION_MISMATCH = "organization_mismatch"
UNLABELED_SHOOT = "unlabeled_shoot"

DRIFT_KINDS: tuple[str, ...] = (
    ORPHAN_SHOOT,
    SHOOT_OF_DELETED_CLUSTER,
    MISSING_SHOOT,
    VERSION_MISMATCH,
    ORGANIZATION_MISMATCH,
    UNLABELED_SHOOT,
)
