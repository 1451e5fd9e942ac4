"""Billing points: a ledger per organization that staff credit and metered usage debits.

What lives here: the meters, their units and default rates, and what a day of usage
costs (`rates.py`); the staff-only ledger, balance, usage summary and rates
(`ledger.py`); the meter that counts in memory, flushes periodically, snapshots the
daily gauges and debits closed days (`meter.py`). See docs/billing.md.

May import `edge.kernel` (errors, clock, ids, fields, principal, listing),
`edge.tenancy.orgs` and `storage`. The MQTT broker's message counts reach the meter through
a callable that `edge/app.py` hands it; this room never imports `embedded_broker`. Imported
by `api` and the composition root.
"""
