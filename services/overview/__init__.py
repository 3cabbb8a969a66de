"""platform-public-api: the anonymous overview (overview.v1)."""
