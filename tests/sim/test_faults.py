"""Every injectable fault, seen by the official client the way a real API server's failure looks.

Clients are built like the collector's (urllib3 retries off, explicit timeouts), so a timeout or
a broken connection surfaces as urllib3's error, a Status as `ApiException`, a bad body as a JSON
error: the three failure families a collector must handle.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

import orjson
import pytest
import urllib3
from kubernetes import client as kubernetes_client
from kubernetes.client.exceptions import ApiException

from tests.fixtures.sim import SimUnderTest, status_body
from tests.fixtures.waiting import eventually

# The client's models declare almost every field Optional, and raw (`_preload_content=False`)
# answers are typed as models; these tests read both as a client does, so the client is untyped here.
client: Any = kubernetes_client

# (connect, read) seconds: a call that must answer has all the time a loaded machine needs; one that
# must time out (a hang, a latency) gives up after half a second.
TIMEOUT = (5, 30)
GIVE_UP = (5, 0.5)


def cause_chain(error: BaseException) -> list[type[BaseException]]:
    chain: list[type[BaseException]] = []
    current: BaseException | None = error
    while current is not None:
        chain.append(type(current))
        reason = current.reason if isinstance(current, urllib3.exceptions.MaxRetryError) else None
        current = current.__cause__ or reason
    return chain


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    return sim.serving_shoot().key


@pytest.fixture
def core(sim: SimUnderTest, shoot_key: str) -> Any:
    return client.CoreV1Api(sim.shoot_client(shoot_key))


def list_pods_raw(core: Any) -> dict[str, Any]:
    response = core.list_pod_for_all_namespaces(_preload_content=False, _request_timeout=TIMEOUT)
    data: dict[str, Any] = orjson.loads(response.data)
    return data


@pytest.mark.parametrize(
    ("kind", "status", "reason"),
    [
        ("401", 401, "Unauthorized"),
        ("forbidden", 403, "Forbidden"),
        ("404", 404, "NotFound"),
        ("server_error", 500, "InternalError"),
        ("410", 410, "Expired"),
    ],
)
def test_status_faults_are_api_exceptions_with_a_status_body(
    sim: SimUnderTest, shoot_key: str, core: Any, kind: str, status: int, reason: str
) -> None:
    sim.control.fault(shoot_key, kind)
    for call in (
        lambda: core.list_node(_request_timeout=TIMEOUT),
        lambda: list_pods_raw(core),
    ):
        with pytest.raises(ApiException) as caught:
            call()
        assert caught.value.status == status
        body = status_body(caught.value)
        assert (body["kind"], body["code"], body["reason"]) == ("Status", status, reason)
    sim.control.clear_faults(shoot_key)
    assert core.list_node(_request_timeout=TIMEOUT).items


def test_forbidden_names_the_user_verb_and_resource(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "403")
    with pytest.raises(ApiException) as caught:
        core.list_namespaced_pod("kube-system")
    assert status_body(caught.value)["message"] == (
        'pods is forbidden: User "fundament:admin" cannot list resource "pods" in API group "" '
        'in the namespace "kube-system"'
    )


def test_a_fault_on_one_resource_leaves_the_others_alone(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "500", resource="pods")
    assert core.list_node().items
    with pytest.raises(ApiException):
        core.list_pod_for_all_namespaces()
    other = sim.serving_shoot(lambda s: s.key != shoot_key)
    assert client.CoreV1Api(sim.shoot_client(other.key)).list_pod_for_all_namespaces().items


def test_a_fault_for_every_shoot_spares_the_garden(sim: SimUnderTest, core: Any) -> None:
    sim.control.fault("*", "500")
    with pytest.raises(ApiException):
        core.list_node()
    assert client.CustomObjectsApi(sim.garden_client()).list_cluster_custom_object(
        "core.gardener.cloud", "v1beta1", "shoots"
    )


def test_a_counted_fault_hits_that_many_requests(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "500", times=2)
    outcomes = []
    for _ in range(3):
        try:
            core.list_node()
            outcomes.append(200)
        except ApiException as error:
            outcomes.append(error.status)
    assert outcomes == [500, 500, 200]
    assert [r.fault for r in sim.control.requests(shoot_key)] == ["server_error", "server_error", None]


def test_garden_faults_can_target_the_kubeconfig_subresource(sim: SimUnderTest, shoot_key: str) -> None:
    sim.control.fault("garden", "500", resource="adminkubeconfig")
    api = sim.garden_client()
    assert client.CustomObjectsApi(api).list_cluster_custom_object("core.gardener.cloud", "v1beta1", "shoots")["items"]
    shoot = sim.control.shoot(shoot_key)
    method, url, headers, body, post = api.param_serialize(
        "POST",
        f"/apis/core.gardener.cloud/v1beta1/namespaces/{shoot.namespace}/shoots/{shoot.name}/adminkubeconfig",
        header_params={"Content-Type": "application/json"},
        body={"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest", "spec": {}},
        auth_settings=["BearerToken"],
    )
    response = api.call_api(method, url, headers, body, post)
    response.read()
    assert response.status == 500


def test_latency_longer_than_the_read_timeout_times_the_client_out(
    sim: SimUnderTest, shoot_key: str, core: Any
) -> None:
    sim.control.fault(shoot_key, "latency", seconds=2)
    with pytest.raises(urllib3.exceptions.HTTPError) as caught:
        core.list_node(_request_timeout=GIVE_UP)
    assert urllib3.exceptions.ReadTimeoutError in cause_chain(caught.value)
    assert core.list_node(_request_timeout=(5, 10)).items  # patient enough: it answers
    assert [r.fault for r in sim.control.requests(shoot_key)] == ["latency", "latency"]


def test_a_hang_holds_the_request_until_cleared(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "hang", resource="nodes")
    with pytest.raises(urllib3.exceptions.HTTPError) as caught:
        core.list_node(_request_timeout=GIVE_UP)
    assert urllib3.exceptions.ReadTimeoutError in cause_chain(caught.value)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(lambda: core.list_node(_request_timeout=(5, 30)))
        # Wait until the server holds the request (it is logged on arrival), then release it.
        eventually(lambda: len(sim.control.requests(shoot_key)) == 2 or waiting.done(), "the request held")
        assert not waiting.done()
        sim.control.clear_faults(shoot_key)
        assert waiting.result(timeout=30).items


def test_a_bounded_hang_answers_after_its_bound(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "hang", seconds=0.2)
    assert core.list_node(_request_timeout=(5, 30)).items
    assert sim.control.requests(shoot_key)[-1].status == 200


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
def test_a_truncated_body_breaks_the_connection(sim: SimUnderTest, shoot_key: str, core: Any, typed: bool) -> None:
    sim.control.fault(shoot_key, "truncated", resource="pods")
    call: Callable[[], object] = (
        (lambda: core.list_pod_for_all_namespaces(_request_timeout=TIMEOUT)) if typed else (lambda: list_pods_raw(core))
    )
    with pytest.raises(urllib3.exceptions.ProtocolError) as caught:
        call()
    assert "IncompleteRead" in str(caught.value)


def test_a_malformed_body_is_a_json_error(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "malformed", resource="pods")
    with pytest.raises(orjson.JSONDecodeError):
        list_pods_raw(core)
    with pytest.raises(ValueError, match="Expecting"):  # the typed path's json.loads
        core.list_pod_for_all_namespaces(_request_timeout=TIMEOUT)


def test_a_reset_connection_is_a_protocol_error(sim: SimUnderTest, shoot_key: str, core: Any) -> None:
    sim.control.fault(shoot_key, "reset")
    with pytest.raises(urllib3.exceptions.HTTPError) as caught:
        core.list_node(_request_timeout=TIMEOUT)
    assert urllib3.exceptions.ProtocolError in cause_chain(caught.value)
    sim.control.clear_faults()
    assert core.list_node(_request_timeout=TIMEOUT).items


def test_faults_on_the_garden_list(sim: SimUnderTest) -> None:
    sim.control.fault("garden", "reset", resource="shoots")
    custom = client.CustomObjectsApi(sim.garden_client())
    with pytest.raises(urllib3.exceptions.HTTPError):
        custom.list_cluster_custom_object("core.gardener.cloud", "v1beta1", "shoots", _request_timeout=TIMEOUT)


@pytest.mark.parametrize(
    ("kind", "kwargs", "message"),
    [
        ("teapot", {}, "unknown fault"),
        ("latency", {}, "needs seconds"),
        ("500", {"times": 0}, "times must be positive"),
        ("500", {"seconds": -1}, "must not be negative"),
    ],
)
def test_bad_faults_are_refused(
    sim: SimUnderTest, shoot_key: str, kind: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sim.control.fault(shoot_key, kind, **kwargs)


def test_a_fault_on_an_unknown_shoot_is_refused(sim: SimUnderTest) -> None:
    with pytest.raises(LookupError, match="no shoot"):
        sim.control.fault("nobody--nothing", "500")
