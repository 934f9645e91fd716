#!/usr/bin/env python3
"""A large store of another app, described by its own model, for the benchmark.

    Benchmarks/model-store.py ROWS STORE

Starts from Fixtures/AnyApp/kitchen-sink (every attribute type, composites, sub-entities sharing
a table, a many-to-many join table, a to-many without an inverse kept in a hidden column) and
adds about ROWS rows in those same shapes: recipes (copies of a real one, each with its own
unique code), their steps (hidden-column links), ingredients (Liquid and Solid, one table),
tags and recipe-tag links. Deterministic. Written with SQL on the fixture's own tables, so the
store's model still explains every row and `questbak export` writes it by the model.
"""
import os
import shutil
import sqlite3
import sys

rows, store = int(sys.argv[1]), sys.argv[2]
fixture = os.path.join(os.path.dirname(__file__), "..", "Fixtures", "AnyApp", "kitchen-sink")
os.makedirs(os.path.dirname(os.path.abspath(store)), exist_ok=True)
for suffix in ["", "-wal"]:
    source = os.path.join(fixture, "default.store" + suffix)
    if os.path.exists(source):
        shutil.copyfile(source, store + suffix)
shutil.copytree(os.path.join(fixture, ".default_SUPPORT"), os.path.join(os.path.dirname(os.path.abspath(store)), ".default_SUPPORT"),
                dirs_exist_ok=True)

recipes, steps, ingredients, tags = rows // 10, rows // 2, rows // 10, rows // 20
links = rows - recipes - steps - ingredients - tags
db = sqlite3.connect(store)
db.execute("PRAGMA journal_mode = WAL")
columns = [row[1] for row in db.execute("PRAGMA table_info(ZRECIPE)")]
base = 100


def copy_rows(table, source_pk, count, first, replace):
    names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    values = [replace.get(name, name) for name in names]
    db.execute(
        f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {count})
            INSERT INTO {table} ({", ".join(names)})
            SELECT {", ".join(values)} FROM {table}, n WHERE {table}.Z_PK = {source_pk}""".replace("Z_PK_NEW", f"{first} + n.i"))


with db:
    copy_rows("ZRECIPE", 1, recipes, base, {"Z_PK": "Z_PK_NEW", "ZCODE": "'BULK-' || n.i", "ZNAME": "'Recipe ' || n.i"})
    copy_rows("ZTAG", 1, tags, base, {"Z_PK": "Z_PK_NEW", "ZLABEL": "'tag ' || n.i", "ZCOLOR": "n.i % 7"})
    copy_rows("ZSTEP", 1, steps, base,
              {"Z_PK": "Z_PK_NEW", "Z5STEPS": f"{base} + n.i % {recipes}", "ZSECONDS": "n.i % 600", "ZTEXT": "'Step ' || n.i"})
    copy_rows("ZINGREDIENT", 1, ingredients // 2, base,
              {"Z_PK": "Z_PK_NEW", "ZRECIPE": f"{base} + n.i % {recipes}", "ZPOSITION": "n.i % 5", "ZNAME": "'liquid ' || n.i"})
    copy_rows("ZINGREDIENT", 3, ingredients - ingredients // 2, base + ingredients // 2,
              {"Z_PK": "Z_PK_NEW", "ZRECIPE": f"{base} + n.i % {recipes}", "ZPOSITION": "n.i % 5", "ZNAME": "'solid ' || n.i"})
    db.execute(
        f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {links})
            INSERT OR IGNORE INTO Z_5TAGS (Z_5RECIPES, Z_7TAGS)
            SELECT {base} + n.i % {recipes}, {base} + (n.i / {recipes} + n.i * 7) % {tags} FROM n""")
    for name, table in [("Recipe", "ZRECIPE"), ("Tag", "ZTAG"), ("Step", "ZSTEP"), ("Ingredient", "ZINGREDIENT")]:
        db.execute(f"UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM {table}) WHERE Z_NAME = ?", (name,))
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
total = sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ["ZRECIPE", "ZTAG", "ZSTEP", "ZINGREDIENT", "ZAUTHOR", "Z_5TAGS"])
db.close()
print(f"wrote {store} with {total} rows")
