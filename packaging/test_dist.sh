#!/usr/bin/env bash
# Checks the built application as a user would run it: no network, no Python environment
# beside it (a clean environment, the system's PATH only), a fresh home folder.
#   packaging/test_dist.sh [dist/DocDesk]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
app="$(realpath "${1:-$root/dist/DocDesk}")"
exe="$app/DocDesk"
corpus="$root/tests/data/corpus/pdf-samples/026-latex-multicolumn/multicolumn.pdf"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
offline=()
if unshare -n true 2>/dev/null; then offline=(unshare -n); fi  # a network namespace with no network
run() { env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen "${offline[@]}" "$exe" "$@"; }

echo "== size: $(du -sh "$app" | cut -f1)"
run --version
run doctor --json | grep -q '"gpus"'
run add "$corpus" --json | grep -q '"status": "indexed"'
answer="$(run ask "What is the official language of Austria?" --json)"
echo "$answer" | grep -q '"title": "multicolumn"'
echo "$answer" | grep -q '"chat_id"'
# OCR (its models are package data of rapidocr) and the readers of the other formats, bundled too.
scan="$root/tests/data/scans/en_phototest.tif"
run add "$scan" --json | grep -q 'text recognised by OCR on 1 page'
for sample in office/test_slides.pptx office/temperature.xlsx epub/childrens-literature.epub odf/simpletable.odt; do
    run add "$root/tests/data/$sample" --json | grep -q '"status": "indexed"'
done
# A Chinese question finds the English document among the six, its words read through CC-CEDICT (package data).
find "$app" -name 'cedict_1_0_ts_utf-8_mdbg.txt.gz' | grep -q .
run search "奥地利的官方语言是什么？" --json | grep -q '"title": "multicolumn"'
# serve and mcp: the server and its client share a namespace whose loopback is up (or, without
# namespaces, this machine's).
if [ ${#offline[@]} -gt 0 ] && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
    unshare -n bash -c 'ip link set lo up && exec bash "$0" "$@"' "$root/packaging/test_dist_serve.sh" "$exe" "$home"
else
    bash "$root/packaging/test_dist_serve.sh" "$exe" "$home"
fi
echo "== the built application works offline: --version, doctor, add (PDF, a scan by OCR, PPTX, XLSX, EPUB, ODT), ask, a Chinese search, serve, mcp"
