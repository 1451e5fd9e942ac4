"""`edge serve`, as the MQTT benchmark runs it: the same site, app and event loop, with the
benchmark's device registry (bench/mqtt_registry.py) in place of the one edge/devices
will provide. Usage: python -m bench.mqtt_server DEVICES.json [edge serve flags...];
settings also come from EDGE_* variables, as for `edge serve`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bench.mqtt_registry import BenchDirectory
from edge import app, logs
from edge.config import SETTINGS, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("devices", type=Path)
    for setting in SETTINGS:
        parser.add_argument(setting.flag, dest=setting.name)
    args = parser.parse_args()
    config = load({s.name: getattr(args, s.name) for s in SETTINGS}, os.environ)
    logs.setup(config.log_format, config.log_level)
    site = app.open_site(config)
    site.services.mqtt_directory = BenchDirectory.from_file(args.devices)
    app.run(site, ready=lambda: print("ready", flush=True))


if __name__ == "__main__":
    sys.exit(main())
