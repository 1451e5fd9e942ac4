"""What the server sends: the substitution of e-mail templates (which live in
`edge/tenancy/email_templates.py`), the durable outbox, mail (SMTP or files) and SMS (files
or an HTTP gateway) delivery, operator alerts.

May import `edge.kernel` (errors, clock, ids, config), `storage`, and aiohttp's client
(the SMS gateway, `sms.py`): it substitutes and sends, and knows no tenant. Imported by
`edge.tenancy` (templating, for e-mail templates), `edge.auth`, `edge.accounts`,
`edge.tunnels`, `api` and the composition root.
"""
