"""Who is connecting: a device's client certificate (TLS), a device ID and API key, or a
user's access token, each looked up in the device registry (`ClientDirectory`).

The CONNACK codes of a refusal (MQTT 3.1.1, 3.2.2.3):
- 4 "bad user name or password": a user name and password were given and do not open.
- 5 "not authorized": no credential at all, a client certificate the registry does not
  accept (superseded by a reset or renewal, revoked, or its device suspended or deleted;
  edge/devices/certificate_logins.py), or a will topic outside the
  client's rights or reserved (a device's own request topics included: a will is
  routed, never handed to the server's inbox) or a will larger than the message limit.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from amqtt.mqtt.connack import BAD_USERNAME_PASSWORD, NOT_AUTHORIZED
from amqtt.session import Session

from edge.devices.mqtt_clients import ClientDirectory, MqttClient
from embedded_broker import acl


@dataclass(frozen=True)
class Refusal:
    code: int
    reason: str
    credentials: bool = False  # the credentials did not open (audited, docs/audit.md)


def authenticate(
    directory: ClientDirectory, session: Session, max_message_bytes: int
) -> MqttClient | Refusal:
    found = _identify(directory, session)
    if isinstance(found, Refusal):
        return found
    return _check_will(found, session, max_message_bytes) or found


def _identify(directory: ClientDirectory, session: Session) -> MqttClient | Refusal:
    certificate = _peer_certificate(session.ssl_object)
    if certificate is not None:
        client = directory.by_certificate(certificate)
        return client or Refusal(NOT_AUTHORIZED, "client certificate not accepted", True)
    username, password = session.username, session.password
    if not password:
        return Refusal(NOT_AUTHORIZED, "no credentials", True)
    client = directory.by_api_key(username, password) if username else None
    if client is None and password.count(".") == 2:  # a JWT: header.claims.signature
        client = directory.by_access_token(password)
    return client or Refusal(BAD_USERNAME_PASSWORD, "user name and password not accepted", True)


def _check_will(client: MqttClient, session: Session, max_message_bytes: int) -> Refusal | None:
    if not session.will_flag:
        return None
    refusal = acl.publish_refusal(client, session.will_topic or "")
    if refusal is None and acl.reserved_owner(session.will_topic or "") is not None:
        # The device's own request topics pass the ACL, but a will is routed (and may be
        # retained) by amqtt's flow, not handed to the server's inbox: never on them.
        refusal = "a reserved topic (docs/mqtt.md)"
    if refusal is not None:
        return Refusal(NOT_AUTHORIZED, f"will topic refused ({refusal})")
    if len(session.will_message or b"") > max_message_bytes:
        return Refusal(NOT_AUTHORIZED, "will message over the size limit")
    return None


def _peer_certificate(ssl_object: ssl.SSLObject | None) -> bytes | None:
    if ssl_object is None:
        return None
    return ssl_object.getpeercert(binary_form=True)
