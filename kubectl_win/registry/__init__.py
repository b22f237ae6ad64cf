"""The one registry access layer: reads manifests and config blobs from OCI/Docker registries.

Why our own client on the standard library rather than oras-py (the maintained Python registry client): oras-py
0.2 fails where users are: its token backend mistakes a Basic challenge's realm for a URL, keeps one token per
client (the second repository of a run gets 401), ignores DOCKER_CONFIG and its credential helpers, and its
import (requests and more) would land on every registry command's start-up. `requests` underneath also lets
REQUESTS_CA_BUNDLE override the verification a caller asks for. What this command needs is small (GET manifests
and blobs, the Bearer/Basic dance with one token per scope, Docker's credential lookup, kept-alive connections
with a per-registry limit), so it is written here on http.client and ssl, and imported only by the commands that
read a registry (never by `--help`, TAB completion or offline commands).

Modules: reference (names), media (manifest types), challenge (WWW-Authenticate), credentials
(config.json, helpers, pull secrets), transport (HTTP, TLS, proxies), client (resolution).
"""
