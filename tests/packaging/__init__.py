"""The Debian package: its files (everyday tests) and its install, upgrade and purge (long)."""
