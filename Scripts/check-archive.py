#!/usr/bin/env python3
"""Independent check of an extracted questbak archive against the store it was exported from.

usage: check-archive.py EXTRACTED_DIR STORE_COPY

Reads the store with Python's sqlite3 and plistlib and the archive's JSON Lines with the json
module, and compares every record field by field: integers exactly, Doubles bit for bit, dates
as exact decimals (the ISO text must denote the stored Double exactly), keyed-archive arrays
element by element. It shares no code with questbak, so the export tests do not check the
exporter against itself. Prints 'N passed, 0 failed' lines per entity; exits 1 on a mismatch.
"""
import datetime, decimal, hashlib, json, os, plistlib, re, sqlite3, struct, sys

decimal.getcontext().prec = 100
REFERENCE = datetime.datetime(2001, 1, 1)
ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z$")


def iso_to_decimal(text):
    m = ISO.match(text)
    if not m:
        raise ValueError(f"not an ISO date: {text!r}")
    whole = datetime.datetime(*map(int, m.groups()[:6])) - REFERENCE
    seconds = decimal.Decimal(whole.days * 86400 + whole.seconds)
    return seconds + (decimal.Decimal("0." + m.group(7)) if m.group(7) else 0)


def unarchive(blob):
    top = plistlib.loads(blob)
    objects = top["$objects"]
    root = objects[top["$top"]["root"].data]
    return [objects[uid.data] for uid in root["NS.objects"]]


def camel_to_column(name):
    return "Z" + name.upper()


def main(extracted, store):
    manifest = json.load(open(os.path.join(extracted, "manifest.json")))
    db = sqlite3.connect(store)
    failed = 0
    for member in manifest["entities"]:
        data = open(os.path.join(extracted, member["path"]), "rb").read()
        assert hashlib.sha256(data).hexdigest() == member["sha256"], member["path"] + " checksum"
        lines = data.decode("utf-8").split("\n")
        assert lines[-1] == "", "member ends with a newline"
        header = json.loads(lines[0])
        assert header == {"schemaVersion": manifest["schemaVersion"], "entity": member["name"], "count": member["count"]}, header
        records = [json.loads(line) for line in lines[1:-1]]
        table = camel_to_column(member["name"])
        db.row_factory = sqlite3.Row
        rows = db.execute(f"SELECT * FROM {table} ORDER BY Z_PK").fetchall()
        types = {r[1]: r[2] for r in db.execute(f"PRAGMA table_info({table})")}
        checked = 0
        if len(rows) != len(records) or len(rows) != member["count"]:
            print(f"{member['name']}: {len(records)} records, store has {len(rows)}")
            failed += 1
            continue
        for row, record in zip(rows, records):
            assert record["_pk"] == row["Z_PK"]
            assert record["_opt"] == row["Z_OPT"], (record["_opt"], row["Z_OPT"])
            assert set(camel_to_column(k) for k in record if k not in ("_pk", "_opt")) == set(types) - {"Z_PK", "Z_ENT", "Z_OPT"}, record.keys()
            for key, value in record.items():
                if key in ("_pk", "_opt"):
                    continue
                stored = row[camel_to_column(key)]
                kind = types[camel_to_column(key)]
                ok = True
                if stored is None:
                    ok = value is None
                elif kind == "TIMESTAMP":
                    ok = iso_to_decimal(value) == decimal.Decimal(repr(stored)) if isinstance(value, str) else value == stored
                elif kind == "FLOAT":
                    ok = struct.pack("<d", float(value)) == struct.pack("<d", stored)
                elif kind == "INTEGER":
                    ok = (value == stored) if not isinstance(value, bool) else (int(value) == stored)
                elif kind == "BLOB":
                    ok = value == unarchive(stored)
                else:
                    ok = value == stored
                if not ok:
                    print(f"{member['name']} Z_PK {row['Z_PK']} {key}: archive {value!r}, store {stored!r}")
                    failed += 1
                checked += 1
        print(f"{member['name']}: {checked} passed, 0 failed" if failed == 0 else f"{member['name']}: failures")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
