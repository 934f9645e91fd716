#!/usr/bin/env python3
"""Fails on a public declaration an app sees through `import QuestBakKit` without a `///` comment,
and says how many public declarations the library has and how many live outside its front door
(Sources/QuestBakKit/API).

It reads the symbol graphs `swift package dump-symbol-graph --minimum-access-level public` writes
(what the compiler says is public, so a `public` member of a `package` type is not counted: its
effective access is package):

    swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members
    python3 Scripts/check-public-docs.py .build/<triple>/symbolgraph

With no argument it looks for the folder under .build. QuestBakKit's declarations are checked,
and those of the modules it re-exports (CoreDataStore, QuestBakArchive), which an app sees too.
"""
import glob
import json
import os
import sys
from collections import Counter

LIBRARY = "Sources/QuestBakKit/"
FRONT_DOOR = "Sources/QuestBakKit/API/"
REEXPORTED = {"CoreDataStore": "Sources/CoreDataStore/", "QuestBakArchive": "Sources/QuestBakArchive/"}


def graph_folder():
    if len(sys.argv) > 1:
        return sys.argv[1]
    found = sorted(glob.glob(".build/*/symbolgraph")) + sorted(glob.glob(".build/*/*/symbolgraph"))
    if not found:
        sys.exit("check-public-docs: no symbol graphs under .build; run swift package dump-symbol-graph first")
    return max(found, key=os.path.getmtime)


def symbols(folder, module):
    """Every public symbol declared in the module's sources, from its graph and its extension
    graphs (QuestBakKit@Swift.symbols.json: members it adds to other modules' types)."""
    seen = {}
    for path in glob.glob(os.path.join(folder, f"{module}.symbols.json")) + glob.glob(
        os.path.join(folder, f"{module}@*.symbols.json")
    ):
        with open(path) as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            uri = symbol.get("location", {}).get("uri", "")
            seen[symbol["identifier"]["precise"]] = (symbol, uri)
    return list(seen.values())


def relative(uri):
    path = uri.removeprefix("file://")
    return os.path.relpath(path) if path else ""


def is_documented(symbol):
    return any(line.get("text", "").strip() for line in symbol.get("docComment", {}).get("lines", []))


def main():
    folder = graph_folder()
    library = [(s, relative(uri)) for s, uri in symbols(folder, "QuestBakKit")]
    if not library:
        sys.exit(f"check-public-docs: no QuestBakKit symbols in {folder}")
    # Declarations the compiler made (a raw value's init, a memberwise conformance) have no place
    # in the sources: there is nothing to write a comment on.
    written = [(s, path) for s, path in library if path.startswith(LIBRARY)]
    undocumented = [(s, path) for s, path in written if not is_documented(s)]
    outside = [(s, path) for s, path in written if not path.startswith(FRONT_DOOR)]
    print(f"QuestBakKit: {len(written)} public declarations, {len(outside)} outside {FRONT_DOOR}")
    for path, count in sorted(Counter(path for _, path in outside).items()):
        print(f"  {path}: {count}")
    for module, sources in REEXPORTED.items():
        declared = [(s, relative(uri)) for s, uri in symbols(folder, module) if relative(uri).startswith(sources)]
        print(f"{module} (re-exported by QuestBakKit): {len(declared)} public declarations")
        undocumented += [(s, path) for s, path in declared if not is_documented(s)]
    if undocumented:
        for symbol, path in sorted(undocumented, key=lambda item: (item[1], item[0]["location"]["position"]["line"])):
            line = symbol["location"]["position"]["line"] + 1
            name = ".".join(symbol["pathComponents"])
            print(f"{path}:{line}: public {symbol['kind']['displayName'].lower()} {name} has no /// comment")
        print(f"check-public-docs: {len(undocumented)} public declarations without a /// comment")
        sys.exit(1)
    print("check-public-docs: every public declaration an app sees has a /// comment")


if __name__ == "__main__":
    main()
