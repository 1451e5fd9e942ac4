"""The common and breached passwords that no account may choose.

Attackers try the most common passwords first, against every account they can name, so
a password from such a list falls to a guess spread thinly enough to pass any throttle.
The list shipped here (`common-passwords.txt.gz`, read from the package, never fetched)
is the 20,000 most common passwords of the public breach corpora compiled by Royce
Williams, lowercased and deduplicated, as Django ships it (BSD licence); a password is
compared lowercased too, so 'PassWord1' counts as 'password1'.
"""

from __future__ import annotations

import functools
import gzip
from importlib import resources

LIST_FILE = "common-passwords.txt.gz"


def is_common(password: str) -> bool:
    return password.strip().lower() in _passwords()


@functools.cache
def _passwords() -> frozenset[str]:
    packed = (resources.files("edge.auth") / LIST_FILE).read_bytes()
    return frozenset(line.strip() for line in gzip.decompress(packed).decode().splitlines())


def size() -> int:
    return len(_passwords())
