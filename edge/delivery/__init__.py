"""What the server sends: e-mail templates and their substitution, the durable outbox,
mail (SMTP or files) and SMS (files or an HTTP gateway) delivery, operator alerts.

May import `edge` (errors, clock, ids, fields, principal, config, listing), `edge.access`
(who may manage templates), `edge.tenancy.settings` (the org or project a template belongs
to), `storage`, and aiohttp's client (the SMS gateway, `sms.py`).
"""
