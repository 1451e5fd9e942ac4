"""What `edge serve` and `edge init` print on standard output at start: the version, the
data folder, the URLs the server answers on, and on a first start the staff account.

As text for a terminal; with `log_format = "json"` as JSON lines like the logs (a journal
or a collector reads standard output too), and then the generated staff password is not
printed at all: it is only in `initial-admin.txt`, readable by the server's user alone.

Every URL printed is one the server listens on: the public URL only when it names this
server's own scheme and port (behind a proxy, clients use the proxy's; the server answers
on its own address, which is what is printed).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from edge import BUILD_VERSION, INTERFACE_VERSION
from edge.kernel.config import Config
from edge.kernel.logs import timestamp

if TYPE_CHECKING:
    from edge.auth.staff import FirstStaff

LOGGER = "edge.banner"
Fields = dict[str, str]


def site(config: Config, first: FirstStaff | None) -> None:
    """The version and the data folder; and the staff account made on this first start."""
    head = {"version": BUILD_VERSION, "interface": INTERFACE_VERSION}
    if _json(config):
        _json_line("edge started", head | {"data_folder": str(config.data_dir.resolve())})
    else:
        print(f"edge {BUILD_VERSION} (interface {INTERFACE_VERSION})")
        print(f"  data folder:  {config.data_dir.resolve()}")
    first_staff(config, first)


def urls(config: Config, mqtt: Iterable[tuple[str, str]]) -> None:
    """Once the listeners are bound, so the URLs are only printed once they answer."""
    base = answering_url(config)
    found = [("console", f"{base}/console/"), ("API", f"{base}/v2")]
    found += [("reference", f"{base}/v2/docs")]
    found += [("health", f"{base}/v2/health"), *mqtt]
    if _json(config):
        _json_line("listening", {label.lower(): url for label, url in found})
    else:
        for label, url in found:
            print(f"  {label + ':':13} {url}")
    sys.stdout.flush()


def first_staff(config: Config, first: FirstStaff | None) -> None:
    """The generated password is printed this once (in text), never in JSON; later
    starts find the account and stay quiet."""
    if first is None:
        return
    if _json(config):
        account = {"username": first.username, "email": first.email}
        if first.credentials_file is not None:
            account["password_file"] = str(first.credentials_file.resolve())
        _json_line("first start: created the staff account", account)
    else:
        _first_staff_text(first)
    sys.stdout.flush()


def _first_staff_text(first: FirstStaff) -> None:
    print("First start: created the staff account")
    print(f"  username: {first.username}")
    print(f"  email:    {first.email}")
    if first.password:
        print(f"  password: {first.password}")
        print(f"  (also saved in {first.credentials_file}, readable by this user only)")


def answering_url(config: Config) -> str:
    """The public URL when this server answers it itself (its scheme and port), else the
    server's own address."""
    if not config.public_url:
        return config.local_url
    public = urlsplit(config.public_url)
    scheme = "https" if config.tls else "http"
    port = public.port or (443 if public.scheme == "https" else 80)
    return config.base_url if (public.scheme, port) == (scheme, config.port) else config.local_url


def _json(config: Config) -> bool:
    return config.log_format == "json"


def _json_line(message: str, fields: Fields) -> None:
    entry = {"time": timestamp(time.time()), "level": "info", "logger": LOGGER}
    print(json.dumps(entry | {"message": message} | fields))
