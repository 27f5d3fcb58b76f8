"""`ordo serve` killed with SIGKILL at N moments (seeded) during ingest by
four concurrent clients: after each restart the clients retry what was not
acknowledged; at the end every step acknowledged with a 2xx is in the
ledger with its digest, PRAGMA integrity_check is ok, and the retried
requests created no duplicates or conflicts.

  python3 crash_server.py ORDO DIR CRASHES SEED   (prints "N passed, N failed")
"""
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

ordo, folder, crashes, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
db = os.path.join(folder, "serve.db")
rng = random.Random(seed)
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
url = f"http://127.0.0.1:{port}"
token = subprocess.run([ordo, "token", "create", "--role", "writer", "--db", db], check=True,
                       capture_output=True, text=True).stdout.strip()


def start():
    proc = subprocess.Popen([ordo, "serve", "--db", db, "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()  # the bound address: it is listening
    if not re.search(r"http://", line):
        raise SystemExit("ordo serve did not start: " + line)
    return proc


def post(path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read())


def digest(step):
    return f"{step:032x}{step * 7919 % 2**64:032x}"


server = start()
status, recipe = post("/api/recipes", {"name": "crash", "lanes": 4, "global_batch": 8})
post("/api/runs", {"name": "ingest", "recipe_id": recipe["id"], "world_size": 1})

CLIENTS, REQUESTS, PER = 4, 60, 100
acknowledged = set()
lock = threading.Lock()
retries = [0]


def client(c):
    for r in range(REQUESTS):
        first = (c * REQUESTS + r) * PER + 1
        body = {"steps": [{"step": s, "batch_digest": digest(s)} for s in range(first, first + PER)]}
        while True:
            try:
                code, _ = post("/api/runs/ingest/steps", body)
                if 200 <= code < 300:
                    with lock:
                        acknowledged.update(range(first, first + PER))
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                with lock:
                    retries[0] += 1
                time.sleep(0.02)  # the server is being restarted: try again


threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
for t in threads:
    t.start()
for _ in range(crashes):
    time.sleep(rng.uniform(0.02, 0.25))  # a random moment of the ingest
    server.send_signal(signal.SIGKILL)
    server.wait()
    server = start()
for t in threads:
    t.join()
server.terminate()
server.wait()

passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    passed, failed = passed + ok, failed + (not ok)


con = sqlite3.connect(db)
check("integrity_check is ok after %d kills" % crashes,
      con.execute("PRAGMA integrity_check").fetchone()[0] == "ok")
rows = dict(con.execute("SELECT key & 1099511627775, hex(batch_digest) FROM steps WHERE key >> 40 = "
                        "(SELECT id FROM runs WHERE name = 'ingest')").fetchall())
total = CLIENTS * REQUESTS * PER
missing = [s for s in acknowledged if s not in rows]
wrong = [s for s in acknowledged if s in rows and rows[s].lower() != digest(s)]
check(f"every acknowledged step is in the ledger ({len(acknowledged)} of {total})",
      not missing and not wrong and len(acknowledged) == total,
      f"{len(missing)} missing, {len(wrong)} wrong")
conflicts = con.execute("SELECT count(*) FROM events WHERE kind = 'conflict'").fetchone()[0]
count = con.execute("SELECT step_count FROM runs WHERE name = 'ingest'").fetchone()[0]
check(f"retried requests ({retries[0]} retries) made no duplicates or conflicts",
      conflicts == 0 and len(rows) == total and count == total,
      f"{conflicts} conflicts, {len(rows)} rows, step_count {count}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
