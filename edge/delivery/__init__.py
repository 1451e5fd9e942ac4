"""What the server sends: e-mail templates and their substitution, the durable outbox,
mail (SMTP or files) and SMS (files or an HTTP gateway) delivery, operator alerts.

May import `edge` (errors, clock, ids, fields, principal, config), `edge.access` (who may
manage templates) and `storage`.
"""
