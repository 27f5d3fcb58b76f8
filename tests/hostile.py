"""Hostile HTTP against a real ordo serve: slow clients (slowloris),
oversized headers and bodies, malformed chunked encoding, path traversal
on static URLs, and 10,000 random malformed requests. The server stays up,
its memory stays bounded and other clients keep being served.

  python3 hostile.py ORDO DIR     (prints "N passed, N failed")
"""
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

ordo, folder = sys.argv[1], sys.argv[2]
db = os.path.join(folder, "hostile.db")
proc = subprocess.Popen([ordo, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
match = re.search(r"http://127\.0\.0\.1:(\d+)", proc.stdout.readline())
port = int(match.group(1))
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    passed, failed = passed + bool(ok), failed + (not ok)


def healthy(timeout=2.0):
    """Another client (from 127.0.0.2: the attacker's address has its own
    connection limit) is answered, and quickly."""
    start = time.monotonic()
    try:
        s = socket.socket()
        s.settimeout(timeout)
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = s.recv(4096)
        s.close()
        return answer.startswith(b"HTTP/1.1 200") and time.monotonic() - start < timeout
    except OSError:
        return False


def rss_kb():
    with open(f"/proc/{proc.pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def raw(data, read=True, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if not read:
            return s
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out
    except OSError:
        return b""
    finally:
        if read:
            s.close()


def status_of(answer):
    m = re.match(rb"HTTP/1\.[01] (\d+)", answer)
    return int(m.group(1)) if m else 0


check("healthy at the start", healthy())
baseline = rss_kb()

# Slowloris: 150 connections each trickling an unfinished request.
slow = []
for i in range(150):
    try:
        slow.append(raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", read=False))
    except OSError:
        break
for _ in range(3):
    for s in slow:
        try:
            s.send(b"X-a: b\r\n")
        except OSError:
            pass
check(f"other clients served while {len(slow)} slow clients hold connections", healthy())
for s in slow:
    s.close()


def local_client(timeout=2.0):
    """A client from 127.0.0.1 itself, the attacker's own address: answered
    in time? Returns the seconds it took, or None."""
    start = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = s.recv(4096)
        s.close()
        took = time.monotonic() - start
        return took if answer.startswith(b"HTTP/1.1 200") and took < timeout else None
    except OSError:
        return None


# Trickled headers from one address: 256 connections from 127.0.0.1 (its
# whole allowance), each sending one header line every 0.5 s; a new client
# from 127.0.0.1 too is served within 2 s, again and again.
trickling = []
for i in range(256):
    try:
        trickling.append(raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", read=False))
    except OSError:
        break
served = []
for _ in range(4):
    for s in trickling:
        try:
            s.send(b"X-a: b\r\n")
        except OSError:
            pass
    served.append(local_client())
    time.sleep(0.5)  # the attacker's pace, not a synchronisation
ok = all(t is not None for t in served)
check(f"a new client from the address of {len(trickling)} trickling connections is served "
      f"within 2 s ({', '.join('-' if t is None else '%.2f s' % t for t in served)})", ok)
for s in trickling:
    s.close()


def trickle_until_closed(at_port, limit, head=b"", text=None):
    """Sends `head` at once, then `text` (by default a request's headers)
    one byte per 0.5 s; the seconds until the server closed the connection,
    or None when it was still open after `limit` seconds."""
    s = socket.create_connection(("127.0.0.1", at_port), timeout=5)
    if head:
        s.sendall(head)
    s.setblocking(False)
    if text is None:
        text = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-a: b\r\n" * 1000
    start = time.monotonic()
    try:
        for byte in text:
            if time.monotonic() - start > limit:
                return None
            try:
                s.send(bytes([byte]))
                if s.recv(4096) == b"":
                    return time.monotonic() - start
            except BlockingIOError:
                pass
            except OSError:
                return time.monotonic() - start
            time.sleep(0.5)  # the attacker's pace, not a synchronisation
    finally:
        s.close()
    return None


# A deadline for the headers that trickled bytes do not extend (a server
# started with --header-deadline 2; libmicrohttpd's own timeout restarts
# with every byte).
deadline_flags = os.environ.get("HOSTILE_DEADLINE_FLAGS", "--header-deadline 2").split()
quick = subprocess.Popen([ordo, "serve", "--db", db, "--listen", "127.0.0.1:0"] + deadline_flags,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
quick_port = int(re.search(r"http://127\.0\.0\.1:(\d+)", quick.stdout.readline()).group(1))
closed = trickle_until_closed(quick_port, 12)
check("a connection trickling its headers a byte per 0.5 s is closed at its 2 s deadline (%s)"
      % ("after %.1f s" % closed if closed is not None else "still open after 12 s"),
      closed is not None and 1.5 <= closed <= 6, "")
# The body too: a writer that sends its headers at once and then trickles
# a 100-byte body has the same deadline (plus a second per MiB declared).
quick_token = subprocess.run([ordo, "token", "create", "--role", "writer", "--db", db],
                             capture_output=True, text=True, check=True).stdout.strip()
closed = trickle_until_closed(quick_port, 12, head=(
    "POST /api/recipes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
    "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" % quick_token).encode(),
    text=b"{" + b" " * 98 + b"}")
check("a writer trickling its body a byte per 0.5 s is closed at its deadline (%s)"
      % ("after %.1f s" % closed if closed is not None else "still open after 12 s"),
      closed is not None and 1.5 <= closed <= 6, "")
# A chunked body that passes the limit while it arrives: the 413 reaches
# the client once it has sent its body (libmicrohttpd cannot answer in the
# middle of an upload; before, the client saw the connection close).
s = socket.create_connection(("127.0.0.1", quick_port), timeout=30)
s.sendall(("POST /api/recipes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           % quick_token).encode())
piece = b"x" * (1 << 20)
try:
    for _ in range(70):
        s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
    s.sendall(b"0\r\n\r\n")
    answer = s.recv(300)
except OSError as e:
    answer = repr(e).encode()
s.close()
check("a chunked body over the limit is answered 413", answer.startswith(b"HTTP/1.1 413"),
      repr(answer[:120]))
# A read carries no body: a GET with one is refused before it is kept (a
# client needs no token to read on loopback, so its body would hold the
# budget that writers need).
answer = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n" +
             b"x" * 16)
check("a GET with a body is refused at its headers", answer.startswith(b"HTTP/1.1 400"),
      repr(answer[:80]))
quick.terminate()
quick.wait(timeout=40)

# Writes without a token on every spelling of every write route: the path
# the token check sees is the path the router dispatches, or a 400.
body = b'{"name": "sneak", "lanes": 4, "global_batch": 8}'
written = []
for route in [b"/api/recipes", b"/api/runs", b"/api/runs/x/steps", b"/api/runs/x/segments",
              b"/api/runs/x/checkpoints"]:
    for path in [b"/" + route, b"//" + route, b"/." + route, route + b"/", b"/x/.." + route,
                 route.replace(b"/api/", b"/api%2F", 1), b"/api//" + route[5:]]:
        for kind in [b"application/json", b"text/plain", b"application/x-www-form-urlencoded"]:
            answer = raw(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n"
                         b"Content-Type: " + kind + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
                         + body)
            if not 400 <= status_of(answer) < 500:
                written.append((path, kind, status_of(answer)))
check("no write without a token on 5 routes x 7 spellings x 3 content types", not written,
      repr(written[:3]))

# Oversized headers: one header of 1 MiB, and 10,000 small ones.
big = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-big: " + b"a" * (1 << 20) + b"\r\n\r\n")
check("a 1 MiB header is refused (or the connection closed)", status_of(big) in (0, 400, 413, 431))
many = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-h: v\r\n" * 10000 + b"\r\n")
check("10,000 headers are refused (or the connection closed)", status_of(many) in (0, 400, 413, 431))

# Bodies: declared too large, and a chunked body that never ends properly.
huge = raw(b"POST /api/recipes HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{")
check("a body declared over the limit gets 413", status_of(huge) == 413)
bad_chunks = [b"zz\r\nabc\r\n0\r\n\r\n", b"5\r\nab\r\n0\r\n\r\n", b"fffffffffffffffff\r\nx\r\n",
              b"-1\r\n\r\n", b"3;" + b"x" * 100000 + b"\r\nabc\r\n0\r\n\r\n"]
for body in bad_chunks:
    raw(b"POST /api/recipes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
check("malformed chunked bodies leave the server healthy", healthy())

# Path traversal on the static files.
for path in [b"/static/../../etc/passwd", b"/static/%2e%2e/%2e%2e/etc/passwd", b"/../ordo.db",
             b"/static//etc/passwd", b"/static/app.js/../../x", b"/static/\x00app.js"]:
    answer = raw(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    if status_of(answer) == 200 or b"root:" in answer:
        check(f"traversal {path!r} refused", False, answer[:80].decode("latin1"))
        break
else:
    check("path traversal attempts are refused", True)

# 10,000 random malformed requests, from a seeded generator.
rng = random.Random(2026)
pieces = [b"GET", b"POST", b"PUT", b"DELETE", b" ", b"/", b"/api/runs", b"/api/runs/x/steps",
          b"HTTP/1.1", b"HTTP/9.9", b"\r\n", b"\n", b"Host: x", b"Content-Length: ",
          b"Authorization: Bearer ", b"Transfer-Encoding: chunked", b"{", b"}", b"\x00", b"\xff",
          b"%", b"?a=", b"..", b":" * 3]
start = time.monotonic()
for i in range(10000):
    request = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
    if rng.random() < 0.3:
        request += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(request)
        s.close()
    except OSError:
        pass
    if i % 2500 == 2499 and not healthy():
        check(f"healthy after {i + 1} malformed requests", False)
        break
else:
    check("healthy after 10,000 random malformed requests (%.1f s)" % (time.monotonic() - start),
          healthy(5.0))
growth = (rss_kb() - baseline) / 1024  # measured before the heavy reads, on their own server

check(f"memory bounded: resident set grew {growth:.1f} MiB", growth < 64, f"{growth:.1f} MiB")
check("the server process is still running", proc.poll() is None)


def fetch(at_port, request, timeout):
    """(status, complete, seconds, retry, body) of one request on its own
    connection; complete: the body has the length its Content-Length
    announced; retry: it has a Retry-After header."""
    start = time.monotonic()
    data = b""
    try:
        s = socket.create_connection(("127.0.0.1", at_port), timeout=timeout)
        s.sendall(request)
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        s.close()
    except OSError:
        return 0, False, time.monotonic() - start, False, b""
    head, _, content = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?i)\r\ncontent-length: (\d+)", head)
    return (status_of(data), bool(length and int(length.group(1)) == len(content)),
            time.monotonic() - start, b"\r\nretry-after: " in head.lower(), content)


def post(at_port, token, path, value):
    data = json.dumps(value).encode()
    return fetch(at_port, b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close"
                 b"\r\nContent-Type: application/json\r\nAuthorization: Bearer " + token.encode()
                 + b"\r\nContent-Length: %d\r\n\r\n" % len(data) + data, 120)


# Heavy reads: 64 clients at once compare two runs of 1,000,000 steps that
# differ at every other step (an answer of 8 MB each) on a server of its
# own; meanwhile /healthz and a step report are answered within 1 s, and
# every answer that starts is complete (200, or 503 with Retry-After).
heavy_db = os.path.join(folder, "heavy.db")
subprocess.run([ordo, "migrate", "--db", heavy_db], stdout=subprocess.DEVNULL, check=True)
token = subprocess.run([ordo, "token", "create", "--role", "writer", "--db", heavy_db],
                       capture_output=True, text=True, check=True).stdout.strip()
heavy = subprocess.Popen([ordo, "serve", "--db", heavy_db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
heavy_port = int(re.search(r"http://127\.0\.0\.1:(\d+)", heavy.stdout.readline()).group(1))
steps = 1000000
recipe = json.loads(post(heavy_port, token, "/api/recipes",
                         {"name": "heavy", "lanes": 4, "global_batch": 8})[4])["id"]
filled = True
for name, odd in (("a", 0), ("b", 1)):
    post(heavy_port, token, "/api/runs", {"name": name, "recipe_id": recipe, "world_size": 2})
    for first in range(1, steps + 1, 10000):
        batch = [{"step": i, "batch_digest": "%064x" % (2 * i + (odd and i % 2))}
                 for i in range(first, min(first + 10000, steps + 1))]
        filled = filled and post(heavy_port, token, f"/api/runs/{name}/steps",
                                 {"steps": batch})[0] == 200
check(f"two runs of {steps} steps recorded over HTTP", filled)
results = []
compare = b"GET /api/compare?a=a&b=b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
readers = [threading.Thread(target=lambda: results.append(fetch(heavy_port, compare, 300)))
           for _ in range(64)]
for t in readers:
    t.start()
# Probed while heavy answers are still being built (checked below).
probe_health = fetch(heavy_port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                     120)
probe_write = post(heavy_port, token, "/api/runs/a/steps",
                   {"steps": [{"step": steps + 1, "batch_digest": "%064x" % 1}]})
during = sum(t.is_alive() for t in readers)
for t in readers:
    t.join()
complete = sum(1 for status, whole, _, retry, _ in results
               if whole and (status == 200 or (status == 503 and retry)))
answered = sum(1 for status, *_ in results if status == 200)
check(f"during 64 heavy reads (still running: {during}) /healthz answers in "
      f"{probe_health[2]:.2f} s and a step report in {probe_write[2]:.2f} s",
      during > 0 and probe_health[:2] == (200, True) and probe_health[2] < 1.0
      and probe_write[:2] == (200, True) and probe_write[2] < 1.0)
check(f"every heavy answer is complete: {complete} of 64 ({answered} compared, the rest 503 "
      "with Retry-After)", complete == 64 and answered >= 1)
heavy.terminate()
check("the heavy-read server stops cleanly on SIGTERM", heavy.wait(timeout=60) == 0)
proc.terminate()
check("it still stops cleanly on SIGTERM", proc.wait(timeout=40) == 0)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
