"""The multiplexing relay for containers with python3 (the protocol is in docs/port-forward.md).

One process per (pod, container) carries every connection of a forward. Targets arrive in OPEN
frames, never on the command line; every frame is checked, payload is only copied, and a
malformed frame ends the relay with exit code 8 and one line on stderr. Threads: the main one
reads frames from stdin and never blocks on a socket or on stdout; each stream has a writer
(connect, then queue -> socket, returning window credit) and a reader (socket -> stdout, only
while it has credit, so a slow reader on one stream never stalls another).
"""

from __future__ import annotations

MUX_SCRIPT = r"""
import collections, os, socket, struct, sys, threading
H = struct.Struct("!BII"); MAXP = 262144; WIN = 4194304; MAXWIN = 1 << 30
HOSTCHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:%-")
olock = threading.Lock(); slock = threading.Lock(); streams = {}
def fail(why):
    try:
        sys.stderr.write("kwin-relay: protocol error: %s\n" % why); sys.stderr.flush()
    finally:
        os._exit(8)
def emit(kind, sid, payload=b""):
    head = H.pack(kind, sid, len(payload))
    with olock:
        try:
            done = os.writev(1, (head, payload))
            if done < 9 + len(payload):
                rest = memoryview(head + payload)[done:]
                while rest:
                    rest = rest[os.write(1, rest):]
        except OSError:
            os._exit(0)
class S:
    def __init__(s, sid, udp):
        s.sid, s.udp, s.sock, s.dead, s.rdone, s.wdone = sid, udp, None, False, False, False
        s.q, s.cv, s.credit, s.rwin = collections.deque(), threading.Condition(), WIN, WIN
def finish(s, code, why=""):
    with slock:
        if streams.get(s.sid) is not s:
            return
        del streams[s.sid]
    with s.cv:
        s.dead = True; s.cv.notify_all()
    if code is not None:
        emit(5, s.sid, bytes((code,)) + why.encode("utf-8", "replace")[:256])
    if s.sock is not None:
        try:
            s.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.sock.close()
def half(s, which):
    with s.cv:
        setattr(s, which, True); both = s.rdone and s.wdone
    if both:
        finish(s, 0)
def reader(s):
    sock = s.sock
    while True:
        with s.cv:
            while not s.udp and s.credit <= 0 and not s.dead:
                s.cv.wait()
            if s.dead:
                return
            size = 65535 if s.udp else min(s.credit, MAXP)
        try:
            data = sock.recv(size)
        except OSError as e:
            if s.udp and isinstance(e, ConnectionRefusedError):
                continue
            finish(s, 4, str(e)); return
        if s.udp:
            emit(3, s.sid, data); continue
        if not data:
            emit(4, s.sid); half(s, "rdone"); return
        with s.cv:
            s.credit -= len(data)
        emit(3, s.sid, data)
def writer(s, host, port):
    try:
        if s.udp:
            family, kind, proto, _, addr = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0]
            sock = socket.socket(family, kind, proto); sock.connect(addr)
        else:
            sock = socket.create_connection((host, port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except socket.gaierror:
        finish(s, 2, "cannot resolve host"); return
    except ConnectionRefusedError:
        finish(s, 1, "connection refused"); return
    except OSError as e:
        finish(s, 3, str(e)); return
    with s.cv:
        s.sock = sock; dead = s.dead
    if dead:
        sock.close(); return
    emit(2, s.sid)
    threading.Thread(target=reader, args=(s,), daemon=True).start()
    while True:
        with s.cv:
            while not s.q and not s.dead:
                s.cv.wait()
            if s.dead:
                return
            item = s.q.popleft()
        if item is None:
            if not s.udp:
                try:
                    sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                half(s, "wdone")
            return
        try:
            if s.udp:
                sock.send(item)
            else:
                sock.sendall(item)
        except OSError as e:
            if s.udp:
                continue
            finish(s, 4, str(e)); return
        if not s.udp:
            with s.cv:
                s.rwin += len(item)
            emit(6, s.sid, struct.pack("!I", len(item)))
def handle(kind, sid, p):
    if sid == 0:
        fail("stream 0")
    if kind == 1:
        if len(p) < 4:
            fail("short OPEN")
        proto, port = struct.unpack_from("!BH", p); host = bytes(p[3:])
        if proto not in (6, 17) or port == 0 or len(host) > 253 or not host or not HOSTCHARS.issuperset(host):
            fail("invalid OPEN")
        s = S(sid, proto == 17)
        with slock:
            if sid in streams:
                fail("stream id in use")
            streams[sid] = s
        threading.Thread(target=writer, args=(s, host.decode("ascii"), port), daemon=True).start()
        return
    s = streams.get(sid)
    if kind == 3:
        if s is None:
            return
        with s.cv:
            if not s.udp:
                if len(p) > s.rwin:
                    fail("DATA beyond the window")
                s.rwin -= len(p)
                if not p:
                    return
            elif len(s.q) > 4096:
                return
            s.q.append(p); s.cv.notify()
    elif kind == 4:
        if p:
            fail("EOF with a payload")
        if s is not None:
            with s.cv:
                s.q.append(None); s.cv.notify()
    elif kind == 5:
        if not 1 <= len(p) <= 257 or p[0] > 6:
            fail("malformed CLOSE")
        if s is not None:
            finish(s, None)
    elif kind == 6:
        if len(p) != 4:
            fail("malformed WINDOW")
        (inc,) = struct.unpack("!I", p)
        if not 1 <= inc <= MAXWIN:
            fail("WINDOW out of range")
        if s is not None:
            with s.cv:
                s.credit += inc
                if s.credit > MAXWIN:
                    fail("window overflow")
                s.cv.notify_all()
    else:
        fail("unexpected frame type %d" % kind)
emit(0, 0, b"kwin-mux 1")
buf = b""
while True:
    chunk = os.read(0, 1048576)
    if not chunk:
        break
    view = memoryview(buf + chunk if buf else chunk)
    off = 0
    while len(view) - off >= 9:
        kind, sid, n = H.unpack_from(view, off)
        if kind not in (1, 3, 4, 5, 6):
            fail("unexpected frame type %d" % kind)
        if n > MAXP:
            fail("frame too long")
        if len(view) - off - 9 < n:
            break
        handle(kind, sid, view[off + 9:off + 9 + n]); off += 9 + n
    buf = bytes(view[off:])
if buf:
    fail("truncated frame")
os._exit(0)
""".strip()
