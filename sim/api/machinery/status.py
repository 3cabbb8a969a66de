"""Kubernetes `Status` errors: what the API server answers when a request fails.

Every failure the simulator produces (on purpose or not) is an `ApiError`, rendered as a `v1 Status`
body with the same code, reason and message shape a real kube-apiserver (or gardener-apiserver)
uses, so the official client raises the same `ApiException` and kubectl prints the same line.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


class ApiError(Exception):
    """A request failed; `status_body()` is the `Status` object to send."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: Json | None = None,
        list_continue: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.list_continue = list_continue

    def status_body(self) -> Json:
        metadata: Json = {"continue": self.list_continue} if self.list_continue else {}
        body: Json = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, resource: str) -> Json:
    details: Json = {"name": name, "kind": resource} if name else {"kind": resource}
    if group:
        details["group"] = group
    return details


def resource_label(group: str, resource: str) -> str:
    """`pods` for the core group, `shoots.core.gardener.cloud` otherwise (as messages write it)."""
    return f"{resource}.{group}" if group else resource


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(user: str, verb: str, group: str, resource: str, namespace: str | None) -> ApiError:
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return ApiError(
        403,
        "Forbidden",
        f'{resource_label(group, resource)} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
        f'in API group "{group}" {scope}',
        details=_details("", group, resource),
    )


def not_found(group: str, resource: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{resource_label(group, resource)} "{name}" not found',
        details=_details(name, group, resource),
    )


def no_such_resource() -> ApiError:
    """The path names no served resource (an unknown kind, or a CRD the cluster does not have)."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", details={}
    )


def not_acceptable(accept: str) -> ApiError:
    return ApiError(
        406,
        "NotAcceptable",
        f"the server was unable to respond with a content type that the client supports (accepted: {accept})",
    )


def expired(message: str, *, list_continue: str | None = None) -> ApiError:
    return ApiError(410, "Expired", message, list_continue=list_continue)


def invalid(kind: str, group: str, name: str, *, field: str, value: object, detail: str) -> ApiError:
    message = f'{kind}.{group} "{name}" is invalid: {field}: Invalid value: {value}: {detail}'
    return ApiError(
        422,
        "Invalid",
        message,
        details={
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [{"reason": "FieldValueInvalid", "message": f"Invalid value: {value}: {detail}", "field": field}],
        },
    )


def internal_error(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        details={"causes": [{"message": message}]},
    )


def service_unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def too_large_resource_version(requested: int, current: int) -> ApiError:
    return ApiError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        details={
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )
