"""The shell's commands that work through the services, as `api/` does for HTTP: `edge
admin` (`admin/`: orgs, users, groups and devices, as the `operator` principal), `edge admin
reset-password|unlock` (`accounts.py`), `edge audit list` (`audit_log.py`) and `edge device
bundle` (`device_bundle.py`).

A room beside the CLI, above the composition root: may import `edge/app.py` (to open a
site), `edge/services.py` (the services it drives), `edge/banner.py`, every room of `edge`
and `storage`. Imported by `edge/cli.py` alone.
"""
