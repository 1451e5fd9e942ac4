"""HTTPS: the operator's certificate and key, or one issued by the site's own CA; and the
optional client certificates of devices, from the site CA."""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

from edge.certificates import ca
from edge.kernel.config import Config
from edge.kernel.errors import ValidationError


def server_context(config: Config) -> ssl.SSLContext | None:
    """The TLS context to serve with, or None for plain HTTP."""
    if not config.tls:
        return None
    if config.tls_cert is not None and config.tls_key is not None:
        cert, key = config.tls_cert, config.tls_key
    else:
        files = ca.server_certificate(config.data_dir, list(config.certificate_names))
        cert, key = files.cert, files.key
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ValidationError("tls_cert", f"cannot load {cert} with {key}: {exc}") from None
    ask_for_device_certificates(context, config)
    return context


def ask_for_device_certificates(context: ssl.SSLContext, config: Config) -> None:
    """The HTTPS listener asks for an optional client certificate from the site CA: a
    device may present its own instead of its API key (EST re-enrollment needs it,
    docs/provisioning.md). Whether it still counts (superseded, revoked) is asked per
    request of the registry; one from another CA fails the handshake."""
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(ca.load_or_create_ca_file(config.data_dir))


def mismatches(config: Config) -> list[str]:
    """What clients and devices are told that this server's TLS does not bear out: a
    certificate that does not name the host they are given, or a public URL whose scheme
    is not the one served. Logged as warnings at start."""
    found = []
    public = urlsplit(config.base_url)
    if config.public_url and (public.scheme == "https") != config.tls:
        served = "HTTPS" if config.tls else "plain HTTP"
        found.append(
            f"public_url {config.public_url} is {public.scheme}:// but edge serves {served}"
            f" on port {config.port}: set tls_local_ca or tls_cert, or give an"
            f" {'https' if config.tls else 'http'}:// public_url (a TLS proxy in front is fine)"
        )
    if config.tls and public.hostname and not _covered(_https_names(config), public.hostname):
        found.append(
            f"the HTTPS certificate does not name {public.hostname}, the host of public_url:"
            " clients checking it will refuse it (tls_hostnames, or tls_cert's names)"
        )
    if _mqtt_tls(config) and not _covered(set(config.certificate_names), config.broker_host):
        found.append(
            f"the MQTT/TLS certificate (tls_hostnames: {', '.join(config.certificate_names)})"
            f" does not name {config.broker_host}, the broker devices are given: add it to"
            " tls_hostnames"
        )
    return found


def _https_names(config: Config) -> set[str]:
    if config.tls_cert is not None:
        return ca.certificate_names(config.tls_cert)
    return set(config.certificate_names)


def _mqtt_tls(config: Config) -> bool:
    return bool(config.mqtt_tls_port or config.mqtt_wss_port)


def _covered(names: set[str], host: str) -> bool:
    """A name in the certificate, or a wildcard one level up (`*.plant.lan`)."""
    wildcard = "*." + host.partition(".")[2]
    return host.casefold() in {n.casefold() for n in names} or wildcard in names
