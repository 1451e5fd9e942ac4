"""The two client programs of `edge tunnel` (docs/tunnels.md): `connector.py` (the
technician's side, `edge tunnel connect`) and `agent.py` (the device's side, `edge tunnel
agent`), their shared TCP-to-WebSocket bridge (`bridge.py`) and their command lines
(`commands.py`). They talk to a server over HTTP and MQTT like any other client, with
aiohttp's and amqtt's clients.

A room beside the CLI: may import the standard library, aiohttp's and amqtt's clients and
nothing of the server's rooms. Imported by `edge/cli.py` alone; the server never imports it.
"""
