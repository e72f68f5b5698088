#!/usr/bin/env bash
# The built application's `serve` and `mcp`, with only loopback: one cited answer over HTTP from
# `serve`, and the tool list plus one search over stdio from `mcp`. Called by test_dist.sh (inside
# a network namespace whose only interface is lo) after the corpus PDF was added to the library.
#   packaging/test_dist_serve.sh EXE HOME
set -euo pipefail
exe="$1"
home="$2"
run() { env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 "$exe" "$@"; }

log="$home/serve.log"
(exec env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 "$exe" serve --port 0 2>"$log") &
server=$!
url=""
for _ in $(seq 1 180); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$log" | head -1 || true)"
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 1
done
[ -n "$url" ] || { echo "docdesk serve did not start:"; cat "$log"; exit 1; }
port="${url#http://127.0.0.1:}"
port="${port%/v1}"
body='{"model": "docdesk", "messages": [{"role": "user", "content": "What is the official language of Austria?"}]}'
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "${#body}" "$body" >&3
reply="$(cat <&3)"
exec 3>&-
kill -TERM "$server"  # as systemd stops it: a clean exit 0
wait "$server"
echo "$reply" | head -1 | grep -q ' 200 ' || { echo "$reply"; exit 1; }
echo "$reply" | grep -q '"title": "multicolumn"' || { echo "$reply"; exit 1; }
grep -q "stopped serving" "$log"
echo "== serve: a cited answer over HTTP, then stopped by SIGTERM (exit 0)"

coproc MCP { run mcp 2>"$home/mcp.log"; }
send() { printf '%s\n' "$@" >&"${MCP[1]}"; }
send '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dist-test", "version": "1"}}}'
read -r -t 180 initialized <&"${MCP[0]}"
echo "$initialized" | grep -q '"serverInfo"' || { echo "$initialized"; cat "$home/mcp.log"; exit 1; }
send '{"jsonrpc": "2.0", "method": "notifications/initialized"}' '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'
read -r -t 60 tools <&"${MCP[0]}"
for tool in search_documents ask list_documents summarize_document get_page; do
    echo "$tools" | grep -q "\"$tool\"" || { echo "no $tool in: $tools"; exit 1; }
done
send '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_documents", "arguments": {"query": "official language of Austria", "k": 3}}}'
read -r -t 120 found <&"${MCP[0]}"
echo "$found" | grep -q 'multicolumn' || { echo "$found"; exit 1; }
pid="$MCP_PID"
exec {MCP[1]}>&-
wait "$pid"
echo "== mcp: the five tools, and a search over stdio"
