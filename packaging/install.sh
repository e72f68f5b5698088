#!/usr/bin/env bash
# Put DocDesk in the desktop's menu for this user, under ~/.local (no root needed).
#
#   packaging/install.sh [EXECUTABLE]      install (default: .venv/bin/docdesk of this checkout)
#   packaging/install.sh --uninstall       remove what install put there (the library is kept)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
prefix="${XDG_DATA_HOME:-$HOME/.local/share}"
bin="$HOME/.local/bin"
sizes="16 24 32 48 64 128 256 512"

if [[ "${1:-}" == "--uninstall" ]]; then
    rm -f "$prefix/applications/docdesk.desktop" "$bin/docdesk"
    for size in $sizes; do rm -f "$prefix/icons/hicolor/${size}x${size}/apps/docdesk.png"; done
    rm -f "$prefix/icons/hicolor/scalable/apps/docdesk.svg"
    command -v update-desktop-database >/dev/null && update-desktop-database -q "$prefix/applications" || true
    echo "DocDesk removed from the menu. Your library, settings and logs are kept."
    exit 0
fi

exe="$(realpath "${1:-$root/.venv/bin/docdesk}")"
[[ -x "$exe" ]] || { echo "install.sh: $exe is not an executable (run 'make run' or 'make dist' first)" >&2; exit 2; }
mkdir -p "$prefix/applications" "$bin" "$prefix/icons/hicolor/scalable/apps"
for size in $sizes; do
    mkdir -p "$prefix/icons/hicolor/${size}x${size}/apps"
    install -m 644 "$root/assets/icons/docdesk-$size.png" "$prefix/icons/hicolor/${size}x${size}/apps/docdesk.png"
done
install -m 644 "$root/app/gui/icons/docdesk.svg" "$prefix/icons/hicolor/scalable/apps/docdesk.svg"
sed "s|@EXEC@|$exe|g" "$here/docdesk.desktop.in" > "$prefix/applications/docdesk.desktop"
ln -sf "$exe" "$bin/docdesk"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$prefix/applications" || true
echo "DocDesk is in the menu (Office), and 'docdesk' is on ~/.local/bin. Uninstall: $0 --uninstall"
