#!/usr/bin/env python3
"""The library product pulls nothing only the command line uses (#28 §4): an app that links
QuestBakKit must not inherit swift-argument-parser. Reads `swift package describe --type json`
on standard input and follows the QuestBakKit product's targets through their target
dependencies; exits 1 naming any forbidden product it reaches.

It also keeps the library's layers pointing one way (#24 §2): each module may depend only on the
modules before it in LAYERS, so that the compiler refuses a wrong-way import; a Package.swift
edit that adds a backward dependency fails here."""
import json
import sys

FORBIDDEN = {"ArgumentParser"}
LAYERS = ["CoreDataStore", "QuestBakArchive", "QuestBakKit", "QuestBakCLI"]

package = json.load(sys.stdin)
targets = {target["name"]: target for target in package["targets"]}
product = next(p for p in package["products"] if p["name"] == "QuestBakKit")
seen, reached, pending = set(), set(), list(product["targets"])
while pending:
    name = pending.pop()
    if name in seen or name not in targets:
        continue
    seen.add(name)
    reached.update(targets[name].get("product_dependencies", []))
    pending.extend(targets[name].get("target_dependencies", []))
for index, layer in enumerate(LAYERS):
    if layer not in targets:
        print(f"library: layer {layer} is not a target")
        sys.exit(1)
    backward = sorted(set(targets[layer].get("target_dependencies", [])) & set(LAYERS[index:]))
    if backward:
        print(f"library: {layer} depends on {', '.join(backward)}, a layer above it (order: {' <- '.join(LAYERS)})")
        sys.exit(1)
bad = sorted(reached & FORBIDDEN)
if bad:
    print(f"library: QuestBakKit pulls {', '.join(bad)}, which only the command line may use")
    sys.exit(1)
if "QuestBakKit" not in seen:
    print("library: the QuestBakKit product's targets were not found")
    sys.exit(1)
print(f"library: QuestBakKit pulls {', '.join(sorted(reached))}; no command-line package; layers {' <- '.join(LAYERS)}")
