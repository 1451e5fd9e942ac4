"""`edge admin reset-password` and `edge admin unlock`: passwords from a prompt or standard
input (never the command line), sessions ended, blocks lifted; EDGE_ADMIN_PASSWORD on an
existing site is ignored out loud; a busy port leaves nothing behind on a first start."""

from __future__ import annotations

import asyncio
import getpass
import io
import logging
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from edge import cli
from edge.auth import staff as first_staff
from edge.auth.hashing import COMMON
from edge.kernel.errors import TooManyAttempts, ValidationError
from tests.conftest import STAFF_PASSWORD
from tests.factory import new_site
from tests.tenants import PASSWORD

NEW = "operator-chose-this-1"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdin: io.StringIO,
    *argv: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", stdin)
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def grant(data_dir: Path, password: str, **form: str) -> dict[str, Any]:
    site = new_site(data_dir)
    try:
        signin = site.services.signin
        body = {"grant_type": "password", "username": "admin", "password": password, **form}
        return asyncio.run(signin.password_grant(body, "192.0.2.1"))
    finally:
        site.services.db.close()


def test_reset_the_staff_password_from_standard_input(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = grant(data_dir, STAFF_PASSWORD)
    code, out, err = run(
        capsys,
        monkeypatch,
        io.StringIO(NEW + "\n"),
        "admin",
        "reset-password",
        "admin",
        "--data-dir",
        str(data_dir),
    )
    assert code == 0, err
    assert "new password set for staff admin" in out and NEW not in out + err
    assert "access_token" in grant(data_dir, NEW)
    with pytest.raises(ValidationError):
        grant(data_dir, STAFF_PASSWORD)
    site = new_site(data_dir)
    try:
        refreshed = asyncio.run(
            site.services.signin.refresh_grant({"refresh_token": before["refresh_token"]})
        )
    except ValidationError:
        refreshed = None
    finally:
        site.services.db.close()
    assert refreshed is None  # every session of the account ended


def test_reset_at_a_prompt_asks_twice(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter([NEW, NEW + "typo"])
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": next(answers))
    where = ("--data-dir", str(data_dir))
    code, _, err = run(capsys, monkeypatch, Terminal(), "admin", "reset-password", "admin", *where)
    assert code == 1 and "differ" in err
    answers = iter([NEW, NEW])
    code, _, err = run(capsys, monkeypatch, Terminal(), "admin", "reset-password", "admin", *where)
    assert code == 0, err
    assert "access_token" in grant(data_dir, NEW)


@pytest.mark.parametrize("flag", ["--password", "--new-password", "--admin-password"])
def test_a_password_is_never_taken_from_the_command_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(
            capsys,
            monkeypatch,
            io.StringIO(""),
            "admin",
            "reset-password",
            "admin",
            flag,
            NEW,
            "--data-dir",
            str(data_dir),
        )
    assert exited.value.code == 2


def test_the_policy_applies(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run(
        capsys,
        monkeypatch,
        io.StringIO("password1\n"),
        "admin",
        "reset-password",
        "admin",
        "--data-dir",
        str(data_dir),
    )
    assert code == 1 and COMMON in err
    code, _, err = run(
        capsys,
        monkeypatch,
        io.StringIO(NEW),
        "admin",
        "reset-password",
        "nobody",
        "--data-dir",
        str(data_dir),
    )
    assert code == 1 and "nobody" in err


async def test_reset_and_unlock_a_user(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import Api
    from tests.tenants import new_tenant

    site = new_site(data_dir)
    tenant = await new_tenant(site, Api(None))  # type: ignore[arg-type]
    user_id = await tenant.add_user("lockedout")
    for _ in range(10):
        await site.services.signin.throttle.failed(f"user:{user_id}", "192.0.2.1")
    site.services.db.close()
    login = {"username": "lockedout", "client_id": "clinic"}
    with pytest.raises(TooManyAttempts):
        await asyncio.to_thread(grant, data_dir, PASSWORD, **login)

    where = ("--data-dir", str(data_dir), "--org", "clinic")
    code, out, err = await asyncio.to_thread(
        run, capsys, monkeypatch, io.StringIO(""), "admin", "unlock", "LockedOut", *where
    )
    assert code == 0, err
    assert (
        "lifted 2 sign-in block(s) of user lockedout" in out
    )  # the pair and the account-wide count
    assert "access_token" in await asyncio.to_thread(grant, data_dir, PASSWORD, **login)

    code, out, err = await asyncio.to_thread(
        run,
        capsys,
        monkeypatch,
        io.StringIO(NEW + "\n"),
        "admin",
        "reset-password",
        "lockedout@clinic.test",
        *where,
    )
    assert code == 0, err
    reply = await asyncio.to_thread(grant, data_dir, NEW, **login)
    assert reply["challenge"] == "NEW_PASSWORD_REQUIRED"  # they choose their own now


def test_create_org_reads_the_admin_password_from_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(
        capsys,
        monkeypatch,
        io.StringIO("clinic-admin-pass\n"),
        "admin",
        "create-org",
        "--data-dir",
        str(tmp_path / "data"),
        "--name",
        "Clinic One",
        "--alias",
        "clinic1",
        "--admin-email",
        "a@b.test",
    )
    assert code == 0, err
    assert "created organization" in out


def test_an_ignored_admin_password_is_logged(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="edge"):
        site = new_site(data_dir)  # the template site has its staff account
        site.services.db.close()
    assert first_staff.IGNORED in caplog.text


def test_a_busy_port_leaves_nothing_behind(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        command = [sys.executable, "-m", "edge", "serve", "--data-dir", str(tmp_path / "data")]
        done = subprocess.run(
            [*command, "--port", port], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 1 and "in use" in done.stderr
    assert not (tmp_path / "data").exists()
    assert "password:" not in done.stdout
