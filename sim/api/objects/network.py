"""Networking objects of a shoot: Service, Ingress (`networking.k8s.io/v1`), cert-manager Certificate."""

from __future__ import annotations

from datetime import timedelta

from sim.api.objects.meta import Json, condition, created_at, object_meta, owner_reference, with_managed_fields
from sim.world import derive
from sim.world.clock import rfc3339
from sim.world.records import CertificateRecord, IngressRecord, ServiceRecord
from sim.world.shoots import ShootState


def render_service(service: ServiceRecord, shoot: ShootState) -> Json:
    is_api = service.namespace == "default" and service.name == "kubernetes"
    port: Json = (
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}
        if is_api
        else {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}
    )
    spec: Json = {
        "type": service.type,
        "clusterIP": service.cluster_ip,
        "clusterIPs": [service.cluster_ip],
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [port],
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
    }
    if service.app and not is_api:
        spec["selector"] = {"app": service.app}
    ingress: list[Json] = []
    if service.type == "LoadBalancer":
        port["nodePort"] = 30000 + derive.stable_int("node-port", service.namespace, service.name) % 2767
        spec["externalTrafficPolicy"] = "Cluster"
        spec["allocateLoadBalancerNodePorts"] = True
        if service.lb_hostname is not None:
            ingress.append({"hostname": service.lb_hostname})
        if service.lb_ip is not None:
            ingress.append({"ip": service.lb_ip, "ipMode": "VIP"})
    obj: Json = {
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=service.name,
            namespace=service.namespace,
            uid=derive.stable_uuid_text(shoot.uid, "service", service.namespace, service.name),
            rv=service.rv,
            created=created_at(shoot.created, "svc", service.namespace, service.name),
            labels={"app": service.app} if service.app else {"component": "apiserver", "provider": "kubernetes"},
        ),
        "spec": spec,
        "status": {"loadBalancer": {"ingress": ingress} if ingress else {}},
    }
    return with_managed_fields(obj, "kubectl-client-side-apply", "cloud-controller-manager")


def ingress_uid(shoot: ShootState, namespace: str, name: str) -> str:
    return derive.stable_uuid_text(shoot.uid, "ingress", namespace, name)


def render_ingress(ingress: IngressRecord, shoot: ShootState) -> Json:
    spec: Json = {
        "ingressClassName": "nginx",
        "rules": [
            {
                "host": ingress.host,
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": ingress.service, "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    }
    annotations: dict[str, str] = {}
    if ingress.tls_secret is not None:
        spec["tls"] = [{"hosts": [ingress.host], "secretName": ingress.tls_secret}]
        annotations["cert-manager.io/cluster-issuer"] = "letsencrypt"
    obj: Json = {
        "kind": "Ingress",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": object_meta(
            name=ingress.name,
            namespace=ingress.namespace,
            uid=ingress_uid(shoot, ingress.namespace, ingress.name),
            rv=ingress.rv,
            created=created_at(shoot.created, "ing", ingress.namespace, ingress.name),
            labels={"app": ingress.service},
            annotations=annotations,
        ),
        "spec": spec,
        "status": {"loadBalancer": {"ingress": [{"ip": ingress.address}]} if ingress.address else {}},
    }
    return with_managed_fields(obj, "kubectl-client-side-apply", "nginx-ingress-controller")


def render_certificate(certificate: CertificateRecord, shoot: ShootState) -> Json:
    created = created_at(shoot.created, "cert", certificate.namespace, certificate.name)
    moment = rfc3339(created)
    status: Json
    if certificate.ready:
        status = {
            "conditions": [
                {
                    **condition("Ready", "True", "Ready", "Certificate is up to date and has not expired", moment),
                    "observedGeneration": 1,
                }
            ],
            "notBefore": moment,
            "notAfter": rfc3339(created + timedelta(days=90)),
            "renewalTime": rfc3339(created + timedelta(days=60)),
            "revision": 1,
        }
    else:
        status = {
            "conditions": [
                {
                    **condition(
                        "Ready", "False", "DoesNotExist", "Issuing certificate as Secret does not exist", moment
                    ),
                    "observedGeneration": 1,
                },
                {
                    **condition("Issuing", "True", "DoesNotExist", "Issuing certificate", moment),
                    "observedGeneration": 1,
                },
            ]
        }
    obj: Json = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": object_meta(
            name=certificate.name,
            namespace=certificate.namespace,
            uid=derive.stable_uuid_text(shoot.uid, "certificate", certificate.namespace, certificate.name),
            rv=certificate.rv,
            created=created,
            owner=owner_reference(
                "networking.k8s.io/v1",
                "Ingress",
                certificate.name.removesuffix("-tls"),
                ingress_uid(shoot, certificate.namespace, certificate.name.removesuffix("-tls")),
            ),
        ),
        "spec": {
            "secretName": certificate.secret_name,
            "dnsNames": [certificate.dns_name],
            "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "letsencrypt"},
            "usages": ["digital signature", "key encipherment"],
        },
        "status": status,
    }
    return with_managed_fields(obj, "cert-manager-ingress-shim", "cert-manager-certificates-issuing")
