"""The client programs of `edge tunnel` (docs/tunnels.md): `connector.py` (the
technician's side, `edge tunnel connect`) and their command lines (`commands.py`). The
device's side, `edge tunnel agent`, is the device agent's tunnels alone (`edge_agent/`,
docs/agent.md), whose TCP-to-WebSocket bridge the connector shares. They talk to a server
over HTTP and MQTT like any other client.

A room beside the CLI: may import the standard library, aiohttp's client and `edge_agent`,
nothing of the server's rooms. Imported by `edge/cli.py` alone; the server never imports it.
"""
