"""What a request body can cost a real ordo serve: hostile JSON bodies of
up to 64 MiB (empty objects, empty arrays, numbers, strings, nesting) are
refused before they are parsed, the largest body accepted (640,000 lane
reports) is taken, and the server's peak RSS (VmHWM) stays under 1 GB
throughout. A server that runs out of memory while parsing answers 503,
never a 400 about malformed JSON.

  python3 hostile_memory.py ORDO DIR     (prints "N passed, N failed")
"""
import http.client
import json
import os
import re
import resource
import subprocess
import sys
import threading

ordo, folder = sys.argv[1], sys.argv[2]
db = os.path.join(folder, "memory.db")
LIMIT_KB = 1024 * 1024        # the goal: peak RSS under 1 GB
KILL_KB = 3 * 1024 * 1024 // 2  # past this the server is stopped (protects the machine)
BODY = 64 * 1024 * 1024       # the body limit
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    passed, failed = passed + bool(ok), failed + (not ok)


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(re.search(field + r":\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return 0


def serve(preexec=None):
    proc = subprocess.Popen([ordo, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=preexec)
    port = int(re.search(r"http://127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
    return proc, port


class Guard(threading.Thread):
    """Stops the server if its RSS passes KILL_KB (an unbounded parse would
    otherwise take the machine's memory); records that it did."""

    def __init__(self, proc):
        super().__init__(daemon=True)
        self.proc, self.killed, self.done = proc, 0, threading.Event()

    def run(self):
        while not self.done.wait(0.02):
            rss = status_kb(self.proc.pid, "VmRSS")
            if rss > KILL_KB:
                self.killed = rss
                self.proc.kill()
                return


def post(port, path, body, token):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        c.request("POST", path, body=body, headers={"Authorization": "Bearer " + token,
                                                     "Content-Type": "application/json"})
        r = c.getresponse()
        text = r.read().decode("utf-8", "replace")
        return r.status, text
    except OSError as e:
        return 0, str(e)
    finally:
        c.close()


def filled(head, item, tail):
    """head + item,item,... + tail, as close to the body limit as fits."""
    n = (BODY - len(head) - len(tail) + 1) // (len(item) + 1)
    return (head + ",".join([item] * n) + tail).encode()


def lane_reports(count, lanes):
    digest = "ab" * 32
    items = ",".join('{"step":%d,"lane":%d,"digest":"%s"}' % (1 + i // lanes, i % lanes, digest)
                     for i in range(count))
    return ('{"rank":0,"lanes":[' + items + "]}").encode()


subprocess.run([ordo, "migrate", "--db", db], check=True, stdout=subprocess.DEVNULL)
token = subprocess.run([ordo, "token", "create", "--role", "writer", "--db", db], check=True,
                       capture_output=True, text=True).stdout.strip()
proc, port = serve()
guard = Guard(proc)
guard.start()
status, text = post(port, "/api/recipes", b'{"name":"m","lanes":64,"global_batch":64}', token)
recipe = json.loads(text)["id"]
for name in ("mem", "oom", "two-a", "two-b"):
    body = {"name": name, "recipe_id": recipe, "world_size": 1}
    post(port, "/api/runs", json.dumps(body).encode(), token)

hostile = [
    ("empty objects", filled('{"steps":[', "{}", "]}")),
    ("empty arrays", filled("[", "[]", "]")),
    ("numbers", filled('{"steps":[', "0", "]}")),
    ("strings", filled('{"steps":[', '""', "]}")),
    ("nesting", b"[" * (BODY // 2) + b"]" * (BODY // 2)),
    ("objects of objects", filled('{"steps":[', '{"a":{}}', "]}")),
]
for name, body in hostile:
    status, text = post(port, "/api/runs/mem/steps", body, token)
    peak = status_kb(proc.pid, "VmHWM")
    check(f"{name} ({len(body) >> 20} MiB): refused before parsing",
          status == 413 and "too_large" in text,
          f"status {status}: {text[:200]} (killed at {guard.killed} kB)" if status != 413 else
          text[:200])
    check(f"{name}: peak RSS {peak >> 10} MiB < 1 GB", 0 < peak < LIMIT_KB and not guard.killed,
          f"peak {peak} kB, killed at {guard.killed} kB")
    if proc.poll() is not None:
        break

if proc.poll() is None:
    body = lane_reports(640000, 64)
    status, text = post(port, "/api/runs/mem/steps", body, token)
    peak = status_kb(proc.pid, "VmHWM")
    check(f"640,000 lane reports ({len(body) >> 20} MiB) are taken",
          status == 200 and '"completed_steps":10000' in text, f"status {status}: {text[:200]}")
    check(f"... at peak RSS {peak >> 10} MiB < 1 GB (a small multiple of the body)",
          0 < peak < LIMIT_KB and not guard.killed, f"peak {peak} kB, killed at {guard.killed}")
if proc.poll() is None:
    # Two of the largest bodies at once: together they would pass the parse
    # budget, so one may be told to come back (503 busy); none is refused
    # otherwise, and the peak stays under 1 GB.
    answers = {}

    def send(run):
        answers[run] = post(port, f"/api/runs/{run}/steps", body, token)

    threads = [threading.Thread(target=send, args=(run,)) for run in ("two-a", "two-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(status for status, _ in answers.values())
    busy = [text for status, text in answers.values() if status == 503]
    check("two at once: taken, or one told to try again", codes in ([200, 200], [200, 503]) and
          all('"busy"' in text for text in busy), f"statuses {codes}: {busy[:1]}")
    # one check whether or not either was told to wait, so the count of
    # checks does not depend on timing
    retried = [post(port, f"/api/runs/{run}/steps", body, token)
               for run, (status, _) in sorted(answers.items()) if status == 503]
    check("... and any told to try again taken when tried again",
          all(status == 200 for status, _ in retried),
          "; ".join(f"{status}: {text[:200]}" for status, text in retried))
    peak = status_kb(proc.pid, "VmHWM")
    check(f"... at peak RSS {peak >> 10} MiB < 1 GB", 0 < peak < LIMIT_KB and not guard.killed,
          f"peak {peak} kB, killed at {guard.killed}")
guard.done.set()
if proc.poll() is None:
    proc.terminate()
check("the server ends cleanly", proc.wait(timeout=30) == 0 and not guard.killed,
      f"exit {proc.returncode}")

# A server whose memory runs out while parsing: 503, never "malformed JSON".
idle, idle_port = serve()
size_kb = status_kb(idle.pid, "VmSize")
idle.terminate()
idle.wait(timeout=30)
limit = (size_kb + 320 * 1024) * 1024  # the body fits; its parse does not


def cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


proc, port = serve(cap_memory)
body = lane_reports(640000, 64)
status, text = post(port, "/api/runs/oom/steps", body, token)
check("out of memory while parsing is a 503", status == 503 and "out_of_memory" in text,
      f"status {status}: {text[:200]}")
check("... and never a 400 'line -1'", "line -1" not in text and status != 400, text[:200])
status, text = post(port, "/api/runs/oom/steps", lane_reports(64, 64), token)
check("the server takes a small body afterwards", status == 200, f"status {status}: {text[:200]}")
proc.terminate()
check("the capped server ends cleanly", proc.wait(timeout=30) == 0, f"exit {proc.returncode}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
