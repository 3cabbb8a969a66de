"""One shoot's Prometheus HTTP API: `GET /api/v1/query`, an instant query over its kube-state-metrics series,
and `GET /api/v1/status/config`, its configuration's external labels (whose Prometheus it is).

Served under `/prometheus/<project>--<name>/` (the `prometheus-url` of the shoot's monitoring
secret). Like the real stack, it sits behind an ingress with basic auth: a request without the
secret's current username and password gets the ingress's 401 (HTML, with `WWW-Authenticate`), and a
shoot whose control plane is not running (hibernated, not created yet) gets the ingress's 503.
Queries are parsed by `promql.py` and evaluated by `evaluation.py` over `kube_state_metrics.py`
(all beside this module); an answer is Prometheus's JSON envelope (`status`, `data.resultType`,
`data.result`), a query outside the subset a 400 `bad_data`, an evaluation error a 422 `execution`.
The `time` parameter (Unix seconds or RFC 3339; the simulator's now when absent) is honoured: the
series are those the shoot held at that time (`history.py`), and every sample is stamped with it,
as Prometheus stamps an instant query's samples with its evaluation time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import math
from collections.abc import Iterator, Mapping
from datetime import datetime

import orjson
import yaml

from sim.api.machinery.replies import Reply
from sim.api.prometheus.evaluation import Sample, evaluate, format_value
from sim.api.prometheus.kube_state_metrics import shoot_series
from sim.api.prometheus.monitoring import external_labels
from sim.api.prometheus.promql import PromQLError, parse
from sim.api.simulator import Simulator
from sim.world.shoots import ShootState

QUERY_PATH = "/api/v1/query"
CONFIG_PATH = "/api/v1/status/config"
_HTML = "text/html"


def _html(status: int, title: str, headers: dict[str, str] | None = None) -> Reply:
    # What an ingress controller answers by itself (nginx's page).
    body = (
        f"<html>\r\n<head><title>{status} {title}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )
    return Reply(status, _HTML, [body.encode()], headers or {})


def unauthorized_reply() -> Reply:
    return _html(401, "Authorization Required", {"WWW-Authenticate": 'Basic realm="Authentication Required"'})


def unavailable_reply() -> Reply:
    return _html(503, "Service Temporarily Unavailable")


def error_reply(status: int, error_type: str, message: str) -> Reply:
    body = orjson.dumps({"status": "error", "errorType": error_type, "error": message})
    return Reply(status, "application/json", [body])


def authorized(sim: Simulator, shoot: ShootState, authorization: str | None) -> bool:
    """Whether the request carries the shoot's current monitoring credentials as basic auth."""
    scheme, _, encoded = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        user, _, password = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return False
    expected = sim.monitoring.password(shoot)
    return hmac.compare_digest(user, "admin") & hmac.compare_digest(password, expected)


def handle_prometheus(  # noqa: PLR0911  # one answer per way a request can end, as the real stack has
    sim: Simulator, key: str, *, method: str, path: str, query: Mapping[str, str], authorization: str | None
) -> Reply:
    """Answer one request to the shoot's Prometheus (behind its ingress)."""
    shoot = sim.world.shoot(key)
    if shoot is None:
        return _html(404, "Not Found")
    if not authorized(sim, shoot, authorization):
        return unauthorized_reply()
    if not shoot.serving:
        return unavailable_reply()
    if path == CONFIG_PATH and method == "GET":
        return config_reply(shoot)
    if path != QUERY_PATH:
        return Reply(404, "text/plain; charset=utf-8", [b"404 page not found\n"])
    if method != "GET":
        return error_reply(405, "bad_data", "fleet-sim answers instant queries over GET only")
    expression = query.get("query")
    if not expression:
        return error_reply(
            400, "bad_data", 'invalid parameter "query": unknown position: parse error: no expression found in input'
        )
    try:
        tree = parse(expression)
    except PromQLError as e:
        return error_reply(400, "bad_data", f'invalid parameter "query": {e}')
    now = sim.clock.time()
    at = parse_time(query["time"]) if "time" in query else now
    if at is None:
        message = f'invalid parameter "time": cannot parse {query["time"]!r} to a valid timestamp'
        return error_reply(400, "bad_data", message)
    state = sim.monitoring.history.state_at(
        key,
        sim.world.contents(key),
        labels_exported=sim.monitoring.exports_labels(key),
        stack=sim.monitoring.stack(key),
        now=now,
        at=at,
    )
    try:
        result = evaluate(tree, lambda name: shoot_series(shoot, state, name=name) if state is not None else ())
    except PromQLError as e:
        return error_reply(422, "execution", str(e))
    if isinstance(result, float):
        data: dict[str, object] = {"resultType": "scalar", "result": [round(at, 3), format_value(result)]}
    else:
        data = {"resultType": "vector", "result": [_sample(sample, at) for sample in result]}
    reply = Reply(200, "application/json", [orjson.dumps({"status": "success", "data": data})])
    sim.monitoring.history.answered(key)  # changes queued for this answer land after it was computed
    return reply


def prometheus_config(shoot: ShootState) -> dict[str, object]:
    """The part of a Gardener shoot Prometheus's configuration that tells whose it is: its external labels."""
    return {
        "global": {
            "scrape_interval": "1m",
            "scrape_timeout": "10s",
            "evaluation_interval": "1m",
            "external_labels": external_labels(shoot),
        }
    }


def config_reply(shoot: ShootState) -> Reply:
    """`GET /api/v1/status/config`: the configuration as YAML, as Prometheus serves it."""
    text = yaml.safe_dump(prometheus_config(shoot), sort_keys=False)
    return Reply(200, "application/json", [orjson.dumps({"status": "success", "data": {"yaml": text}})])


def parse_time(text: str) -> float | None:
    """A `time` parameter as Prometheus reads it: Unix seconds (with a fraction) or RFC 3339; None if neither."""
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment.timestamp() if moment.tzinfo is not None else None
    return seconds if math.isfinite(seconds) else None


def _sample(sample: Sample, at: float) -> dict[str, object]:
    # Prometheus writes a sample's time as Unix seconds with (at most) millisecond precision.
    return {"metric": sample[0], "value": [round(at, 3), format_value(sample[1])]}


def flood_reply(count: int, now: float) -> Reply:
    """A hostile answer: a vector of `count` distinct series (a tenant can make its shoot export any number)."""

    def chunks() -> Iterator[bytes]:
        yield b'{"status":"success","data":{"resultType":"vector","result":['
        batch = bytearray()
        for n in range(count):
            item = {
                "metric": {"namespace": f"flood-{n}", "label_worker_gardener_cloud_pool": f"flood-{n}"},
                "value": [now, "1"],
            }
            batch += (b"," if n else b"") + orjson.dumps(item)
            if len(batch) >= 256 << 10:
                yield bytes(batch)
                batch.clear()
        yield bytes(batch) + b"]}}"

    return Reply(200, "application/json", chunks())
