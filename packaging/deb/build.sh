#!/usr/bin/env bash
# Build the Debian package of the edge executable: dist/edge_<version>_<arch>.deb, with
# dpkg-deb --root-owner-group (every file root's, no fakeroot needed).
#   EDGE_BINARY  the executable to package (default dist/edge, from `make binary`)
#   DEB_VERSION  the package version (default edge's BUILD_VERSION and revision 1: 0.1.0-1)
#   DEB_OUT      the folder the .deb is written to (default dist)
#   DEB_STAGE    the folder the package tree is laid out in (default build/deb)
# /etc/edge/edge.toml is rendered from edge/kernel/config.py's declarations (edge/kernel/config_template.py).
set -euo pipefail
umask 022
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-.venv/bin/python}"
BINARY="${EDGE_BINARY:-dist/edge}"
VERSION="${DEB_VERSION:-$("$PYTHON" -c 'import edge; print(edge.BUILD_VERSION)')-1}"
ARCH="${DEB_ARCH:-$(dpkg --print-architecture)}"
MAINTAINER="${DEB_MAINTAINER:-edge maintainers <maintainers@edge.example.org>}"
OUT="${DEB_OUT:-dist}"
STAGE="${DEB_STAGE:-build/deb}/edge_${VERSION}_${ARCH}"
[ -x "$BINARY" ] || { echo "no executable at $BINARY: run make binary first" >&2; exit 1; }

debian_changelog() {  # one entry: edge's own changes are in changelog.gz (CHANGELOG.md)
    local when
    when="$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
    printf 'edge (%s) unstable; urgency=medium\n\n' "$VERSION"
    printf '  * The edge executable %s; its changes are in changelog.gz.\n\n' "${VERSION%-*}"
    printf ' -- %s  %s\n' "$MAINTAINER" "$when"
}

md5sums() {  # of every file but the conffiles, which dpkg tracks itself
    (cd "$STAGE" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' \
        | sort -z | xargs -0 md5sum)
}

rm -rf "$STAGE"
DOC="$STAGE/usr/share/doc/edge"
install -D -m 0755 "$BINARY" "$STAGE/usr/bin/edge"
install -d "$STAGE/lib/systemd/system" "$STAGE/etc/edge" "$DOC/docs" "$STAGE/DEBIAN" \
    "$STAGE/usr/share/lintian/overrides"
install -m 0644 packaging/edge.service packaging/edge-backup.service \
    packaging/edge-backup.timer "$STAGE/lib/systemd/system/"
"$PYTHON" -c 'from edge.kernel.config_template import packaged; print(packaged(), end="")' \
    > "$STAGE/etc/edge/edge.toml"
chmod 0644 "$STAGE/etc/edge/edge.toml"
install -m 0644 README.md "$DOC/"
install -m 0644 docs/*.md "$DOC/docs/"
install -m 0644 packaging/deb/copyright "$DOC/"
gzip -9n < CHANGELOG.md > "$DOC/changelog.gz"
debian_changelog | gzip -9n > "$DOC/changelog.Debian.gz"
chmod 0644 "$DOC/changelog.gz" "$DOC/changelog.Debian.gz"
install -d "$STAGE/usr/share/man/man1"
gzip -9n < packaging/deb/edge.1 > "$STAGE/usr/share/man/man1/edge.1.gz"
chmod 0644 "$STAGE/usr/share/man/man1/edge.1.gz"
install -m 0644 packaging/deb/lintian-overrides "$STAGE/usr/share/lintian/overrides/edge"

install -m 0755 packaging/deb/preinst packaging/deb/postinst packaging/deb/prerm \
    packaging/deb/postrm "$STAGE/DEBIAN/"
install -m 0644 packaging/deb/conffiles "$STAGE/DEBIAN/"
md5sums > "$STAGE/DEBIAN/md5sums"
SIZE="$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)"
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@MAINTAINER@|$MAINTAINER|" \
    -e "s|@SIZE@|$SIZE|" packaging/deb/control.in > "$STAGE/DEBIAN/control"

mkdir -p "$OUT"
dpkg-deb --root-owner-group --build "$STAGE" "$OUT/edge_${VERSION}_${ARCH}.deb"
