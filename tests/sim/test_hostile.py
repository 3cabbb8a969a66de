"""fleet-sim's hostile answers as a plain HTTP client sees them (sim/api/faults/hostile.py).

The collector's side of each is in tests/collector/test_bounds.py; here only what the simulator sends.
"""

from __future__ import annotations

import base64
import ssl
import zlib
from collections.abc import Iterator

import httpx
import orjson
import pytest
import yaml

from tests.fixtures.sim import SimUnderTest


@pytest.fixture
def shoot_http(sim: SimUnderTest) -> Iterator[tuple[str, httpx.Client]]:
    key = sim.serving_shoot().key
    kubeconfig = sim.control.shoot_kubeconfig(key)
    cluster, user = kubeconfig["clusters"][0]["cluster"], kubeconfig["users"][0]["user"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    with httpx.Client(
        base_url=cluster["server"],
        verify=context,
        headers={"Authorization": f"Bearer {user['token']}", "Accept-Encoding": "identity"},
        timeout=30,
        follow_redirects=False,
    ) as http:
        yield key, http


def test_an_endless_item_ends_when_its_bound_passes(shoot_http: tuple[str, httpx.Client], sim: SimUnderTest) -> None:
    key, http = shoot_http
    sim.control.fault(key, "endless_item", resource="nodes", seconds=0.3)
    received = bytearray()
    with pytest.raises(httpx.RemoteProtocolError), http.stream("GET", "/api/v1/nodes") as response:
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            received += chunk
    assert received.startswith(b'{"kind":') and b'"name":"endless"' in received
    assert received.rstrip(b"a").endswith(b'{"hostile":"'), "one string that never closed"


def test_a_gzip_bomb_is_sent_compressed_whatever_was_asked(
    shoot_http: tuple[str, httpx.Client], sim: SimUnderTest
) -> None:
    key, http = shoot_http
    sim.control.fault(key, "gzip_bomb", resource="pods", seconds=0.3)
    with http.stream("GET", "/api/v1/pods") as response:
        assert response.headers["Content-Encoding"] == "gzip"
        first = next(response.iter_raw())
    inflated = zlib.decompressobj(31).decompress(first, 1 << 20)
    assert inflated.startswith(b'{"kind":"List","items":[') and inflated.rstrip(b" ") != inflated


def test_a_flood_sends_count_copies_of_the_first_item_under_new_names(
    shoot_http: tuple[str, httpx.Client], sim: SimUnderTest
) -> None:
    key, http = shoot_http
    sim.control.fault(key, "flood", resource="nodes", count=1234)
    items = http.get("/api/v1/nodes").json()["items"]
    assert len(items) == 1234 == len({item["metadata"]["name"] for item in items})


def test_a_redirect_points_at_another_origin(shoot_http: tuple[str, httpx.Client], sim: SimUnderTest) -> None:
    key, http = shoot_http
    sim.control.fault(key, "redirect", resource="nodes")
    response = http.get("/api/v1/nodes")
    assert response.status_code == 307
    location = httpx.URL(response.headers["Location"])
    assert location.host != httpx.URL(str(http.base_url)).host and location.path.endswith("/api/v1/nodes")


@pytest.mark.parametrize(
    ("fault", "check"),
    [("http_server", "server"), ("string_boolean", "insecure-skip-tls-verify")],
)
def test_a_hostile_kubeconfig_is_minted_for_that_shoot_only(sim: SimUnderTest, fault: str, check: str) -> None:
    shoots = sim.shoots(lambda s: s.serving)[:2]
    sim.control.fault(shoots[0].key, fault, resource="adminkubeconfig")
    garden = sim.garden_kubeconfig
    cluster = garden["clusters"][0]["cluster"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    token = garden["users"][0]["user"]["token"]
    minted = []
    with httpx.Client(base_url=cluster["server"], verify=context, headers={"Authorization": f"Bearer {token}"}) as g:
        for shoot in shoots:
            path = f"/apis/core.gardener.cloud/v1beta1/namespaces/{shoot.namespace}/shoots/{shoot.name}/adminkubeconfig"
            answer = g.post(path, content=orjson.dumps({"kind": "AdminKubeconfigRequest", "spec": {}})).json()
            config = yaml.safe_load(base64.b64decode(answer["status"]["kubeconfig"]))
            minted.append(config["clusters"][0]["cluster"])
    hostile, normal = minted
    if check == "server":
        assert hostile["server"].startswith("http://") and normal["server"].startswith("https://")
    else:
        assert hostile[check] == "false" and check not in normal
