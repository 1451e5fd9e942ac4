"""`edge tunnel connect` and `edge tunnel agent`: their arguments, and running them until
SIGTERM or Ctrl-C (exit code 0); `connect` also ends, with 0, when its tunnel closes, and
refuses to start (one line, exit code 1, or 2 for a service the tunnel does not offer) when
it cannot be used. Secrets come from the environment rather than the
command line (which other users of the machine can read): EDGE_TUNNEL_TOKEN for the
client access token, EDGE_DEVICE_API_KEY for the device's API key; the flags exist for
tests and one-off use.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

TOKEN_ENV = "EDGE_TUNNEL_TOKEN"
RECONNECT_MAX = 5.0  # seconds: the agent it replaces tried every few seconds
API_KEY_ENV = "EDGE_DEVICE_API_KEY"


def add_parser(sub: Any) -> None:
    tunnel = sub.add_parser("tunnel", help="reach a device's service through the server")
    helpers = tunnel.add_subparsers(dest="tunnel_command", required=True)
    connect = helpers.add_parser("connect", help="on your machine: a local port into a tunnel")
    connect.add_argument("--server", required=True, help="the edge server's URL")
    connect.add_argument("--tunnel", required=True, help="the tunnel's uuid")
    connect.add_argument("--service", required=True, help="the service to reach, e.g. SSH")
    connect.add_argument(
        "--listen", default="127.0.0.1:2222", help="local HOST:PORT (port 0: any free port)"
    )
    connect.add_argument("--token", help=f"client access token (default: ${TOKEN_ENV})")
    connect.add_argument(
        "--check-every",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how often to ask whether the tunnel is still open (it exits once it is not)",
    )
    agent = helpers.add_parser("agent", help="on the device: open its services to tunnels")
    agent.add_argument("--server", required=True, help="the edge server's URL")
    agent.add_argument("--device-id", required=True)
    agent.add_argument("--root-scope", required=True, help="the device's root_scope")
    agent.add_argument(
        "--service",
        action="append",
        required=True,
        metavar="NAME=[HOST:]PORT",
        help="a service a tunnel may reach, e.g. SSH=22 or HTTP=127.0.0.1:8080 (repeat)",
    )
    agent.add_argument("--mqtt", default="", help="broker URL (default: mqtt://<server host>:1883)")
    agent.add_argument("--api-key", help=f"the device's API key (default: ${API_KEY_ENV})")
    for parser in (connect, agent):
        parser.add_argument("--ca", help="the site CA certificate (ca.pem) for https/mqtts")


def run(args: argparse.Namespace) -> int:
    try:
        main = _connect(args) if args.tunnel_command == "connect" else _agent(args)
    except ValueError as bad:
        print(f"edge tunnel {args.tunnel_command}: {bad}", file=sys.stderr)
        return 2
    from edge.tunnel_clients.connector import Refused
    from edge_agent.cli import until_signal

    try:
        asyncio.run(until_signal(main))
    except OSError as failed:
        print(f"edge tunnel {args.tunnel_command}: {failed.strerror or failed}", file=sys.stderr)
        return 1
    except Refused as refused:
        print(f"edge tunnel {args.tunnel_command}: {refused}", file=sys.stderr)
        return refused.code
    return 0


Main = Callable[[asyncio.Event], Awaitable[None]]


def _connect(args: argparse.Namespace) -> Main:
    from edge.tunnel_clients.connector import Connect, Connector

    token = args.token or os.environ.get(TOKEN_ENV)
    if not token:
        raise ValueError(f"give the client access token in ${TOKEN_ENV} (or --token)")
    from edge_agent.settings import address

    host, port = address(args.listen)
    context = ssl.create_default_context(cafile=args.ca) if args.ca else None
    if not args.check_every > 0:
        raise ValueError("--check-every: must be a positive number of seconds")
    config = Connect(
        args.server, args.tunnel, token, args.service, host, port, context, args.check_every
    )
    return Connector(config).run


def _agent(args: argparse.Namespace) -> Main:
    """The device agent with its tunnels alone (docs/agent.md), as these flags say."""
    from edge_agent.agent import Agent
    from edge_agent.settings import Settings, SettingsError

    key = args.api_key or os.environ.get(API_KEY_ENV)
    if not key:
        raise ValueError(f"give the device's API key in ${API_KEY_ENV} (or --api-key)")
    try:
        services = dict(_service(text) for text in args.service)
    except SettingsError as bad:
        raise ValueError(str(bad)) from None
    settings = Settings(
        server=args.server.rstrip("/"),
        mqtt_url=args.mqtt or f"mqtt://{urlsplit(args.server).hostname}:1883",
        device_id=args.device_id,
        root_scope=args.root_scope,
        api_key=key,
        ca_file=Path(args.ca) if args.ca else None,
        client_id=f"tunnel-agent-{args.device_id}",  # the session it always had
        reconnect_max=RECONNECT_MAX,
        services=services,
    )
    return Agent(settings).run


def _service(text: str) -> tuple[str, tuple[str, int]]:
    """`--service NAME=PORT` or `NAME=HOST:PORT`, as the agent's `[tunnels.services]`."""
    from edge_agent.settings import service

    name, sep, where = text.partition("=")
    if not sep or not name:
        raise ValueError(f"--service {text}: expected NAME=PORT or NAME=HOST:PORT")
    return service(name, where)
