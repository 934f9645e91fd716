import Foundation
import GRDB
import QuestBakKit

/// The golden fixture stores in `Fixtures/`, generated deterministically: the same bytes on
/// every run, so a regenerated fixture that differs is a real change.
package enum FixtureGenerator {
    public struct Fixture: Sendable {
        public var name: String
        /// One line for `Fixtures/README.md`: what the store holds and why it exists.
        public var summary: String
        public var uuid: String
        public var dataset: Dataset
        /// Records inserted after the store was written and left only in its `-wal`.
        public var walTail: Dataset?
    }

    public static let storeFileName = "default.store"

    public static var all: [Fixture] { [v1Typical, v1EdgeCases, v1Anomalies, v1WAL, v2Typical] }

    static var v1Typical: Fixture {
        var data = TimeQuestData(schema: TimeQuestSchemas.v1, seed: 1)
        data.addTypicalContent(routines: TimeQuestData.typicalRoutines, sessionsPerRoutine: 3)
        // Deleted rows leave Z_MAX above the largest key; a restore must keep it there.
        data.setMaximumPrimaryKeyFloor("GameSession", 12)
        return Fixture(
            name: "v1-typical",
            summary:
                "V1 store as the app leaves it: 3 routines with 12 ordered tasks, 9 sessions with 36 estimations, one profile; GameSession Z_MAX 12 above its largest key 9 (deleted rows).",
            uuid: "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0001", dataset: data.dataset)
    }

    static var v1EdgeCases: Fixture {
        var data = TimeQuestData(schema: TimeQuestSchemas.v1, seed: 2)
        let base = TimeQuestData.march2025
        data.routine(1, name: "emoji_☀️", displayName: "Morning ☀️🪥 — café «naïve» 日本語", activeDays: [], createdAt: base + 0.000_001)
        data.routine(
            2, name: "quotes", displayName: "She said \"hi\"\nthen 'bye'\t\\ done",
            activeDays: Array(1...7) + Array(1...7) + [0, -1, Int64.max, Int64.min], isActive: false, createdAt: -31_536_000.25,
            updatedAt: -978_307_200)
        data.routine(3, name: "", displayName: "", activeDays: [5], createdAt: 0, updatedAt: 1e9 + 0.123_456_789)
        data.task(
            1, routine: 1, name: "long", displayName: String(repeating: "Long name ", count: 200), referenceSeconds: Int64.max,
            orderIndex: 0)
        data.task(2, routine: 1, name: "negative", displayName: "Negative", referenceSeconds: -42, orderIndex: -1)
        data.task(3, routine: 2, name: "nil_reference", displayName: "No reference", referenceSeconds: nil, orderIndex: Int64.max)
        data.task(4, routine: 3, name: "zero", displayName: "", referenceSeconds: 0, orderIndex: 0)
        data.session(1, routine: 1, startedAt: -1.5, completedAt: nil, isCalibration: true, xpEarned: Int64.min)
        data.session(2, routine: 2, startedAt: 1e10, completedAt: 1e10 + 0.5, isCalibration: false, xpEarned: 0)
        data.estimation(
            1, session: 1, taskDisplayName: "Tab\there\r\nCRLF", estimatedSeconds: 1e-7, actualSeconds: 1e300, orderIndex: 0,
            recordedAt: -0.1)
        data.estimation(2, session: 1, taskDisplayName: "Zero", estimatedSeconds: 0, actualSeconds: 0, orderIndex: 1, recordedAt: 0.1)
        data.estimation(
            3, session: 2, taskDisplayName: "Negative times", estimatedSeconds: -5.5, actualSeconds: 0.1 + 0.2, orderIndex: 2,
            recordedAt: 123_456_789.987_654)
        data.profile(
            1, totalXP: Int64.max, currentStreak: -3, lastPlayedDate: nil, createdAt: -1e9, notificationsEnabled: false,
            notificationHour: 23, notificationMinute: 59, soundEnabled: false)
        return Fixture(
            name: "v1-edge-cases",
            summary:
                "V1 values at the edges: Unicode, emoji, quotes, tabs and newlines in names, empty strings, nil optionals, dates before 2001 and far ahead, Int64 extremes, negative and tiny Doubles, empty and long activeDays.",
            uuid: "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0002", dataset: data.dataset)
    }

    static var v1Anomalies: Fixture {
        var data = TimeQuestData(schema: TimeQuestSchemas.v1, seed: 3)
        data.addTypicalContent(routines: Array(TimeQuestData.typicalRoutines.prefix(2)), sessionsPerRoutine: 2)
        let base = TimeQuestData.march2025
        // A second profile, as a reinstall or a CloudKit sync of another device creates.
        data.profile(
            2, totalXP: 950, currentStreak: 9, lastPlayedDate: base + 30 * 86_400, createdAt: base - 86_400 * 30, soundEnabled: false)
        // Estimations duplicated by sync: same session, task name and recordedAt as 1 and 2.
        for original in (data.dataset.records["TaskEstimation"] ?? []).prefix(2) {
            let next = Int64((data.dataset.records["TaskEstimation"] ?? []).count + 1)
            data.estimation(
                next, session: { if case .integer(let pk) = original["session"] { return pk } else { return nil } }(),
                taskDisplayName: { if case .string(let text) = original["taskDisplayName"] { return text } else { return "" } }(),
                estimatedSeconds: { if case .double(let v) = original["estimatedSeconds"] { return v } else { return 0 } }(),
                actualSeconds: { if case .double(let v) = original["actualSeconds"] { return v } else { return 0 } }(),
                orderIndex: { if case .integer(let v) = original["orderIndex"] { return v } else { return 0 } }(),
                recordedAt: { if case .date(let v) = original["recordedAt"] { return v } else { return 0 } }())
        }
        // A task whose routine (Z_PK 9) was deleted without the cascade reaching it.
        data.task(100, routine: 9, name: "orphan", displayName: "Orphaned Task", referenceSeconds: 90, orderIndex: 0)
        data.setMaximumPrimaryKeyFloor("Routine", 9)
        return Fixture(
            name: "v1-anomalies",
            summary:
                "V1 with what sync and reinstalls leave behind: two PlayerProfiles, two duplicated estimations, a task whose routine (Z_PK 9) no longer exists.",
            uuid: "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0003", dataset: data.dataset)
    }

    static var v1WAL: Fixture {
        var base = TimeQuestData(schema: TimeQuestSchemas.v1, seed: 4)
        base.addTypicalContent(routines: Array(TimeQuestData.typicalRoutines.prefix(1)), sessionsPerRoutine: 1)
        var tail = TimeQuestData(schema: TimeQuestSchemas.v1, seed: 5)
        let later = TimeQuestData.march2025 + 10 * 86_400
        tail.routine(2, name: "homework", displayName: "Homework", activeDays: [2, 4], createdAt: later)
        tail.task(5, routine: 2, name: "open_book", displayName: "Open Book", referenceSeconds: 30, orderIndex: 0)
        tail.session(2, routine: 1, startedAt: later + 60, completedAt: later + 600, isCalibration: false, xpEarned: 40)
        for order in 0..<4 {
            tail.estimation(
                Int64(5 + order), session: 2, taskDisplayName: "Task \(order)", estimatedSeconds: 60, actualSeconds: 75.5,
                orderIndex: Int64(order), recordedAt: later + 120 * Double(order + 1))
        }
        return Fixture(
            name: "v1-wal",
            summary:
                "V1 store copied while the app had it open: the main file holds 1 routine, 1 session, 4 estimations; its -wal adds 1 routine, 1 task, 1 session and 4 estimations that only a WAL-aware reader sees.",
            uuid: "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0004", dataset: base.dataset, walTail: tail.dataset)
    }

    static var v2Typical: Fixture {
        var data = TimeQuestData(schema: TimeQuestSchemas.v2, seed: 6)
        data.addTypicalContent(routines: TimeQuestData.typicalRoutines, sessionsPerRoutine: 2)
        return Fixture(
            name: "v2-typical",
            summary:
                "V2 store as the CloudKit-enabled app writes it: cloudID on every row (the profile's is the sentinel), 3 routines, 12 tasks, 6 sessions, 24 estimations, one profile.",
            uuid: "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0005", dataset: data.dataset)
    }

    /// Writes every fixture into `directory/<name>/default.store` (replacing what is there) and
    /// the index `directory/README.md`.
    public static func writeAll(to directory: URL) throws {
        for fixture in all {
            let folder = directory.appendingPathComponent(fixture.name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // Only the store files are replaced: golden dumps beside them are verify-migration's.
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(storeFileName + suffix))
            }
            try write(fixture, to: folder.appendingPathComponent(storeFileName))
        }
        var index = """
            # Golden fixture stores

            Generated by `make fixtures` (`swift run questbak-fixtures Fixtures`) from
            `Sources/QuestBakFixtures/FixtureGenerator.swift`; the generator is deterministic,
            so regenerating gives identical bytes unless the generator changed. Tests copy a fixture
            into a temporary directory before opening it. Each store carries its compiled model in
            `Z_MODELCACHE`, as every store SwiftData writes does (encoded by questbak's test encoder,
            not byte for byte what Apple's framework writes), and `questbak inspect` decodes it.
            Stores of other apps are in [AnyApp/](AnyApp/README.md). `Gates/<App>/` holds other apps' migration
            gates (seeds 002 and 004), as an app team sets one up: `fixtures/<name>/default.store` of the old
            model with its golden dump, and `next/default.store`, the new build's empty store; `make test`
            runs `verify-migration --fixtures Gates/<App>/fixtures --to Gates/<App>/next/default.store`
            for BennieGame (1.0.0 → 1.2.0: sync fields and a new entity that renumbers others) and
            Ritualist (1.0.0 → 2.0.0: `schemaVersion` defaulting to "v1", an optional new field).

            | fixture | contents |
            |---|---|

            """
        for fixture in all { index += "| `\(fixture.name)/` | \(fixture.summary) |\n" }
        try Data(index.utf8).write(to: directory.appendingPathComponent("README.md"))
    }

    public static func write(_ fixture: Fixture, to url: URL) throws {
        try fixture.dataset.write(to: url, uuid: fixture.uuid, withModelCache: true)
        guard let tail = fixture.walTail else { return }
        try appendLeavingWAL(tail, to: url)
    }

    /// Inserts `tail` into the store at `url` and keeps the result the way a running app leaves
    /// it: the new rows committed to `-wal` and not checkpointed into the main file.
    static func appendLeavingWAL(_ tail: Dataset, to url: URL) throws {
        try WriteAheadLog.commitLeavingWAL(to: url) { db in
            let sink = StoreWriter.Sink(db: db, schema: tail.schema)
            for entity in tail.schema.entities {
                for record in tail.records[entity.name] ?? [] { try sink.insert(record, into: entity.name) }
                if let highest = sink.maximumPrimaryKeys[entity.name] {
                    try db.execute(
                        sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_NAME = ?", arguments: [highest, entity.name])
                }
            }
            // The profile was saved again by the app: a changed row, and its Z_OPT counts the save.
            try db.execute(sql: "UPDATE ZPLAYERPROFILE SET ZTOTALXP = ZTOTALXP + 40, Z_OPT = Z_OPT + 1")
        }
    }
}

extension WriteAheadLog {
    /// Commits what `body` writes to the store at `url` and leaves it the way a running app does:
    /// in `-wal`, not checkpointed into the main file. The write happens on a copy; the copy is
    /// taken back with its `-wal` and `-shm` while its connection is still open (closing would
    /// checkpoint and delete the WAL), and its WAL made deterministic.
    static func commitLeavingWAL(to url: URL, _ body: (Database) throws -> Void) throws {
        let staging = try TemporaryDirectory.create(prefix: "questbak-wal-fixture")
        defer { TemporaryDirectory.remove(staging) }
        let working = staging.appendingPathComponent(url.lastPathComponent)
        try FileManager.default.copyItem(at: url, to: working)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: working.path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.inTransaction {
                try body(db)
                return .commit
            }
        }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
            try FileManager.default.copyItem(atPath: working.path + suffix, toPath: url.path + suffix)
        }
        try queue.close()
        try makeDeterministic(walAt: URL(fileURLWithPath: url.path + "-wal"), shmAt: URL(fileURLWithPath: url.path + "-shm"))
    }

    /// SQLite salts a new WAL with random bytes. Fixtures must be byte-identical across runs, so
    /// the salts are replaced by fixed values and every checksum recomputed. The `-shm` index is
    /// zeroed: it is process-local state that the first connection rebuilds from the WAL anyway.
    static func makeDeterministic(walAt walURL: URL, shmAt shmURL: URL) throws {
        var bytes = [UInt8](try Data(contentsOf: walURL))
        guard bytes.count >= 32 else { return }
        func word(_ offset: Int) -> UInt32 { bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        func setWord(_ offset: Int, _ value: UInt32) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(3 - index))) }
        }
        let bigEndianChecksums = word(0) == 0x377F_0683
        let pageSize = Int(word(8))
        let (oldSalt1, oldSalt2) = (word(16), word(20))
        let (newSalt1, newSalt2): (UInt32, UInt32) = (0x5155_4553, 0x5442_414B)
        func checksum(_ range: Range<Int>, _ seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
            var (s0, s1) = seed
            var offset = range.lowerBound
            while offset < range.upperBound {
                let pair = (0..<2).map { part -> UInt32 in
                    let start = offset + 4 * part
                    let slice = bytes[start..<start + 4]
                    return bigEndianChecksums
                        ? slice.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                        : slice.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                }
                s0 = s0 &+ pair[0] &+ s1
                s1 = s1 &+ pair[1] &+ s0
                offset += 8
            }
            return (s0, s1)
        }
        setWord(16, newSalt1)
        setWord(20, newSalt2)
        var running = checksum(0..<24, (0, 0))
        setWord(24, running.0)
        setWord(28, running.1)
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, (word(offset + 8), word(offset + 12)) == (oldSalt1, oldSalt2) {
            setWord(offset + 8, newSalt1)
            setWord(offset + 12, newSalt2)
            running = checksum(offset..<offset + 8, running)
            running = checksum(offset + 24..<offset + 24 + pageSize, running)
            setWord(offset + 16, running.0)
            setWord(offset + 20, running.1)
            offset += 24 + pageSize
        }
        try Data(bytes).write(to: walURL)
        let shmSize = (try? FileManager.default.attributesOfItem(atPath: shmURL.path)[.size] as? NSNumber)?.intValue ?? 32_768
        try Data(count: shmSize).write(to: shmURL)
    }
}
