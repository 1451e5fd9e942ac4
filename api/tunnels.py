"""Device tunnels (docs/tunnels.md): the five operations of the SDK, and the three
WebSocket routes the two ends of a tunnel connect to.

- POST   /v2/devices/{device_id}/tunnels                admins of the device; its owner when
                                                        `device_owners_can_tunnel` allows
- GET    /v2/devices/{device_id}/tunnels                those, the owner, the device itself
- GET    /v2/devices/{device_id}/tunnels/{tunnel_uuid}  the same
- DELETE /v2/devices/{device_id}/tunnels                those who may open, the device itself
- DELETE /v2/devices/{device_id}/tunnels/{tunnel_uuid}  the same
- GET    /v2/tunnels/{tunnel_id}/connect?service=S      the client's token (WebSocket: one
                                                        stream, one TCP connection)
- POST   /v2/tunnels/{tunnel_id}/agent/token            the tunnel's device itself (its API
                                                        key): a new token for its end
- GET    /v2/tunnels/{tunnel_id}/agent                  the device's token (WebSocket: the
                                                        control channel of the agent)
- GET    /v2/tunnels/{tunnel_id}/agent/streams/{id}     the device's token (WebSocket: the
                                                        device's end of one stream)

The WebSocket routes take no access token or API key: the tunnel's own token, as
`Authorization: Bearer <token>`, is checked by the handler before the upgrade (a refusal
is an ordinary HTTP answer with the Status payload).
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from api import bodies
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, bearer_token, principal
from api.schemas import NULLABLE_STR, integer, obj
from edge.kernel.errors import ValidationError
from edge.tunnels import rules
from edge.tunnels.relay import Frame, Hub
from edge.tunnels.tunnels import Tunnels

log = logging.getLogger("edge.tunnels")
CREATE_TUNNEL = obj(
    {
        "services": {
            "type": "array",
            "items": {"type": "string", "pattern": f"^{rules.SERVICE.pattern}$"},
            "minItems": 1,
            "maxItems": rules.MAX_SERVICES,
            "uniqueItems": True,
        },
        "timeout": integer(1, rules.MAX_MINUTES),
        "sendto_user_id": NULLABLE_STR,
    },
    ("services",),
    title="CreateTunnelBody",
)
CHUNK = 64 * 1024
MAX_FRAME = 4 * CHUNK
HEARTBEAT = 20.0


def _tunnels(request: web.Request) -> Tunnels:
    return request.app[SERVICES].tunnels


async def open_tunnel(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_TUNNEL)
    device_id = request.match_info["device_id"]
    made = await _tunnels(request).open(principal(request), device_id, body)
    return json_response(made, status=201)


async def list_tunnels(request: web.Request) -> web.Response:
    found = _tunnels(request).list(principal(request), request.match_info["device_id"])
    return json_response(found)


async def get_tunnel(request: web.Request) -> web.Response:
    info = request.match_info
    found = _tunnels(request).get(principal(request), info["device_id"], info["tunnel_uuid"])
    return json_response(found)


async def close_tunnel(request: web.Request) -> web.Response:
    info = request.match_info
    await _tunnels(request).close(principal(request), info["device_id"], info["tunnel_uuid"])
    return json_response({"message": "Success"})


async def close_all_tunnels(request: web.Request) -> web.Response:
    await _tunnels(request).close(principal(request), request.match_info["device_id"], None)
    return json_response({"message": "Success"})


async def take_device_token(request: web.Request) -> web.Response:
    made = await _tunnels(request).device_token(principal(request), request.match_info["tunnel_id"])
    return json_response(made, status=201)


# -- the ends ----------------------------------------------------------------------------
class WsPipe:
    """A server-side WebSocket as one end of a stream (edge/tunnels/relay.py's Pipe)."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    async def receive(self) -> Frame | None:
        message = await self.ws.receive()
        if message.type in (WSMsgType.BINARY, WSMsgType.TEXT):
            data: Frame = message.data
            return data
        return None

    async def send(self, frame: Frame) -> None:
        if isinstance(frame, str):
            await self.ws.send_str(frame)
        else:
            await self.ws.send_bytes(frame)

    async def close(self, reason: str) -> None:
        await self.ws.close(message=reason.encode()[:120])


class WsControl(WsPipe):
    async def send_json(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))


async def _upgrade(request: web.Request, heartbeat: float | None = None) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=heartbeat)
    await ws.prepare(request)
    return ws


async def client_stream(request: web.Request) -> web.StreamResponse:
    """One TCP connection of the client: paired with the device's end before the upgrade,
    so a refusal (no agent, service refused, too many streams) is an HTTP answer."""
    tunnel_id = request.match_info["tunnel_id"]
    tunnel = _tunnels(request).authenticate(tunnel_id, bearer_token(request), "client")
    wanted = request.query.get("service", "")
    service = rules.offers(tunnel.services, wanted)
    if service is None:
        offered = list(tunnel.services)  # `services`: for `edge tunnel connect` to read
        raise ValidationError(
            "service", f"this tunnel offers {', '.join(offered)}", extension={"services": offered}
        )
    hub = _hub(request)
    stream = await hub.open_stream(tunnel, service)
    try:
        ws = await _upgrade(request)
    except BaseException:
        await hub.drop_stream(stream, "the client went away")
        raise
    await hub.relay(stream, WsPipe(ws))
    return ws


async def agent_control(request: web.Request) -> web.StreamResponse:
    """The agent's control channel: stream requests go down, refusals come up."""
    tunnel_id = request.match_info["tunnel_id"]
    tunnel = _tunnels(request).authenticate(tunnel_id, bearer_token(request), "device")
    hub = _hub(request)
    ws = await _upgrade(request, HEARTBEAT)
    control = WsControl(ws)
    replaced = hub.attach_agent(tunnel, control)
    if replaced is not None:
        with contextlib.suppress(Exception):
            await replaced.close("replaced by a newer connection of the device")
    online = _tunnels(request).agent_online(tunnel)  # the device is online meanwhile
    try:
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                _agent_says(hub, tunnel_id, message.data)
    finally:
        hub.detach_agent(tunnel_id, control)
        online.close(ws.close_code == WSCloseCode.OK)
    return ws


def _agent_says(hub: Hub, tunnel_id: str, text: str) -> None:
    with contextlib.suppress(ValueError, TypeError, KeyError):
        said = json.loads(text)
        if said.get("type") == "refuse":
            hub.refused(tunnel_id, str(said["stream"]), str(said.get("reason", "refused"))[:200])


async def device_stream(request: web.Request) -> web.StreamResponse:
    """The device's end of one stream, asked for on the control channel."""
    tunnel_id = request.match_info["tunnel_id"]
    _tunnels(request).authenticate(tunnel_id, bearer_token(request), "device")
    hub = _hub(request)
    stream = hub.waiting_stream(tunnel_id, request.match_info["stream_id"])
    ws = await _upgrade(request)
    if not hub.attach_device(stream, WsPipe(ws)):  # it stopped waiting meanwhile
        await ws.close()
        return ws
    await stream.done.wait()  # the client's handler relays; this one keeps the socket
    return ws


def _hub(request: web.Request) -> Hub:
    return _tunnels(request).hub


ROUTES = [
    Route(
        "POST",
        "/v2/devices/{device_id}/tunnels",
        open_tunnel,
        "token",
        "Open a tunnel to a device: its client access token is shown this once",
        "devices",
        body=CREATE_TUNNEL,
        responses={201: "NewTunnelInfo"},
        operation_id="open_device_tunnel",
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/tunnels",
        list_tunnels,
        "token",
        "List the open tunnels of a device",
        "devices",
        responses={200: "TunnelList"},
        operation_id="get_device_tunnels",
    ),
    Route(
        "DELETE",
        "/v2/devices/{device_id}/tunnels",
        close_all_tunnels,
        "token",
        "Close every open tunnel of a device: both ends of each drop at once",
        "devices",
        operation_id="close_all_device_tunnels",
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/tunnels/{tunnel_uuid}",
        get_tunnel,
        "token",
        "Get an open tunnel of a device",
        "devices",
        responses={200: "TunnelInfo"},
        operation_id="get_device_tunnel_by_id",
    ),
    Route(
        "DELETE",
        "/v2/devices/{device_id}/tunnels/{tunnel_uuid}",
        close_tunnel,
        "token",
        "Close a tunnel: both ends drop at once",
        "devices",
        operation_id="close_device_tunnel_by_id",
    ),
    Route(
        "GET",
        "/v2/tunnels/{tunnel_id}/connect",
        client_stream,
        "public",
        "WebSocket: one stream through a tunnel (Bearer: the tunnel's client access token)",
        "tunnels",
        query=("service",),
        # ServiceRefused: the service asked for is not the tunnel's; Status: any other 400
        # (a tunnel ID spelled with an escape that is not UTF-8, api/middleware.py)
        responses={101: "WebSocket", 400: "ServiceRefused | Status"},
        operation_id="connect_tunnel",
        extension=True,
        errors=(401,),
    ),
    Route(
        "POST",
        "/v2/tunnels/{tunnel_id}/agent/token",
        take_device_token,
        "token",
        "A new token for the device end of a tunnel: the tunnel's device alone, with its own"
        " credentials (the open notice carries none); the token before stops working",
        "tunnels",
        responses={201: "DestinationToken"},
        operation_id="take_tunnel_device_token",
        extension=True,
    ),
    Route(
        "GET",
        "/v2/tunnels/{tunnel_id}/agent",
        agent_control,
        "public",
        "WebSocket: the device agent's control channel (Bearer: the destination token)",
        "tunnels",
        responses={101: "WebSocket"},
        operation_id="tunnel_agent",
        extension=True,
        errors=(401,),
    ),
    Route(
        "GET",
        "/v2/tunnels/{tunnel_id}/agent/streams/{stream_id}",
        device_stream,
        "public",
        "WebSocket: the device's end of one stream (Bearer: the destination token)",
        "tunnels",
        responses={101: "WebSocket"},
        operation_id="tunnel_agent_stream",
        extension=True,
        errors=(401,),
    ),
]
