"""edge: the on-prem identity, data, files and device-management server."""

INTERFACE_VERSION = "2.3.18"
BUILD_VERSION = "0.1.0"
