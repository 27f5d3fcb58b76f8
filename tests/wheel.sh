#!/usr/bin/env bash
# The Python wheel as a user installs it: `make wheel` builds
# build/dist/ordo-<version>-py3-none-<platform>.whl (the version of
# `ordo --version`) holding the package and libordo.so, with no absolute
# path of this machine in it and the source tree left as it was; pip
# installs it with --no-index into a fresh venv of Debian's python3
# (--system-site-packages: its python3-torch), where libordo.so's
# libraries resolve; then tests/wheel_smoke.py runs in that venv from a
# folder outside the checkout with a clean environment (imports, the
# loaders, the README's "From PyTorch" example). Closing line
# "N passed, N failed".
set -uo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
stop() { bad "$*"; echo "$passed passed, $failed failed"; exit 1; }

scripts/deps.sh python3 python3-setuptools python3-wheel python3-pip python3-venv python3-numpy \
  python3-torch >&2 || stop "Debian's python3 packages are missing"
python=/usr/bin/python3 # Debian's, whatever python3 comes first on PATH
version=$("$build/ordo" --version | awk '{print $2}')
[ -n "$version" ] || stop "no version from $build/ordo --version"

# The build: one wheel, named for the version and this platform.
status_before=$(git status --porcelain --untracked-files=all 2>&1)
make -s wheel BUILD="$build" > "$tmp/make.log" 2>&1 || stop "make wheel failed: $(tail -5 "$tmp/make.log")"
shopt -s nullglob
wheels=("$build"/dist/ordo-*.whl)
shopt -u nullglob
[ ${#wheels[@]} -eq 1 ] || stop "make wheel left ${#wheels[@]} wheels in $build/dist: ${wheels[*]}"
wheel=${wheels[0]}
if [[ ${wheel##*/} =~ ^ordo-${version//./\\.}-py3-none-linux_[a-z0-9_]+\.whl$ ]]; then
  ok "make wheel built ${wheel##*/}"
else
  bad "the wheel ${wheel##*/} is not ordo-$version-py3-none-linux_<arch>.whl"
fi
status_after=$(git status --porcelain --untracked-files=all 2>&1)
if [ "$status_before" = "$status_after" ]; then ok "the source tree is as it was"
else bad "make wheel changed the source tree: $(diff <(echo "$status_before") <(echo "$status_after") | head -5)"; fi

# What it holds: every module of python/ordo, the library, the metadata;
# and no path of this machine (the checkout's or the build's folder).
if contents=$("$python" - "$wheel" "$PWD" "$(cd "$build" && pwd -P)" "$(pwd -P)" python/ordo/*.py <<'EOF' 2>&1
import os, sys, zipfile
wheel, *folders = sys.argv[1:]
modules = [f for f in folders if f.endswith(".py")]
folders = sorted({f.encode() for f in folders if not f.endswith(".py")}, key=len, reverse=True)
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    want = {"ordo/" + os.path.basename(m) for m in modules} | {"ordo/_lib/libordo.so"}
    missing = sorted(want - names)
    extra = sorted(n for n in names - want if ".dist-info/" not in n)
    if missing or extra:
        sys.exit(f"missing {missing}, unexpected {extra}")
    for name in sorted(names):
        data = z.read(name)
        for folder in folders:
            if folder in data:
                sys.exit(f"{name} holds the path {folder.decode()}")
    print(f"{len(names)} files, libordo.so {len(z.read('ordo/_lib/libordo.so'))} bytes")
EOF
); then
  ok "the wheel holds python/ordo/*.py and ordo/_lib/libordo.so, no path of this machine ($contents)"
else
  bad "the wheel's contents: $contents"
fi

# A fresh venv of Debian's python, the wheel installed offline.
"$python" -m venv --system-site-packages "$tmp/venv" > "$tmp/venv.log" 2>&1 ||
  stop "cannot create a venv: $(tail -3 "$tmp/venv.log")"
if "$tmp/venv/bin/python" -m pip install --quiet --no-index --disable-pip-version-check "$wheel" \
     > "$tmp/pip.log" 2>&1; then
  ok "pip install --no-index of the wheel into a fresh venv"
else
  stop "pip install failed: $(tail -5 "$tmp/pip.log")"
fi
lib=$(echo "$tmp"/venv/lib/python3*/site-packages/ordo/_lib/libordo.so)
if [ ! -f "$lib" ]; then
  bad "no ordo/_lib/libordo.so in the venv's site-packages"
elif unresolved=$(ldd "$lib" 2>&1 | grep -E 'not found|not a dynamic'); then
  bad "the venv's libordo.so: $unresolved"
else
  soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  ok "the venv's libordo.so (soname ${soname:-none}) finds every library it needs"
fi

# The smoke test: from another folder, nothing of the checkout reachable,
# a real `ordo serve` (empty ledger) for the example's reports.
mkfifo "$tmp/ready"
"$build/ordo" serve --db "$tmp/ordo.db" --listen 127.0.0.1:0 > "$tmp/ready" 2> "$tmp/serve.log" &
server=$!
exec 3< "$tmp/ready"
read -r -u 3 line # blocks until the server has bound its port
url=$(echo "$line" | grep -o 'http://[0-9.]*:[0-9]*')
[ -n "$url" ] || { kill "$server"; stop "ordo serve did not start: $line $(cat "$tmp/serve.log")"; }
token=$("$build/ordo" token create --role writer --db "$tmp/ordo.db")
mkdir -p "$tmp/job"
cp tests/wheel_smoke.py README.md "$tmp/job/"
(cd "$tmp/job" && env -i PATH=/usr/bin:/bin HOME="$tmp/job" LANG=C.UTF-8 TMPDIR="$tmp" \
   ORDO_URL="$url" ORDO_TOKEN="$token" "$tmp/venv/bin/python" wheel_smoke.py README.md) \
  > "$tmp/smoke.log" 2>&1
cat "$tmp/smoke.log"
kill -TERM "$server"
wait "$server" || bad "ordo serve did not stop cleanly: $(tail -3 "$tmp/serve.log")"
exec 3<&-
if [[ $(tail -n 1 "$tmp/smoke.log") =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
else
  bad "wheel_smoke.py did not finish with a result line"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
