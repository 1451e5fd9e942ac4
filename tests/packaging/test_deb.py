"""The Debian package installed, upgraded, removed and purged for real with dpkg, into a
folder (`dpkg --root=DIR --force-script-chrootless`: the maintainer scripts run on this
machine with DPKG_ROOT=DIR, so they must keep to DIR), and its units checked by
`systemd-analyze verify`. A stand-in shell script takes the executable's place, so that the
test does not need `make binary`. Runs in `make test-long`, as root (dpkg --root writes
files owned by root and by the new `edge` user)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from edge.kernel.config import load
from edge.kernel.config_template import packaged

pytestmark = [pytest.mark.long, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[2]
UNITS = ("edge.service", "edge-backup.service", "edge-backup.timer")
HOST_FILES = ("/etc/passwd", "/etc/group", "/etc/shadow")
STAND_IN = """#!/bin/sh
# A stand-in for the edge executable: says which version it is.
echo "edge stand-in {version} $*"
"""


@dataclass(frozen=True)
class Packages:
    first: Path
    second: Path


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Packages:
    if os.geteuid() != 0:
        pytest.skip("dpkg --root installs files for root and the edge user: run as root")
    for tool in ("dpkg", "dpkg-deb", "useradd", "deb-systemd-helper"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: this test needs Debian's dpkg and passwd")
    out = tmp_path_factory.mktemp("debs")
    return Packages(build(out, "1.0-1"), build(out, "2.0-1"))


def build(out: Path, version: str) -> Path:
    binary = out / f"edge-{version}"
    binary.write_text(STAND_IN.format(version=version))
    binary.chmod(0o755)
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "EDGE_BINARY": str(binary),
        "DEB_VERSION": version,
        "DEB_OUT": str(out),
        "DEB_STAGE": str(out / "stage"),
    }
    script = REPO / "packaging" / "deb" / "build.sh"
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out / f"edge_{version}_{arch()}.deb"


def arch() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """An empty system for dpkg: its database and the account files useradd edits. The
    host's own account files must come out of the test unchanged."""
    folder = tmp_path / "root"
    for name in ("info", "updates", "triggers"):
        (folder / "var/lib/dpkg" / name).mkdir(parents=True)
    for name in ("status", "available"):
        (folder / "var/lib/dpkg" / name).touch()
    (folder / "var/backups").mkdir()
    etc = folder / "etc"
    etc.mkdir()
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (etc / "group").write_text("root:x:0:\n")
    (etc / "shadow").write_text("root:*:19000:0:99999:7:::\n")
    (etc / "gshadow").write_text("root:*::\n")
    host = {name: digest(Path(name)) for name in HOST_FILES}
    previous = Path("/usr/bin/edge.previous").exists()
    yield folder
    assert {name: digest(Path(name)) for name in HOST_FILES} == host
    assert Path("/usr/bin/edge.previous").exists() == previous


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def dpkg(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["dpkg", f"--root={root}", "--force-script-chrootless", "--force-depends", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def account(root: Path, name: str = "edge") -> list[str]:
    (line,) = [
        e for e in (root / "etc/passwd").read_text().splitlines() if e.startswith(name + ":")
    ]
    return line.split(":")


def run(root: Path, program: str) -> str:
    return subprocess.run([str(root / program)], capture_output=True, text=True).stdout


def links(root: Path) -> list[str]:
    systemd = root / "etc/systemd/system"
    found = [p for p in systemd.rglob("*") if p.is_symlink()] if systemd.exists() else []
    return sorted(f"{p.relative_to(systemd)} -> {os.readlink(p)}" for p in found)


def mode(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    return info.st_uid, info.st_gid, info.st_mode & 0o7777


def test_install_upgrade_remove_and_purge(packages: Packages, root: Path) -> None:
    dpkg(root, "--install", str(packages.first))
    installed(root)
    site = root / "var/lib/edge/edge.db"
    site.write_text("the site")
    config = root / "etc/edge/edge.toml"
    config.write_text(config.read_text().replace("#port = 8080", "port = 9090"))
    (root / "var/backups/edge/edge-2026-01-01T000000Z").mkdir()

    dpkg(root, "--install", str(packages.second))
    upgraded(root)
    assert site.read_text() == "the site" and load(config_file=config).port == 9090

    dpkg(root, "--remove", "edge")
    assert not (root / "usr/bin/edge").exists()
    assert not (root / "usr/bin/edge.previous").exists()
    assert site.read_text() == "the site" and config.exists()  # remove keeps site and settings
    assert not (root / "lib/systemd/system/edge.service").exists()

    out = dpkg(root, "--purge", "edge")
    assert "the backups stay in /var/backups/edge" in out
    assert not (root / "var/lib/edge").exists() and not (root / "etc/edge").exists()
    assert (root / "var/backups/edge/edge-2026-01-01T000000Z").is_dir()
    assert account(root)[0] == "edge"  # Debian leaves system users behind
    assert links(root) == []


def installed(root: Path) -> None:
    user = account(root)
    uid, gid = int(user[2]), int(user[3])
    assert user[5:] == ["/var/lib/edge", "/usr/sbin/nologin"] and 0 < uid < 1000
    assert f"edge:x:{gid}:" in (root / "etc/group").read_text()
    assert mode(root / "var/lib/edge") == (uid, gid, 0o700)
    assert mode(root / "var/backups/edge") == (uid, gid, 0o700)
    config = root / "etc/edge/edge.toml"
    assert mode(config) == (0, gid, 0o640)  # it may hold secrets: root and the edge group
    assert config.read_text() == packaged()
    assert tomllib.loads(config.read_text()) == {"data_dir": "/var/lib/edge", "log_format": "json"}
    assert "edge stand-in 1.0-1" in run(root, "usr/bin/edge")
    assert not (root / "usr/bin/edge.previous").exists()
    for doc in ("docs/operating.md", "README.md", "copyright", "changelog.Debian.gz"):
        assert (root / "usr/share/doc/edge" / doc).is_file(), doc
    assert (root / "usr/share/man/man1/edge.1.gz").is_file()
    assert links(root) == [
        "multi-user.target.wants/edge.service -> /lib/systemd/system/edge.service",
        "timers.target.wants/edge-backup.timer -> /lib/systemd/system/edge-backup.timer",
    ]


def upgraded(root: Path) -> None:
    """The new executable is in place and the old one kept: no systemd runs here to say that
    the new one started, and only that removes the old one."""
    assert "edge stand-in 2.0-1" in run(root, "usr/bin/edge")
    assert "edge stand-in 1.0-1" in run(root, "usr/bin/edge.previous")
    assert [line.split(":")[0] for line in (root / "etc/passwd").read_text().splitlines()] == [
        "root",
        "edge",
    ]
    gid = int(account(root)[3])
    assert mode(root / "etc/edge/edge.toml") == (0, gid, 0o640)
    assert len(links(root)) == 2


def test_systemd_analyze_verify_accepts_the_installed_units(
    packages: Packages, root: Path, tmp_path: Path
) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package has it)")
    dpkg(root, "--install", str(packages.first))
    units = tmp_path / "units"
    units.mkdir()
    for unit in UNITS:  # the stand-in where the units name /usr/bin/edge: verify wants it there
        text = (root / "lib/systemd/system" / unit).read_text()
        (units / unit).write_text(text.replace("/usr/bin/edge", str(root / "usr/bin/edge")))
    done = verify(*(units / unit for unit in UNITS))
    assert done.returncode == 0, done.stdout + done.stderr
    for unit in UNITS:
        assert unit not in done.stdout + done.stderr


def verify(*units: Path) -> subprocess.CompletedProcess[str]:
    """systemd-analyze verify of the units, or a skip that says why it cannot run here (it
    fails on a unit that surely is right)."""
    probe = units[0].parent / "probe.service"
    probe.write_text("[Service]\nType=oneshot\nExecStart=/bin/true\n")
    works = analyze(probe)
    if works.returncode != 0:
        pytest.skip(f"systemd-analyze cannot run in this container: {works.stderr.strip()}")
    return analyze(*units)


def analyze(*units: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=120,
    )
