"""Relays for Linux containers, using whatever the image has: python3, socat, OpenBSD nc, bash."""

from __future__ import annotations

from kubectl_win.portforward.relays import Relay
from kubectl_win.portforward.relays.posix_mux import MUX_SCRIPT

# Reads stdin with os.read (no text layer), shuts down the socket's send side on EOF, exits when
# the server closes. Exit codes follow relays.EXIT_MESSAGES.
PYTHON_SCRIPT = r"""
import os, socket, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port))
except socket.gaierror:
    sys.stderr.write("kwin-relay: cannot resolve host\n"); sys.exit(3)
except ConnectionRefusedError:
    sys.stderr.write("kwin-relay: connection refused\n"); sys.exit(4)
except OSError as e:
    sys.stderr.write("kwin-relay: connect failed: %s\n" % e); sys.exit(5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def pump_stdin():
    try:
        while True:
            data = os.read(0, 262144)
            if not data:
                break
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
threading.Thread(target=pump_stdin, daemon=True).start()
code = 0
try:
    while True:
        data = s.recv(262144)
        if not data:
            break
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
except OSError as e:
    sys.stderr.write("kwin-relay: connection reset: %s\n" % e); code = 6
os._exit(code)
""".strip()

# bash /dev/tcp: binary-safe but cannot half-close the socket (no shutdown from the shell).
BASH_SCRIPT = (
    'exec 3<>"/dev/tcp/$1/$2" || exit 4; '
    'cat <&3 & reader=$!; cat >&3; wait "$reader"'
)

# -b: socat copies 8 KiB at a time by default. -t: after EOF on either side socat lingers this long
# before exiting, both when the server closed (delaying the local EOF) and after a half-close
# (cutting off a slower answer); one second is the compromise, and why python3 is preferred.
SOCAT = Relay("socat", ("socat", "-b", "262144", "-t", "1", "-", "TCP:{host}:{port}"), host_style="socat")
# -I -S: isolated, no site-packages: a faster start and nothing from the image's environment.
PYTHON = Relay("python3", ("python3", "-I", "-S", "-c", PYTHON_SCRIPT, "{host}", "{port}"), own_exit_codes=True,
               mux_argv=("python3", "-I", "-S", "-c", MUX_SCRIPT))
NC = Relay("nc", ("nc", "-N", "{host}", "{port}"))
BASH = Relay("bash", ("bash", "-c", BASH_SCRIPT, "kwin-relay", "{host}", "{port}"), half_close=False)

# Preference order (python3 first: exact half-close semantics, no linger); the probe script below
# prints the names the container can run.
POSIX_RELAYS = (PYTHON, SOCAT, NC, BASH)

PROBE_COMMAND = [
    "sh", "-c",
    "for c in socat python3 bash; do command -v \"$c\" >/dev/null 2>&1 && echo \"$c\"; done; "
    "command -v nc >/dev/null 2>&1 && nc -h 2>&1 | grep -q -e ' -N' && echo nc; exit 0",
]
