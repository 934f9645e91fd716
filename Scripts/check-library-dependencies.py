#!/usr/bin/env python3
"""The library product pulls nothing only the command line uses (#28 §4): an app that links
QuestBakKit must not inherit swift-argument-parser. Reads `swift package describe --type json`
on standard input and follows the QuestBakKit product's targets through their target
dependencies; exits 1 naming any forbidden product it reaches."""
import json
import sys

FORBIDDEN = {"ArgumentParser"}

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
bad = sorted(reached & FORBIDDEN)
if bad:
    print(f"library: QuestBakKit pulls {', '.join(bad)}, which only the command line may use")
    sys.exit(1)
if "QuestBakKit" not in seen:
    print("library: the QuestBakKit product's targets were not found")
    sys.exit(1)
print(f"library: QuestBakKit pulls {', '.join(sorted(reached))}; no command-line package")
