#!/usr/bin/env python3
"""Independent implementation of the model-hash scheme of shared/spec/store-format.md.

It transcribes the TimeQuest schemas from shared/spec/timequest-schema.md by hand and prints the
entity hashes, checksum and digest of V1 and V2. The Swift tests pin the values this prints, so
the Swift implementation is checked against a second one rather than against itself.
Run: python3 Scripts/model-hashes.py
"""
import base64, hashlib, struct

INT, BOOL, DOUBLE, STRING, DATE, TRANSFORMABLE = 300, 800, 500, 700, 900, 1800

V1 = {
    "Routine": {
        "attributes": {"name": (STRING, False), "displayName": (STRING, False), "activeDays": (TRANSFORMABLE, False),
                       "isActive": (BOOL, False), "createdAt": (DATE, False), "updatedAt": (DATE, False)},
        "relationships": {"tasks": ("RoutineTask", "routine", True), "sessions": ("GameSession", "routine", True)},
    },
    "RoutineTask": {
        "attributes": {"name": (STRING, False), "displayName": (STRING, False),
                       "referenceDurationSeconds": (INT, True), "orderIndex": (INT, False)},
        "relationships": {"routine": ("Routine", "tasks", False)},
    },
    "GameSession": {
        "attributes": {"startedAt": (DATE, False), "completedAt": (DATE, True), "isCalibration": (BOOL, False),
                       "xpEarned": (INT, False)},
        "relationships": {"routine": ("Routine", "sessions", False),
                          "estimations": ("TaskEstimation", "session", True)},
    },
    "TaskEstimation": {
        "attributes": {"taskDisplayName": (STRING, False), "estimatedSeconds": (DOUBLE, False),
                       "actualSeconds": (DOUBLE, False), "differenceSeconds": (DOUBLE, False),
                       "accuracyPercent": (DOUBLE, False), "ratingRawValue": (STRING, False),
                       "orderIndex": (INT, False), "recordedAt": (DATE, False)},
        "relationships": {"session": ("GameSession", "estimations", False)},
    },
    "PlayerProfile": {
        "attributes": {"totalXP": (INT, False), "currentStreak": (INT, False), "lastPlayedDate": (DATE, True),
                       "notificationsEnabled": (BOOL, False), "notificationHour": (INT, False),
                       "notificationMinute": (INT, False), "soundEnabled": (BOOL, False), "createdAt": (DATE, False)},
        "relationships": {},
    },
}


def sha256(data):
    return hashlib.sha256(data).digest()


def base(name, optional):
    return sha256(name.encode() + struct.pack("<H", 1 if optional else 0))


def entity_hash(name, entity):
    props = {}
    for prop, (code, optional) in entity["attributes"].items():
        props[prop] = sha256(base(prop, optional) + struct.pack("<i", code))
    for prop, (dest, inverse, to_many) in entity["relationships"].items():
        props[prop] = sha256(base(prop, not to_many) + dest.encode() + inverse.encode()
                             + struct.pack("<i", 0 if to_many else 1) + struct.pack("<i", 0))
    return sha256(name.encode() + b"\x00" + b"".join(props[p] for p in sorted(props)))


def report(label, schema):
    hashes = {name: entity_hash(name, entity) for name, entity in schema.items()}
    names = sorted(hashes)
    checksum = base64.b64encode(sha256(b"".join(hashes[n] for n in names))).decode()
    digest = base64.b64encode(hashlib.sha512(b"".join(n.encode() + hashes[n] for n in names)).digest()).decode()
    print(label)
    for n in names:
        print(f"  {n}: {base64.b64encode(hashes[n]).decode()}")
    print(f"  checksum: {checksum}")
    print(f"  digest: {digest}")


V2 = {name: {"attributes": {**e["attributes"], "cloudID": (STRING, False)}, "relationships": e["relationships"]}
      for name, e in V1.items()}
report("1.0.0", V1)
report("2.0.0", V2)
