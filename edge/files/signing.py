"""Presigned URLs: this server's own, HMAC-signed, time-limited URLs for one object.

A URL is bound to its method, group, path, upload and part (and, for a download that must
be of one version of the file, its ETag: a rollout job's artifact), and carries the
permissions checked when it was issued (`rights`); the signature covers all of them and
the expiry, so changing any one (another path, another part, a later expiry, more rights,
another ETag) makes it a 403. The key is `keys/files-url.key` in the data folder, apart
from the token keys. The signature travels in the query parameter `signature`, which logs
must not show.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from edge.kernel import clock
from edge.kernel.errors import Denied
from storage import layout

KEY_FILE = layout.FILES_URL_KEY_FILE
PREFIX = "/v2/presigned/groups"  # {PREFIX}/{group_id}/files/{path without its leading /}
SIGNATURE = "signature"
FIELDS = ("expires", "rights", "upload_id", "part_number", "etag", SIGNATURE)


@dataclass(frozen=True)
class Grant:
    """What one presigned URL allows: one method on one object, until `expires`."""

    method: str
    group_id: str
    path: str
    rights: tuple[str, ...]
    expires: int  # Unix seconds
    upload_id: str = ""
    part_number: int = 0
    etag: str = ""  # when given, the URL serves this version of the file only


def load_key(data_dir: Path) -> bytes:
    folder = layout.keys_dir(data_dir)
    folder.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
    path = folder / KEY_FILE
    if not path.exists():
        layout.write_secret(path, secrets.token_bytes(32))
    return path.read_bytes()


class UrlSigner:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def url(self, base: str, grant: Grant) -> str:
        """The full URL: the server's base, the object's path, the signed query."""
        return f"{_where(base, grant)}?{urlencode(self.query(grant))}"

    def part_urls(self, base: str, grant: Grant, count: int) -> list[str]:
        """The URLs of parts 1..count of one upload, as `url` writes each. They differ only in
        the part number and the signature, so the rest is written once: URL by URL, 10,000
        parts held the event loop for 0.4 s."""
        common = {"expires": str(grant.expires), "rights": ",".join(grant.rights)}
        common["upload_id"] = grant.upload_id
        head = f"{_where(base, grant)}?{urlencode(common)}&part_number="
        return [f"{head}{n}&{SIGNATURE}={self._sign(grant, n)}" for n in range(1, count + 1)]

    def query(self, grant: Grant) -> dict[str, str]:
        query = {"expires": str(grant.expires), "rights": ",".join(grant.rights)}
        if grant.upload_id:
            query["upload_id"] = grant.upload_id
        if grant.part_number:
            query["part_number"] = str(grant.part_number)
        if grant.etag:
            query["etag"] = grant.etag
        query[SIGNATURE] = self._sign(grant)
        return query

    def verify(self, method: str, group_id: str, path: str, query: Mapping[str, str]) -> Grant:
        """The grant a request's URL carries; Denied if it was changed or has expired.

        The query must be spelled exactly as `query` writes it: a parameter given twice
        (the first would count, the second be ignored), an empty one, or another spelling of
        the same value (`expires=+17..`, `rights=read,`) makes it another URL, not ours."""
        names = set(query)  # a multidict's length counts a repeated name once per value
        if len(query) != len(names) or names - set(FIELDS):
            raise Denied("This is not a presigned URL of this server")
        if SIGNATURE not in query or "expires" not in query:
            raise Denied("This is not a presigned URL of this server")
        try:
            expires, part = int(query["expires"]), int(query.get("part_number", "0"))
        except ValueError:
            raise Denied("This is not a presigned URL of this server") from None
        rights = tuple(r for r in query.get("rights", "").split(",") if r)
        upload_id = query.get("upload_id", "")
        etag = query.get("etag", "")
        grant = Grant(method, group_id, path, rights, expires, upload_id, part, etag)
        expected = self.query(grant)
        signature = expected.pop(SIGNATURE).encode()
        spelled = {name: value for name, value in query.items() if name != SIGNATURE}
        if spelled != expected or not hmac.compare_digest(signature, query[SIGNATURE].encode()):
            raise Denied("The presigned URL's signature does not match (changed or not ours)")
        if clock.now().timestamp() > expires:
            raise Denied("The presigned URL has expired; ask for a new one")
        return grant

    def _sign(self, grant: Grant, part_number: int | None = None) -> str:
        """The signature of a grant (of another part of its upload, when `part_number`)."""
        part = grant.part_number if part_number is None else part_number
        message = "\n".join(
            (
                grant.method,
                grant.group_id,
                grant.path,
                grant.upload_id,
                str(part),
                str(grant.expires),
                ",".join(grant.rights),
            )
        )
        if grant.etag:  # signed only when given: the URLs signed before it stay valid
            message += f"\n{grant.etag}"
        digest = hmac.new(self._secret, message.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _where(base: str, grant: Grant) -> str:
    """The server's base and the object's path (the URL before its query)."""
    group, path = quote(grant.group_id, safe=""), quote(grant.path.lstrip("/"), safe="/")
    return f"{base}{PREFIX}/{group}/files/{path}"
