"""HTTPS: the operator's certificate and key, or one issued by the site's own CA."""

from __future__ import annotations

import ssl

from edge.config import Config
from edge.errors import ValidationError
from edge.ops import ca


def server_context(config: Config) -> ssl.SSLContext | None:
    """The TLS context to serve with, or None for plain HTTP."""
    if not config.tls:
        return None
    if config.tls_cert is not None and config.tls_key is not None:
        cert, key = config.tls_cert, config.tls_key
    else:
        files = ca.server_certificate(config.data_dir, list(config.tls_hostnames))
        cert, key = files.cert, files.key
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ValidationError("tls_cert", f"cannot load {cert} with {key}: {exc}") from None
    return context
