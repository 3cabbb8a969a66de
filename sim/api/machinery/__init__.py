"""The Kubernetes API rules both simulated API servers share, as k8s.io/apimachinery is to the real ones.

`paths.py` and `request.py` (a parsed request), `kinds.py` (the resources each server serves),
`discovery.py`, `listing.py` (list semantics), `selectors.py`, `replies.py` (JSON bodies, Status
errors and streamed lists), `listcache.py` (encoded list items kept between requests) and
`status.py` (`Status` errors).
"""
