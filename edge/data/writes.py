"""Writing one entry, inside the writer's transaction (docs/data.md, "Writes").

Each function runs on the writer thread with the transaction open: it reads whether the
path holds an entry, asks for the rights that case needs (edge/access/paths.py `needed`),
and writes. Deciding and writing in one transaction means no other write can slip in
between the check and the change. Every write bumps `revision`, appends the writer and
the time to `updated_by_list` / `updated_date_list` (kept to the group's `num_history`
most recent), and signs the entry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from edge.access.paths import needed
from edge.data import versions
from edge.data.json_rules import checked_text
from edge.data.signing import DataSigner
from edge.data.target import DataTarget
from edge.data.uploads import Upload
from edge.data.versions import Version
from edge.kernel.errors import Conflict, NotFound
from storage import data as store
from storage.data import INDEX_FIELDS, DataEntry, EntryHistory
from storage.rows import Tx

Stamp = tuple[str, str]  # (who, when)


class EntryWrites:
    def __init__(self, signer: DataSigner, max_bytes: int) -> None:
        self._signer = signer
        self.max_bytes = max_bytes

    @staticmethod
    def current(conn: Tx, target: DataTarget) -> DataTarget:
        """The target with its group's data rules (`num_history`, delete-to-put) as this
        transaction sees them: the target's group may be a remembered copy, and these rules
        must be the ones in force when the write is decided. Call once per transaction."""
        rules = store.group_rules(conn, target.group_id)
        if rules is None:
            raise NotFound("Group not found")
        return _with_rules(target, *rules)

    def put_alone(
        self,
        conn: Tx,
        target: DataTarget,
        path: str,
        upload: Upload,
        stamp: Stamp,
        expected: Version | None = None,
    ) -> None:
        """`current` and `put` with one read: a PUT in a transaction of its own (the
        common write; `put` is the one for a bulk job). `expected`: the version the
        caller's `If-Match` named (a 409 when the entry is at another, or gone)."""
        state = store.put_state(conn, target.group_id, path)
        if state is None:
            raise NotFound("Group not found")
        rules, current = state
        self._replace(conn, _with_rules(target, *rules), path, current, upload, stamp, expected)

    def put(self, conn: Tx, target: DataTarget, path: str, upload: Upload, stamp: Stamp) -> None:
        current = store.history(conn, target.group_id, path)
        self._replace(conn, target, path, current, upload, stamp)

    def _replace(
        self,
        conn: Tx,
        target: DataTarget,
        path: str,
        current: EntryHistory | None,
        upload: Upload,
        stamp: Stamp,
        expected: Version | None = None,
    ) -> None:
        """A PUT's check and write, once its target's rules and the entry it replaces are read."""
        target.require(path, self._needed(target, current is not None, "PUT"))
        _at_version(target, path, current, expected)
        self._save(conn, target, path, current, upload, stamp, merge=False)

    def post(self, conn: Tx, target: DataTarget, path: str, upload: Upload, stamp: Stamp) -> None:
        target.require(path, self._needed(target, False, "POST"))
        if store.exists(conn, target.group_id, path):
            raise Conflict(f"path: an entry already exists at {path} (PUT replaces it)")
        self._save(conn, target, path, None, upload, stamp, merge=False)

    def patch(
        self,
        conn: Tx,
        target: DataTarget,
        path: str,
        upload: Upload,
        stamp: Stamp,
        expected: Version | None = None,
    ) -> None:
        """A PATCH: 404 for a missing entry, but with `If-Match` the 409 a PUT gives (the
        entry read is gone)."""
        target.require(path, self._needed(target, True, "PATCH"))
        current = store.get(conn, target.group_id, path)
        _at_version(target, path, current, expected)
        if current is None:
            raise NotFound(f"No data at {path}")
        self._save(conn, target, path, current, upload, stamp, merge=True)

    def delete(
        self, conn: Tx, target: DataTarget, path: str, expected: Version | None = None
    ) -> None:
        """A DELETE of one entry; with `If-Match`, only while it is at that version."""
        target.require(path, ("delete",))
        if expected is not None:
            _at_version(target, path, store.history(conn, target.group_id, path), expected)
        if not store.delete(conn, target.group_id, path):
            raise NotFound(f"No data at {path}")

    @staticmethod
    def _needed(target: DataTarget, exists: bool, method: str) -> tuple[str, ...]:
        return needed(exists, method, legacy=target.legacy, delete_to_put=target.delete_to_put)

    def _save(
        self,
        conn: Tx,
        target: DataTarget,
        path: str,
        current: DataEntry | EntryHistory | None,
        upload: Upload,
        stamp: Stamp,
        *,
        merge: bool,
    ) -> None:
        entry = compose(target, path, current, upload, stamp, merge=merge)
        text = upload.text if entry.value is upload.value else None  # encoded once, on upload
        if merge and upload.has_value:  # the merged value obeys the size limit too
            text = checked_text("value", entry.value, self.max_bytes)
        signature = self._signer.sign(entry, text)
        if current is None:
            store.save(conn, entry, text, signature=signature)
        else:
            store.update(conn, entry, current, text, signature=signature)


def _at_version(
    target: DataTarget,
    path: str,
    current: DataEntry | EntryHistory | None,
    expected: Version | None,
) -> None:
    """A conditional write's check, in the write's transaction, after the write's own
    rights: the caller may read the entry (only a reader can hold its ETag, and the 409
    tells its revision and whether it exists), and it is still the entry, at the revision,
    the caller read (docs/data.md, "Conditional writes")."""
    if expected is None:
        return
    target.require(path, ("read",))
    was = expected.revision
    if current is None:
        raise Conflict(f"revision: there is no entry at {path} now, not revision {was}")
    now = versions.of(current)
    if now.incarnation != expected.incarnation:
        raise Conflict(f"revision: the entry at {path} was deleted and created again since")
    if now.revision != was:
        raise Conflict(f"revision: the entry is at revision {now.revision}, not {was}")


def _with_rules(target: DataTarget, keep: int, rdp: bool) -> DataTarget:
    """The target under its group's data rules as read in the transaction."""
    group = target.group
    delete_to_put = rdp or target.delete_to_put_by_default
    if (keep, rdp) == (group.num_history, group.require_delete_permission_to_put_data):
        if delete_to_put == target.delete_to_put:
            return target  # the common case: nothing to copy (a copy costs 10 us)
    else:
        group = replace(group, num_history=keep, require_delete_permission_to_put_data=rdp)
    return replace(target, group=group, delete_to_put=delete_to_put)


def compose(
    target: DataTarget,
    path: str,
    current: DataEntry | EntryHistory | None,
    upload: Upload,
    stamp: Stamp,
    *,
    merge: bool,
) -> DataEntry:
    """The entry after this write (unsigned). A merge needs the whole current entry; a
    replacement only its history (`EntryHistory`). Built by position, in DataEntry's
    field order: by keyword it took three times as long, on the writer's thread."""
    who, when = stamp
    keep = max(target.group.num_history, 0)
    if current is None:
        created, by_list, date_list, revision = (who, when), [who], [when], 1
    else:
        created = (current.created_by, current.created_date)
        by_list = [*current.updated_by_list, who]
        date_list = [*current.updated_date_list, when]
        revision = current.revision + 1
    fields = [
        target.group_id,
        path,
        _value(current, upload, merge),
        *_index(current, upload, merge),
        *created,
        who,
        when,
        by_list[-keep:] if keep else [],
        date_list[-keep:] if keep else [],
        revision,
        "",
    ]
    return DataEntry(*fields)


def _value(current: Any, upload: Upload, merge: bool) -> Any:
    """PATCH merges: the patch's keys replace the stored object's, the others stay; when
    either side is not an object, the patch's value replaces the stored one."""
    if not upload.has_value:
        return current.value if current else None
    if merge and current and isinstance(current.value, dict) and isinstance(upload.value, dict):
        return {**current.value, **upload.value}
    return upload.value


def _index(current: Any, upload: Upload, merge: bool) -> list[Any]:
    """The index fields after the write, in INDEX_FIELDS order: those sent, and on a merge
    the current ones not sent (a field sent as None is cleared)."""
    sent = upload.index
    if merge and current:
        return [sent.get(n, getattr(current, n)) for n in INDEX_FIELDS]
    return [sent.get(n) for n in INDEX_FIELDS]
