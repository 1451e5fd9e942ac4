"""The reference device agent, `edge agent` (docs/agent.md): the device's side of what edge
offers, as a program a device maker runs as it is or reads as an example.

One module per job: `settings.py` (the configuration file), `files.py` (owner-only files,
written whole or not at all), `backoff.py` (reconnect delays), `link.py` (the MQTT
connection, paho-mqtt, a persistent session, by API key or client certificate),
`server_api.py` (HTTP calls with the API key), `handler.py` (a configured program run with
JSON in and out), one module per feature (`twin.py` with `merge.py`, `commands.py`,
`jobs.py` with `download.py` and `job_records.py`, `tunnels.py` with `bridge.py`),
`agent.py` (the features on one link), `provision.py` with `keys.py` (enrolling from a
claim) and `cli.py`.

A feature is a `Feature` (`feature.py`): the topics it listens on under the device's own
namespace, what it does after each connection and with each message.

Imports the standard library, paho-mqtt, aiohttp's client and cryptography only, never the
server's modules (`edge`, `api`, `storage`, `embedded_broker`): it ships alone as the
`edge-agent` distribution, and a test reads its import graph. `edge agent` and `edge
tunnel agent` of the server's command import it.
"""
