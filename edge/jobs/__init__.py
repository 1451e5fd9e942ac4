"""Rollout jobs (docs/jobs.md): a JSON document, and for firmware a pinned file of a
group's files store, rolled out to target devices a few at a time under a policy (rate,
in progress at once, abort threshold, timeout, retries), each device's execution of it
followed to its end.

What lives here: what a job is asked to be (`rules.py`, pure), its artifact (`artifacts.py`:
pinning, SHA-256, presigned URLs), the views (`views.py`), how executions end and what
follows for their job (`progress.py`), the service people call and who may
(`service.py`), the running-job shares (`shares.py`) and the pace of making jobs
(`pace.py`), the sweep of ended jobs (`retention.py`), a device's own executions over
HTTP and MQTT (`executions.py`), the scheduler (`scheduler.py`), what is told after a
commit (`notices.py`: notify-next, the progress hook) and the MQTT topics and server inbox
(`topics.py`, `inbox.py`).

May import `edge.accounts` (the devices and how the caller stands towards them),
`edge.devices` (topics, MQTT clients, replies), `edge.files` (rights, presigned URLs),
`edge.access`, `edge.tenancy`, `edge.kernel` and `storage`; `edge.services`, `edge.app`,
`edge.live` and `api` import this room. Nothing here knows HTTP or the broker.
"""
