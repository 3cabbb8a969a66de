"""collector.kube at the edges: kubeconfigs, client certificates, errors, paging, the Gardener client.

Client certificates (what Gardener's adminkubeconfig carries) are tested against a small TLS server
of this test that demands one; paging and its failures against fleet-sim's garden.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from collector.kube.client import KubeClient, garden_client, shoot_client
from collector.kube.credential import Credential, credential_from_kubeconfig
from collector.kube.errors import BadResponse, ConnectionFailed, Gone, NotFound, ServerError
from collector.kube.garden import RealGardener, credential_from_answer
from common.labels import CLUSTER_ID_LABEL
from common.text import MESSAGE_LIMIT
from sim.api.credentials.tls import generate_tls
from tests.fixtures.sim import SimUnderTest

EXPIRES = datetime(2026, 12, 1, tzinfo=UTC)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(user: dict[str, Any], *, cluster: dict[str, Any] | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "shoot",
            "contexts": [{"name": "shoot", "context": {"cluster": "c", "user": "u"}}],
            "clusters": [
                {
                    "name": "c",
                    "cluster": cluster
                    or {"server": "https://127.0.0.1:6443/", "certificate-authority-data": b64(b"CA")},
                }
            ],
            "users": [{"name": "u", "user": user}],
        }
    )


def test_a_token_kubeconfig_becomes_a_credential_that_never_shows_its_secret() -> None:
    credential = credential_from_kubeconfig(kubeconfig({"token": "s3cret"}), expires=EXPIRES)
    assert (credential.server, credential.ca_data, credential.token) == ("https://127.0.0.1:6443", "CA", "s3cret")
    assert credential.expires == EXPIRES
    assert "s3cret" not in repr(credential)


@pytest.mark.parametrize("insecure", [True, False])
def test_insecure_skip_tls_verify_is_read_only_from_a_real_boolean(insecure: bool) -> None:
    text = kubeconfig({"token": "t"}, cluster={"server": "https://x", "insecure-skip-tls-verify": insecure})
    assert credential_from_kubeconfig(text, expires=None).insecure is insecure


def test_a_client_certificate_kubeconfig_becomes_a_credential() -> None:
    credential = credential_from_kubeconfig(
        kubeconfig({"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")}), expires=None
    )
    assert (credential.client_cert, credential.client_key, credential.token) == (b"CERT", b"KEY", None)
    assert "KEY" not in repr(credential)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not: [yaml", "not YAML"),
        ("kind: Config\n", "no usable context"),
        (kubeconfig({}), "neither a token nor a client certificate"),
        (kubeconfig({"exec": {"command": "gke-gcloud-auth-plugin"}}), "only inline data"),
        (kubeconfig({"client-certificate": "/etc/cert.pem", "client-key": "/etc/key.pem"}), "only inline data"),
        (kubeconfig({"client-certificate-data": b64(b"CERT")}), "without its key"),
        (
            kubeconfig({"token": "t"}, cluster={"server": "https://x", "certificate-authority-data": "%%%"}),
            "not base64",
        ),
        (kubeconfig({"token": "t"}, cluster={"server": "http://127.0.0.1:6443"}), "is not https"),
        (kubeconfig({"token": "t"}, cluster={"server": "127.0.0.1:6443"}), "is not https"),
        (
            kubeconfig({"token": "t"}, cluster={"server": "https://x", "insecure-skip-tls-verify": "false"}),
            "insecure-skip-tls-verify is str 'false', not a boolean",
        ),
        (
            kubeconfig({"token": "t"}, cluster={"server": "https://x", "insecure-skip-tls-verify": 1}),
            "not a boolean",
        ),
        (kubeconfig({"token": 42}, cluster={"server": "https://x"}), "token or tls-server-name is not a string"),
    ],
    ids=[
        "not-yaml",
        "no-context",
        "no-credential",
        "exec-plugin",
        "files",
        "cert-without-key",
        "bad-base64",
        "http-server",
        "no-scheme",
        "string-boolean",
        "number-boolean",
        "number-token",
    ],
)
def test_a_kubeconfig_that_cannot_be_used_says_why(text: str, says: str) -> None:
    with pytest.raises(BadResponse, match=says):
        credential_from_kubeconfig(text, expires=None)


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({}, "no status.kubeconfig"),
        ({"status": {"kubeconfig": "%%%", "expirationTimestamp": "2026-12-01T00:00:00Z"}}, "not base64"),
        ({"status": {"kubeconfig": b64(kubeconfig({"token": "t"}).encode())}}, "expirationTimestamp"),
        (
            {"status": {"kubeconfig": b64(kubeconfig({"token": "t"}).encode()), "expirationTimestamp": "tomorrow"}},
            "expirationTimestamp",
        ),
    ],
    ids=["no-status", "bad-base64", "no-expiry", "bad-expiry"],
)
def test_a_kubeconfig_request_answer_that_cannot_be_used_says_why(answer: dict[str, Any], says: str) -> None:
    with pytest.raises(BadResponse, match=says):
        credential_from_answer(answer, what="adminkubeconfig of garden-p/s")


def test_an_answer_gives_its_expiry() -> None:
    answer = {
        "status": {
            "kubeconfig": b64(kubeconfig({"token": "t"}).encode()),
            "expirationTimestamp": "2026-12-01T00:00:00Z",
        }
    }
    assert credential_from_answer(answer, what="x").expires == EXPIRES


# --- a TLS server that demands a client certificate ------------------------------------------------


def client_certificate() -> tuple[bytes, bytes, bytes]:
    """(CA PEM, client certificate PEM, client key PEM), as Gardener's shoot CA would sign them."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "shoot CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "system:admin")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.PEM), key_pem


async def version(_: web.Request) -> web.Response:
    return web.json_response({"major": "1", "minor": "33"})


async def missing(_: web.Request) -> web.Response:
    status = {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404, "message": "x" * 5000}
    return web.json_response(status, status=404)


async def not_json(_: web.Request) -> web.Response:
    return web.Response(text="<html>proxy error</html>", content_type="text/html")


@pytest.fixture
async def mtls_server() -> AsyncIterator[tuple[str, str, tuple[bytes, bytes, bytes]]]:
    server_tls = generate_tls(("127.0.0.1",))
    client_ca, cert, key = client_certificate()
    context = server_tls.server_context()
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_ca.decode())
    app = web.Application()
    app.add_routes([web.get("/version", version), web.get("/missing", missing), web.get("/html", not_json)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # aiohttp exposes no port
    try:
        yield f"https://127.0.0.1:{port}", server_tls.ca_pem.decode(), (client_ca, cert, key)
    finally:
        await runner.cleanup()


async def test_a_client_certificate_held_in_memory_opens_the_door(
    mtls_server: tuple[str, str, tuple[bytes, bytes, bytes]],
) -> None:
    url, server_ca, (_, cert, key) = mtls_server
    credential = Credential(server=url, ca_data=server_ca, client_cert=cert, client_key=key)
    async with shoot_client(credential, timeout_seconds=5) as client:
        assert await client.get("/version") == {"major": "1", "minor": "33"}
        with pytest.raises(NotFound) as caught:
            await client.get("/missing")
        message = str(caught.value)
        assert message.startswith("GET /missing: 404 Not Found: xxx")
        assert len(message) < MESSAGE_LIMIT + 40, "a foreign message is truncated"
        with pytest.raises(BadResponse, match="expected JSON, got text/html"):
            await client.get("/html")


async def test_without_the_client_certificate_the_door_stays_shut(
    mtls_server: tuple[str, str, tuple[bytes, bytes, bytes]],
) -> None:
    url, server_ca, _ = mtls_server
    async with shoot_client(Credential(server=url, ca_data=server_ca, token="t"), timeout_seconds=5) as client:
        with pytest.raises(ConnectionFailed):
            await client.get("/version")


async def test_a_server_the_ca_does_not_vouch_for_is_refused(
    mtls_server: tuple[str, str, tuple[bytes, bytes, bytes]],
) -> None:
    url, _, (client_ca, cert, key) = mtls_server
    stranger = Credential(server=url, ca_data=client_ca.decode(), client_cert=cert, client_key=key)
    async with shoot_client(stranger, timeout_seconds=5) as client:
        with pytest.raises(ConnectionFailed, match="TLS"):
            await client.get("/version")


async def test_a_closed_port_is_a_connection_failure() -> None:
    async with shoot_client(Credential(server="https://127.0.0.1:9", token="t"), timeout_seconds=2) as client:
        with pytest.raises(ConnectionFailed, match="cannot connect"):
            await client.get("/version")


# --- the garden's shoots, paged ---------------------------------------------------------------------


@pytest.fixture
async def gardener(sim: SimUnderTest, tmp_path: Path) -> AsyncIterator[RealGardener]:
    path = tmp_path / "garden.yaml"
    path.write_text(yaml.safe_dump(sim.garden_kubeconfig))
    garden = RealGardener(await garden_client(path, timeout_seconds=10))
    try:
        yield garden
    finally:
        await garden.close()


async def test_a_garden_kubeconfig_with_files_goes_through_the_official_loader(
    sim: SimUnderTest, tmp_path: Path
) -> None:
    inline = sim.garden_kubeconfig
    ca = tmp_path / "ca.crt"
    ca.write_bytes(base64.b64decode(inline["clusters"][0]["cluster"]["certificate-authority-data"]))
    with_files = {
        **inline,
        "clusters": [
            {**c, "cluster": {"server": c["cluster"]["server"], "certificate-authority": str(ca)}}
            for c in inline["clusters"]
        ],
    }
    path = tmp_path / "garden.yaml"
    path.write_text(yaml.safe_dump(with_files))
    with pytest.raises(BadResponse, match="files"):
        credential_from_kubeconfig(path.read_text(), expires=None)
    garden = RealGardener(await garden_client(path, timeout_seconds=10))
    try:
        assert await garden.list_shoots(label_selector=CLUSTER_ID_LABEL)
    finally:
        await garden.close()


async def test_a_missing_garden_kubeconfig_is_a_connection_failure(tmp_path: Path) -> None:
    with pytest.raises(ConnectionFailed, match="cannot read the garden kubeconfig"):
        await garden_client(tmp_path / "nowhere.yaml", timeout_seconds=1)


async def test_shoots_are_listed_across_pages(gardener: RealGardener, sim: SimUnderTest) -> None:
    whole = await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=500)
    paged = await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=3)
    assert [s["metadata"]["uid"] for s in paged] == [s["metadata"]["uid"] for s in whole]
    assert len(whole) == len(sim.shoots(lambda s: s.cluster_labelled)) > 3
    limits = [r.query.get("limit") for r in sim.control.requests("garden") if r.resource == "shoots"]
    assert limits.count("3") == -(-len(whole) // 3)


async def test_an_expired_continue_token_raises_rather_than_returning_part(
    gardener: RealGardener, sim: SimUnderTest
) -> None:
    client: KubeClient = gardener._client
    original = client._json
    pages = 0

    async def compact_after_first_page(*args: Any, **kwargs: Any) -> dict[str, Any]:
        nonlocal pages
        answer = await original(*args, **kwargs)
        pages += 1
        if pages == 1:
            sim.control.compact("garden")
        return answer

    client._json = compact_after_first_page  # type: ignore[method-assign]
    with pytest.raises(Gone, match="410"):
        await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=3)


async def test_a_failing_garden_raises(gardener: RealGardener, sim: SimUnderTest) -> None:
    sim.control.fault("garden", "server_error", resource="shoots")
    with pytest.raises(ServerError, match="500"):
        await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL)
    sim.control.clear_faults()
    sim.control.fault("garden", "malformed", resource="shoots")
    with pytest.raises(BadResponse):
        await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL)


async def test_a_minted_credential_reads_its_shoot(gardener: RealGardener, sim: SimUnderTest) -> None:
    from collector.kube.garden import ShootRef  # noqa: PLC0415

    shoot = sim.serving_shoot()
    credential = await gardener.mint_credential(
        ShootRef(shoot.namespace, shoot.name), kind="viewer", lifetime_seconds=600
    )
    assert credential.expires is not None and credential.expires > datetime.now(UTC)
    async with shoot_client(credential, timeout_seconds=5) as client:
        namespaces = await client.get("/api/v1/namespaces")
    assert namespaces["items"]
    minted = [r for r in sim.control.requests("garden") if r.method == "POST"]
    assert [r.api_path.rsplit("/", 1)[1] for r in minted] == ["viewerkubeconfig"]
