"""The public sign-in page configuration of an organization or project."""

from __future__ import annotations

from aiohttp import web

from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route


async def get_client_ui_config(request: web.Request) -> web.Response:
    """ClientInterfaceInfo for an org or project named by its ID or alias (any case)."""
    client_id = request.match_info["client_id_or_alias"]
    return json_response(request.app[SERVICES].projects.client_interface(client_id))


ROUTES = [
    Route(
        "GET",
        "/v2/ui/{client_id_or_alias}",
        get_client_ui_config,
        "public",
        "Sign-in page configuration (login fields, UI) of an org or project",
        "system",
        responses={200: "ClientInterfaceInfo"},
        operation_id="get_client_ui_config",
        errors=(404,),
    ),
]
