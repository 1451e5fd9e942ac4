"""Live changes (docs/events.md): one feed of what changed (data entries, files, device
presence, twins), numbered with IDs that keep increasing across restarts and kept for a
window so a client can resume; the one decision whether an account may read a change
(`readable.py`, which every transport asks per subscriber); and the streams that carry the
feed to HTTP clients, each with a bounded buffer and a per-account limit.

May import `edge.kernel`, `storage` and the rooms whose change hooks it listens to for
their event types (`edge.data`, `edge.files`, `edge.devices`, `edge.twins`); the rights
themselves are handed in by the composition root as callables. Never aiohttp. Imported by
`api` and the composition root.
"""
