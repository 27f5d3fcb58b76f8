#!/usr/bin/env bash
# ordo serve over TLS (libmicrohttpd's): curl against a certificate made
# here for 127.0.0.1; plain HTTP to the TLS port and an unknown issuer fail;
# bad certificate files are refused with a clear error.
set -uo pipefail
build=${BUILD:-build}
ordo=$build/ordo
passed=0 failed=0
check() { if eval "$2"; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }
scripts/deps.sh curl openssl >&2 || { echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
"$ordo" migrate --db "$tmp/l.db" >/dev/null
token=$("$ordo" token create --role writer --db "$tmp/l.db")
mkfifo "$tmp/ready"
"$ordo" serve --db "$tmp/l.db" --listen 127.0.0.1:0 --tls-cert "$tmp/cert.pem" \
  --tls-key "$tmp/key.pem" > "$tmp/ready" 2> "$tmp/log" &
server=$!
read -r line < "$tmp/ready"
url=$(echo "$line" | grep -o 'https://[0-9.]*:[0-9]*')
check "the server says https" '[ -n "$url" ]'
check "healthz over TLS, certificate verified" \
  '[ "$(curl -s --cacert "$tmp/cert.pem" "$url/healthz")" = "{\"status\":\"ok\"}" ]'
check "a write with a token over TLS" \
  'curl -s --cacert "$tmp/cert.pem" -H "Authorization: Bearer $token" -H "Content-Type: application/json" -d "{\"lanes\":4}" "$url/api/recipes" > "$tmp/out"; grep -q "\"id\"" "$tmp/out"'
check "an unknown issuer is refused by the client" '! curl -s "$url/healthz" >/dev/null 2>&1'
check "plain HTTP to the TLS port gets no answer" \
  'curl -s --max-time 5 "http://${url#https://}/healthz" > "$tmp/out" 2>&1; ! grep -q status "$tmp/out"'
kill -TERM "$server"
check "the TLS server stops cleanly" 'wait "$server"'
echo "not a certificate" > "$tmp/bad.pem"
check "a bad certificate file is refused, naming it" \
  '! "$ordo" serve --db "$tmp/l.db" --listen 127.0.0.1:0 --tls-cert "$tmp/bad.pem" --tls-key "$tmp/key.pem" > "$tmp/out" 2>&1 && grep -q "bad.pem" "$tmp/out"'
check "--tls-cert without --tls-key is a usage error" \
  '"$ordo" serve --db "$tmp/l.db" --tls-cert "$tmp/cert.pem" >/dev/null 2>&1; [ $? = 2 ]'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
