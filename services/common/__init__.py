"""What both APIs (and the collector) share: settings, database access, errors, serving, logging."""
