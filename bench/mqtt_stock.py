"""Stock amqtt 0.12.1, for comparison: one TCP listener, anonymous clients, no ACLs, none of
edge's changes. Usage: python -m bench.mqtt_stock PORT"""

from __future__ import annotations

import asyncio
import logging
import sys

from amqtt.broker import Broker


async def serve(port: int) -> None:
    logging.getLogger("amqtt").setLevel(logging.WARNING)
    logging.getLogger("transitions").setLevel(logging.WARNING)
    config = {
        "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}},
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }
    broker = Broker(config)
    await broker.start()
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
