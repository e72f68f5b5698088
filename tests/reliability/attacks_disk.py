"""Attacks through the file system and the database file: a watched folder on a drive that is
unmounted, a subfolder DocDesk may not open, a full disk, a read-only library, a schema version
that is not a number, a database page overwritten."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from tests.app.test_exit_codes import empty_leaf_page, fill, overwrite_page
from tests.reliability.checks import query
from tests.reliability.harness import NOTES, AttackSkipped, Lab, attack, documents, expect, write_notes

# Root without the capabilities that let it open any folder: what an ordinary user is, while
# still owning the library and the interpreter.
NO_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")


@attack(
    "2: sync of an unmounted watched folder",
    "a watched folder that is suddenly empty (an unmounted drive) keeps its documents: held, exit 1",
)
def unmounted_folder(lab: Lab) -> str:
    library = lab.library()
    drive = lab.tmpfs("drive", "4m")
    write_notes(drive)  # the library's documents, on the drive too
    lab.docdesk(library, "add", str(drive)).expect_clean(0)
    subprocess.run(["umount", str(drive)], check=True)
    synced = lab.docdesk(library, "sync")
    synced.expect_clean(1)
    held = synced.json["held"]
    expect(held == [{"path": str(drive), "gone": len(NOTES), "files": len(NOTES)}], f"held: {held}")
    expect(synced.json["removed"] == [], f"sync removed {len(synced.json['removed'])} documents")
    paths = {r[0] for r in query(library, "SELECT path FROM files")}
    expect(sum(p.startswith(str(drive)) for p in paths) == len(NOTES), "the drive's paths were forgotten")
    return f"sync exit 1, held {held[0]['gone']} of {held[0]['files']} files, nothing removed"


@attack(
    "5: unreadable subfolder during sync",
    "sync as a user who may not open a subfolder reports it (exit 1) and keeps its documents",
)
def unreadable_subfolder(lab: Lab) -> str:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise AttackSkipped("needs root and setpriv to drop the right to open any folder")
    library = lab.library()
    docs = write_notes(lab.work / "docs", ["tides.md"])
    write_notes(docs / "private", ["cats.md"])
    lab.docdesk(library, "add", str(docs)).expect_clean(0)
    (docs / "private").chmod(0)
    lab.cleanups.append(lambda: (docs / "private").chmod(0o755))
    synced = lab.docdesk(library, "sync", prefix=NO_DAC)
    synced.expect_clean(1)
    reasons = {f["path"]: f["reason"] for f in synced.json["failed"]}
    private = str(docs / "private")
    expect(reasons.get(private, "").startswith("cannot open the folder"), f"failed: {reasons}")
    expect(synced.json["removed"] == [], "sync removed documents it could not see")
    expect(len(documents(lab, library)) == len(NOTES), "documents were lost")
    return f"sync exit 1: {private.rsplit('/', 1)[1]}: {reasons[private][:40]}…; nothing removed"


def _full_disk_library(lab: Lab) -> Path:
    library = lab.tmpfs("full", "2m")
    shutil.copytree(lab.shared.template(), library, dirs_exist_ok=True)
    return library


@attack(
    "9: disk full during add",
    "exit 3 with one line ('the disk holding the library … is full … nothing was lost'); list still works",
)
def disk_full(lab: Lab) -> str:
    library = _full_disk_library(lab)
    big = lab.work / "handbook.md"
    big.write_text(
        "\n\n".join(f"# Part {n}\n\nQuay {n} pays its harbour fee at every tide, said clerk {n}." for n in range(300)),
        encoding="utf-8",
    )
    fill(library, leave=16 * 1024)
    added = lab.docdesk(library, "add", str(big))
    added.expect_clean(3)
    expect("is full" in added.error and "nothing was lost" in added.error, f"reason: {added.error!r}")
    indexed = {Path(d["path"]).name for d in documents(lab, library) if d["status"] == "indexed"}
    expect(indexed == set(NOTES), f"indexed after: {sorted(indexed)}")
    return f"add exit 3: {added.error[9:70]}…; list exit 0, the {len(NOTES)} documents kept"


@attack(
    "9: read-only library",
    "list and search work; add exits 3 saying the library is read-only; nothing is written",
)
def read_only_library(lab: Lab) -> str:
    library = lab.tmpfs("ro", "8m")
    shutil.copy(lab.shared.template() / "library.sqlite", library / "library.sqlite")  # no cache: built in memory
    remount = subprocess.run(["mount", "-o", "remount,ro", str(library)], capture_output=True)
    if remount.returncode != 0:
        raise AttackSkipped(f"cannot remount read-only: {remount.stderr.decode().strip()}")
    expect(len(documents(lab, library)) == len(NOTES), "list does not show the documents")
    found = lab.docdesk(library, "search", "pull", "of", "the", "moon")
    found.expect_clean(0)
    expect(found.json["results"][0]["path"].endswith("tides.md"), "search did not find the tides")
    note = write_notes(lab.work / "new", ["kettle.md"]) / "kettle.md"
    note.write_text("# New\n\nA note that cannot be added.", encoding="utf-8")
    added = lab.docdesk(library, "add", str(note))
    added.expect_clean(3)
    expect("read-only" in added.error, f"reason: {added.error!r}")
    expect(sorted(p.name for p in library.iterdir()) == ["library.sqlite"], "something was written")
    return f"list and search exit 0; add exit 3: {added.error[9:80]}…"


@attack(
    "9: schema_version that is not a number",
    "exit 2 naming the damage (schema version 'abc') and the way out, no ValueError",
)
def bad_schema_version(lab: Lab) -> str:
    library = lab.library()
    with sqlite3.connect(library / "library.sqlite") as conn:
        conn.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    conn.close()
    listed = lab.docdesk(library, "list")
    listed.expect_clean(2)
    expect("damaged" in listed.error and "'abc'" in listed.error, f"reason: {listed.error!r}")
    return f"list exit 2: {listed.error[9:90]}…"


@attack(
    "9: overwritten database page",
    "a documents page overwritten with an empty page is reported as damage (exit 2), not an empty library",
)
def overwritten_page(lab: Lab) -> str:
    library = lab.library()
    overwrite_page(library / "library.sqlite", "documents", empty_leaf_page())
    listed = lab.docdesk(library, "list")
    if listed.rc == 0:
        expect(False, f"list exit 0 showing {len(listed.json['documents'])} documents: the damage went unseen")
    listed.expect_clean(2)
    expect("damaged" in listed.error, f"reason: {listed.error!r}")
    return f"list exit 2: {listed.error[9:90]}…"
