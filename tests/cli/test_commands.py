"""The `edge` command line: version, configuration errors and precedence, init, admin create-org."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import apsw
import pytest

from edge import cli
from edge.app import create_app
from edge.kernel import config
from edge.kernel.config import ConfigError, Secret, load, settings_table
from tests.conftest import Api
from tests.factory import new_site
from tests.ports import free_port

ORG_PASSWORD = "clinic-admin-pass"
REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_process(*argv: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """The real program; the autouse fixture has already removed EDGE_* from os.environ.
    The MQTT listeners are off: tests run side by side and must not all claim 1883."""
    command = [sys.executable, "-m", "edge", *argv]
    no_mqtt = {
        "EDGE_MQTT_PORT": "0",
        "EDGE_MQTT_TLS_PORT": "0",
        "EDGE_MQTT_WS_PORT": "0",
        "EDGE_MQTT_WSS_PORT": "0",
    }
    env = {**os.environ, **no_mqtt}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


# -- version -----------------------------------------------------------------------------
def test_version_prints_interface_and_build(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "version")
    assert code == 0 and err == ""
    assert "2.3.18" in out and "0.1.0" in out


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 2 and "serve" in out


# -- bad configuration: exit 2 and one line naming the setting -----------------------------
CONFIG_FILES = {
    "unknown.toml": "port = 8081\nlisten_port = 8082\n",
    "bad-value.toml": 'log_format = "xml"\n',
    "broken.toml": "port = [\n",
}
BAD_CONFIG = [
    pytest.param(["--port", "abc"], {}, "port", id="flag-not-a-number"),
    pytest.param(["--port", "70000"], {}, "port", id="flag-out-of-range"),
    pytest.param([], {"EDGE_PORT": "0"}, "EDGE_PORT", id="env-port-zero"),
    pytest.param([], {"EDGE_LOG_LEVEL": "loud"}, "log_level", id="env-bad-choice"),
    pytest.param([], {"EDGE_SHUTDOWN_TIMEOUT": "-1"}, "shutdown_timeout", id="env-negative"),
    pytest.param(["--config", "{tmp}/unknown.toml"], {}, "listen_port", id="file-unknown-key"),
    pytest.param(["--config", "{tmp}/bad-value.toml"], {}, "log_format", id="file-bad-value"),
    pytest.param(["--config", "{tmp}/broken.toml"], {}, "broken.toml", id="file-not-toml"),
    pytest.param(["--config", "{tmp}/a-folder"], {}, "a-folder", id="file-is-a-folder"),
    pytest.param(["--config", "{tmp}/missing.toml"], {}, "missing.toml", id="file-missing"),
    pytest.param([], {"EDGE_CONFIG": "{tmp}/missing.toml"}, "missing.toml", id="env-file-missing"),
    pytest.param([], {"EDGE_ADMIN_PASSWORD": "short"}, "admin_password", id="env-weak-password"),
]


@pytest.mark.parametrize(("flags", "env", "named"), BAD_CONFIG)
def test_bad_configuration_exits_2_with_one_line(
    flags: list[str],
    env: dict[str, str],
    named: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for file_name, text in CONFIG_FILES.items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / "a-folder").mkdir()
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    data_dir = tmp_path / "data"
    argv = [flag.format(tmp=tmp_path) for flag in flags]
    code, out, err = run(capsys, "init", "--data-dir", str(data_dir), *argv)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("edge: ") and named in err
    assert "First start" not in out


def test_bad_port_stops_the_real_serve_command(tmp_path: Path) -> None:
    done = run_process("serve", "--data-dir", str(tmp_path / "data"), "--port", "abc")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "edge: invalid setting port (--port): must be a whole number from 1 to 65535"
    ]
    assert not (tmp_path / "data").exists()


PORT_SETTINGS = ("port", "mqtt_port", "mqtt_tls_port", "mqtt_ws_port", "mqtt_wss_port")


@pytest.mark.parametrize("busy_setting", PORT_SETTINGS)
def test_a_busy_port_on_the_first_start_makes_nothing(busy_setting: str, tmp_path: Path) -> None:
    """Every listener is bound before anything is created: no database, keys, CA or
    staff password (which would then belong to nobody) when any port is taken."""
    data_dir = tmp_path / "data"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        ports = {name: taken if name == busy_setting else free_port() for name in PORT_SETTINGS}
        where = ["--data-dir", str(data_dir)]
        where += [arg for name, port in ports.items() for arg in (_flag(name), str(port))]
        done = run_process("serve", *where)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"edge: {busy_setting} {taken}: address already in use\n"
    assert not data_dir.exists()
    assert done.stdout == ""  # no banner, no password


def _flag(setting: str) -> str:
    return "--" + setting.replace("_", "-")


def test_unusable_data_folder_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    code, _, err = run(capsys, "init", "--data-dir", str(tmp_path / "a-file" / "data"))
    assert code == 1
    assert err.count("\n") == 1 and "a-file" in err


# -- precedence: defaults < file < env < flags -------------------------------------------
def test_load_layers_in_order(tmp_path: Path) -> None:
    file = tmp_path / "edge.toml"
    file.write_text('host = "10.0.0.1"\nport = 1111\nlog_level = "debug"\nlog_format = "json"\n')
    env = {"EDGE_PORT": "2222", "EDGE_LOG_LEVEL": "warning", "UNRELATED": "x"}
    flags = {"port": "3333", "host": None, "log_format": None}
    loaded = load(flags, env, file)
    assert loaded.port == 3333  # flag beats env and file
    assert loaded.log_level == "warning"  # env beats file
    assert loaded.host == "10.0.0.1" and loaded.log_format == "json"  # file beats default
    assert loaded.shutdown_timeout == 10 and loaded.security_languages == "en"  # defaults


def test_load_defaults() -> None:
    loaded = load()
    assert (loaded.host, loaded.port, loaded.data_dir) == ("127.0.0.1", 8080, Path("edge-data"))
    assert loaded.base_url == "http://127.0.0.1:8080"
    assert loaded.contact == "mailto:admin@localhost"


def test_load_names_the_layer_of_a_bad_value(tmp_path: Path) -> None:
    file = tmp_path / "edge.toml"
    file.write_text("port = 0\n")
    with pytest.raises(ConfigError, match=r"port in .*edge\.toml"):
        load(config_file=file)
    with pytest.raises(ConfigError, match=r"port \(EDGE_PORT\)"):
        load(env={"EDGE_PORT": "x"})
    with pytest.raises(ConfigError, match=r"port \(--port\)"):
        load(flags={"port": "x"})


def test_base_url_for_a_lan_bind_and_a_public_url() -> None:
    assert load(env={"EDGE_HOST": "0.0.0.0", "EDGE_PORT": "9000"}).base_url == (
        "http://127.0.0.1:9000"
    )
    assert load(flags={"public_url": "https://edge.lan/"}).base_url == "https://edge.lan"


def test_admin_password_never_shows() -> None:
    loaded = load(env={"EDGE_ADMIN_PASSWORD": "very-secret-value"})
    assert isinstance(loaded.admin_password, Secret)
    assert "very-secret-value" not in repr(loaded) and "very-secret-value" not in str(loaded)
    assert loaded.admin_password.reveal() == "very-secret-value"


def test_cli_precedence_decides_the_data_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "edge.toml"
    file.write_text(f'data_dir = "{tmp_path / "from-file"}"\nport = 9001\n')
    monkeypatch.setenv("EDGE_CONFIG", str(file))
    monkeypatch.setenv("EDGE_ADMIN_PASSWORD", "env-password-1")
    code, out, _ = run(capsys, "init")
    assert code == 0 and (tmp_path / "from-file" / "edge.db").exists()
    monkeypatch.setenv("EDGE_DATA_DIR", str(tmp_path / "from-env"))
    assert run(capsys, "init")[0] == 0 and (tmp_path / "from-env" / "edge.db").exists()
    code, out, _ = run(capsys, "init", "--data-dir", str(tmp_path / "from-flag"))
    assert code == 0 and str(tmp_path / "from-flag") in out
    assert (tmp_path / "from-flag" / "edge.db").exists()


# -- settings declared once --------------------------------------------------------------
def test_every_config_field_is_a_declared_setting() -> None:
    assert [f.name for f in dataclasses.fields(config.Config)] == [s.name for s in config.SETTINGS]


def test_settings_table_lists_every_setting() -> None:
    table = settings_table()
    for setting in config.SETTINGS:
        row = next(line for line in table.splitlines() if f"`{setting.name}`" in line)
        assert f"`{setting.flag}`" in row and f"`{setting.env}`" in row and setting.help in row


def test_readme_has_the_settings_table() -> None:
    assert settings_table() in (REPO / "README.md").read_text()


# -- init --------------------------------------------------------------------------------
def test_init_prepares_a_folder_and_shows_a_generated_password_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    code, out, _ = run(capsys, "init", "--data-dir", str(data_dir))
    assert code == 0
    password = re.findall(r"password: (\S+)", out)
    assert len(password) == 1
    for name in ("keys", "ca"):
        assert (data_dir / name).stat().st_mode & 0o777 == 0o700
    for name in ("blobs", "outbox"):
        assert (data_dir / name).is_dir()
    assert (data_dir / "initial-admin.txt").stat().st_mode & 0o777 == 0o600
    assert list((data_dir / "keys").glob("signing-*.pem"))
    _assert_closed_cleanly(data_dir)
    code, out, _ = run(capsys, "init", "--data-dir", str(data_dir))
    assert code == 0 and "password" not in out.replace(str(data_dir), "")
    assert password[0] in (data_dir / "initial-admin.txt").read_text()


def _assert_closed_cleanly(data_dir: Path) -> None:
    wal = data_dir / "edge.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    conn = apsw.Connection(str(data_dir / "edge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


# -- admin create-org --------------------------------------------------------------------
def create_org(
    capsys: pytest.CaptureFixture[str],
    data_dir: Path,
    password: str = ORG_PASSWORD,
    **given: str,
) -> Any:
    """The admin's password comes on standard input (never on the command line)."""
    args = {"name": "Clinic One", "alias": "clinic1", "admin-email": "a@b.test", **given}
    argv = ["admin", "create-org", "--data-dir", str(data_dir)]
    for key, value in args.items():
        argv += [f"--{key}", value]
    with mock.patch("sys.stdin", io.StringIO(f"{password}\n")):
        return run(capsys, *argv)


async def test_create_org_then_its_admin_signs_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aiohttp_client: Any
) -> None:
    data_dir = tmp_path / "data"
    # The command runs its own event loop, so it cannot run on this test's loop.
    code, out, err = await asyncio.to_thread(create_org, capsys, data_dir)
    assert code == 0, err
    found = re.search(r"created organization (\S+) with admin a@b\.test", out)
    assert found is not None, out
    org_id = found[1]
    assert "password: " in out  # the staff account was made on this first use: shown once
    told = re.search(r"POST (\S+)/v2/auth/token, form fields:\n  (.*)\n", out)
    assert told is not None, out
    assert told[1] == "http://127.0.0.1:8080"  # the base URL of this configuration
    form = dict(field.split("=", 1) for field in told[2].split())
    assert form == {
        "grant_type": "password",
        "username": "a@b.test",
        "password": "<theirs>",
        "client_id": "clinic1",
    }
    site = new_site(data_dir)
    try:
        api = Api(await aiohttp_client(create_app(site)))
        status, _ = await api.call("POST", "/v2/auth/token", data=form | {"password": ORG_PASSWORD})
        assert status == 201  # exactly the fields it printed
        for client_id in ("clinic1", "CLINIC1", org_id):
            token = await api.token("a@b.test", ORG_PASSWORD, client_id=client_id)
            status, _ = await api.call("GET", "/v2/orgs", token)
            assert status == 403  # an org admin, not staff
        status, body = await api.call(
            "POST",
            "/v2/auth/token",
            data={"grant_type": "password", "client_id": "clinic1", "username": "a@b.test"}
            | {"password": "wrong-password"},
        )
        assert status == 400 and set(body) == {"message"}
        staff = await api.token(password=_staff_password(data_dir))
        status, org = await api.call("GET", f"/v2/orgs/{org_id}", staff)
        assert status == 200
        assert (org["org"]["name"], org["org"]["alias"]) == ("Clinic One", "clinic1")
    finally:
        site.services.db.close()


def _staff_password(data_dir: Path) -> str:
    text = (data_dir / "initial-admin.txt").read_text()
    found = re.search(r"password: (\S+)", text)
    assert found is not None
    return found[1]


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"name": "Clinic Two"}, "clinic1"),  # the alias of the first org
        ({"name": "Bad<name>", "alias": "other"}, "name"),
        ({"name": "Clinic Three", "alias": "third", "password": "short"}, "password"),
        ({"name": "Clinic Four", "alias": "fourth", "admin-email": "not-mail"}, "email"),
    ],
)
def test_create_org_refusals_exit_1(
    given: dict[str, str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    assert create_org(capsys, data_dir)[0] == 0
    code, out, err = create_org(capsys, data_dir, **given)
    assert code == 1, (out, err)
    assert err.startswith("edge: ") and named in err and err.count("\n") == 1
    assert "created organization" not in out
    conn = apsw.Connection(str(data_dir / "edge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("SELECT count(*) FROM orgs").fetchall() == [(1,)]
    finally:
        conn.close()


def test_create_org_takes_no_password_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ps` shows every argument: the flag is gone (argparse refuses it, exit code 2)."""
    with pytest.raises(SystemExit) as exited:
        create_org(capsys, tmp_path / "data", **{"admin-password": ORG_PASSWORD})
    assert exited.value.code == 2
    assert not (tmp_path / "data").exists()
