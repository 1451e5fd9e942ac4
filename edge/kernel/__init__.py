"""The kernel of `edge`: what every room shares. Settings (`config.py`, and the commented
file `edge init` writes, `config_template.py`), the domain errors (`errors.py`) and
storage's refusals as edge's (`storage_errors.py`, which `edge/app.py` hands to storage),
value rules (`fields.py`), the caller (`principal.py`), lists and cursors (`listing.py`), the
clock, IDs, logs, JSON text, patterns, numbers, printable text, and the audit log's events
(`audit.py`).

May import `storage` (lists, the audit log and storage's refusals speak to it) and nothing
else of ours. Imported by every room of `edge`, by `api` and by `embedded_broker`
(docs/architecture.md, "Who may import whom").
"""
