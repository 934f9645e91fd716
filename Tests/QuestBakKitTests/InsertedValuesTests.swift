import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// A repair rule skips its check of an entity where what the restore inserted rules out anything
/// to find (`InsertedValues`). The restore must then repair exactly what it repairs with every
/// check run: each archive below is imported both ways and the reports and stores compared.
final class InsertedValuesTests: XCTestCase {
    static let ids = (0..<16).map { String(format: "8F2B6E9A-3C41-4D7E-9A0B-1C2D3E4F5A%02X", $0) }

    /// A V2 store with every value set and every cloudID its own: nothing to repair.
    static func clean() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, RuleDatasets.routine(["cloudID": .string(ids[0])]))
        for (key, name) in [(Int64(1), "brush"), (2, "floss")] {
            dataset.append(
                "RoutineTask", key,
                [
                    "name": .string(name), "displayName": .string(name.capitalized), "orderIndex": .integer(key - 1),
                    "routine": .integer(1), "referenceDurationSeconds": .integer(60), "cloudID": .string(ids[Int(key)]),
                ])
        }
        dataset.append(
            "GameSession", 1,
            [
                "startedAt": .date(20), "xpEarned": .integer(3), "routine": .integer(1), "isCalibration": .boolean(false),
                "cloudID": .string(ids[3]),
            ])
        for key in Int64(1)...3 { dataset.append("TaskEstimation", key, estimation(key)) }
        dataset.append(
            "PlayerProfile", 1,
            [
                "totalXP": .integer(5), "currentStreak": .integer(1), "createdAt": .date(30), "notificationHour": .integer(8),
                "notificationMinute": .integer(0), "notificationsEnabled": .boolean(true), "soundEnabled": .boolean(true),
            ])
        return dataset
    }

    static func estimation(_ key: Int64, _ values: [String: Value] = [:]) -> [String: Value] {
        var estimation: [String: Value] = [
            "taskDisplayName": .string("Task \(key)"), "estimatedSeconds": .double(60), "actualSeconds": .double(70),
            "differenceSeconds": .double(10), "accuracyPercent": .double(85), "ratingRawValue": .string("close"),
            "orderIndex": .integer(key), "recordedAt": .date(Double(20 + key)), "session": .integer(1),
            "cloudID": .string(ids[Int(3 + key)]),
        ]
        estimation.merge(values) { $1 }
        return estimation
    }

    /// The clean store with one thing changed, named for the test's messages.
    static var variants: [(name: String, dataset: Dataset)] {
        func changed(_ edit: (inout Dataset) -> Void) -> Dataset {
            var dataset = clean()
            edit(&dataset)
            return dataset
        }
        return [
            ("clean", clean()),
            ("an estimation's cloudID repeated", changed { $0.append("TaskEstimation", 4, estimation(4, ["cloudID": .string(ids[5])])) }),
            (
                "an estimation's cloudID malformed",
                changed { $0.append("TaskEstimation", 4, estimation(4, ["cloudID": .string("not-a-uuid")])) }
            ),
            ("an estimation's cloudID missing", changed { $0.append("TaskEstimation", 4, estimation(4, ["cloudID": .null])) }),
            (
                "an estimation's cloudID in lower case",
                changed { $0.append("TaskEstimation", 4, estimation(4, ["cloudID": .string(ids[7].lowercased())])) }
            ),
            // Another entity's cloudID is no repeat within an entity.
            (
                "a routine's cloudID on an estimation",
                changed { $0.append("TaskEstimation", 4, estimation(4, ["cloudID": .string(ids[0])])) }
            ),
            (
                "an estimation's natural key repeated",
                changed {
                    $0.append(
                        "TaskEstimation", 4,
                        estimation(4, ["taskDisplayName": .string("Task 2"), "recordedAt": .date(22), "cloudID": .string(ids[7])]))
                }
            ),
            (
                "an estimation's natural key repeated without a cloudID",
                changed {
                    $0.append(
                        "TaskEstimation", 4,
                        estimation(4, ["taskDisplayName": .string("Task 2"), "recordedAt": .date(22), "cloudID": .null]))
                }
            ),
            (
                "a natural key with a missing part",
                changed {
                    $0.append(
                        "TaskEstimation", 4, estimation(4, ["taskDisplayName": .null, "recordedAt": .date(22), "cloudID": .string(ids[7])]))
                    $0.append("TaskEstimation", 5, estimation(5, ["taskDisplayName": .null, "recordedAt": .date(22), "cloudID": .null]))
                }
            ),
            (
                // Its tasks then share their keys: found only because a repair came before.
                "a routine repeated, its tasks with it",
                changed {
                    $0.append("Routine", 2, RuleDatasets.routine(["cloudID": .string(ids[7])]))
                    $0.append(
                        "RoutineTask", 3,
                        [
                            "name": .string("brush"), "displayName": .string("Brush"), "orderIndex": .integer(0), "routine": .integer(2),
                            "referenceDurationSeconds": .integer(60), "cloudID": .null,
                        ])
                }
            ),
            (
                "a required value missing",
                changed {
                    $0.append(
                        "Routine", 2, RuleDatasets.routine(["name": .string("evening"), "displayName": .null, "cloudID": .string(ids[7])]))
                }
            ),
            (
                "two player profiles",
                changed { $0.append("PlayerProfile", 2, ["totalXP": .integer(9), "currentStreak": .integer(0), "createdAt": .date(40)]) }
            ),
            ("an orphan", changed { $0.append("TaskEstimation", 4, estimation(4, ["session": .integer(9), "cloudID": .string(ids[7])])) }),
            // The key names a record, of another entity: an orphan all the same.
            (
                "an orphan whose key is a task's",
                changed { $0.append("TaskEstimation", 4, estimation(4, ["session": .integer(2), "cloudID": .string(ids[7])])) }
            ),
            // Named before its session is inserted (estimations come after sessions): no orphan.
            (
                "a session that comes with a later key",
                changed {
                    $0.append(
                        "GameSession", 5,
                        [
                            "startedAt": .date(21), "xpEarned": .integer(1), "routine": .integer(1), "isCalibration": .boolean(false),
                            "cloudID": .string(ids[9]),
                        ])
                    $0.append("TaskEstimation", 4, estimation(4, ["session": .integer(5), "cloudID": .string(ids[7])]))
                }
            ),
            (
                "a task of a routine missing",
                changed {
                    $0.append(
                        "RoutineTask", 3,
                        [
                            "name": .string("rinse"), "displayName": .string("Rinse"), "orderIndex": .integer(2), "routine": .integer(7),
                            "referenceDurationSeconds": .integer(60), "cloudID": .string(ids[9]),
                        ])
                }
            ),
            (
                "an orphan key beyond the kept bits",
                changed {
                    $0.append("TaskEstimation", 4, estimation(4, ["session": .integer(KeyBits.limit + 1), "cloudID": .string(ids[7])]))
                }
            ),
            ("every rule", RuleDatasets.messy()),
        ]
    }

    /// What an import wrote and reported.
    struct Outcome: Equatable {
        var counts: [String: Int]
        var entries: [String]
        var notes: [String]
        var tables: [String: [[String]]]
    }

    func importing(_ archive: URL, validate: Bool = true, toVersion: String? = nil, skipping: Bool) throws -> Outcome {
        let directory = try TemporaryTestDirectory()
        let work = try TemporaryTestDirectory()
        var options = Importer.Options.timeQuest
        options.validate = validate
        options.targetVersion = toVersion
        options.skipsChecksTheInsertsRuleOut = skipping
        let target = directory.path("restored/default.store")
        let result = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
        return Outcome(
            counts: result.counts, entries: try result.log.firstEntries(10_000).map(\.sentence),
            // Which temporary folder each was restored into differs.
            notes: result.notes.filter { !$0.hasPrefix("created folder") },
            tables: try exactTables(target))
    }

    func assertSameBothWays(
        _ archive: URL, _ name: String, toVersion: String? = nil, file: StaticString = #filePath, line: UInt = #line
    )
        throws -> Outcome
    {
        let skipping = try importing(archive, toVersion: toVersion, skipping: true)
        let checking = try importing(archive, toVersion: toVersion, skipping: false)
        XCTAssertEqual(skipping.counts, checking.counts, name, file: file, line: line)
        XCTAssertEqual(skipping.entries, checking.entries, name, file: file, line: line)
        XCTAssertEqual(skipping.notes, checking.notes, name, file: file, line: line)
        XCTAssertEqual(skipping.tables, checking.tables, name, file: file, line: line)
        return skipping
    }

    func testAnArchiveRestoresAsWithEveryCheckRunWhateverItHoldsWrong() throws {
        let directory = try TemporaryTestDirectory()
        var cleanRepairs: [String: Int]?
        for (index, variant) in Self.variants.enumerated() {
            let store = directory.path("source-\(index).store")
            try variant.dataset.write(to: store, uuid: RuleRun.storeUUID)
            let archive = directory.path("backup-\(index).qbak")
            _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
            let outcome = try assertSameBothWays(archive, variant.name)
            let repairs = outcome.counts.filter { $0.key.hasPrefix("repair.") }
            // The clean store's repairs (its player profile's pinned cloudID) are the baseline.
            // Each other variant needs one more, but for those that are no damage: a check
            // skipped that should have run would leave it out, and the two ways would differ.
            guard let baseline = cleanRepairs else {
                cleanRepairs = repairs
                continue
            }
            switch variant.name {
            case "a routine's cloudID on an estimation", "an estimation's cloudID in lower case", "a session that comes with a later key":
                XCTAssertEqual(repairs, baseline, variant.name)
            case "a natural key with a missing part":
                XCTAssertNil(repairs["repair.dedup"], variant.name)
            default:
                XCTAssertNotEqual(repairs, baseline, variant.name)
            }
        }
    }

    /// A V1 archive restored as V2: every record lacks the cloudID and the values V2 added.
    func testAnOlderVersionRestoredAsANewerRestoresAsWithEveryCheckRun() throws {
        let directory = try TemporaryTestDirectory()
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append(
            "Routine", 1,
            ["name": .string("morning"), "displayName": .string("Morning"), "isActive": .boolean(true), "createdAt": .date(10)])
        dataset.append(
            "Routine", 2, ["name": .string("morning"), "displayName": .string("Again"), "isActive": .boolean(true), "createdAt": .date(10)])
        let store = directory.path("v1.store")
        try dataset.write(to: store, uuid: RuleRun.storeUUID)
        let archive = directory.path("v1.qbak")
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        let outcome = try assertSameBothWays(archive, "V1 as V2", toVersion: "2.0.0")
        XCTAssertEqual(outcome.counts["repair.dedup"], 1, "\(outcome.counts)")
        XCTAssertNotNil(outcome.counts["migration.cloudID"], "\(outcome.counts)")
    }

    /// Another app's store, repaired by its own model: cloudIDs and defaults.
    func testAModelArchiveRestoresAsWithEveryCheckRun() throws {
        let directory = try TemporaryTestDirectory()
        func note(_ key: Int64, title: FixtureValue, cloudID: FixtureValue) -> ModelRow {
            ModelRow("Note", key, ["code": .text("N\(key)"), "title": title, "cloudID": cloudID, "folder": .integer(1)])
        }
        let variants: [(String, [ModelRow])] = [
            (
                "clean",
                [note(1, title: .text("One"), cloudID: .text(Self.ids[1])), note(2, title: .text("Two"), cloudID: .text(Self.ids[2]))]
            ),
            (
                "a cloudID repeated",
                [note(1, title: .text("One"), cloudID: .text(Self.ids[1])), note(2, title: .text("Two"), cloudID: .text(Self.ids[1]))]
            ),
            (
                "a cloudID malformed",
                [note(1, title: .text("One"), cloudID: .text(Self.ids[1])), note(2, title: .text("Two"), cloudID: .text("x"))]
            ),
            (
                "a title missing",
                [note(1, title: .text("One"), cloudID: .text(Self.ids[1])), note(2, title: .null, cloudID: .text(Self.ids[2]))]
            ),
            (
                "a folder missing",
                [
                    note(1, title: .text("One"), cloudID: .text(Self.ids[1])),
                    ModelRow(
                        "Note", 2, ["code": .text("N2"), "title": .text("Two"), "cloudID": .text(Self.ids[2]), "folder": .integer(5)]),
                ]
            ),
        ]
        for (index, (name, notes)) in variants.enumerated() {
            let store = directory.path("model-\(index).store")
            var model = ModelStore(
                model: ModelRepairTests.model(unique: false), uuid: "5D0A1C2E-0000-4000-8000-00000000AB01",
                rows: [ModelRow("Folder", 1, ["name": .text("Inbox")])] + notes)
            model.frameworkVersion = 1526
            try ModelStoreWriter.write(model, to: store)
            let archive = directory.path("model-\(index).qbak")
            _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
            let outcome = try assertSameBothWays(archive, name)
            XCTAssertEqual(outcome.counts.isEmpty, name == "clean", "\(name): \(outcome.counts)")
        }
    }

    /// A cloudID column declared with a collation: two cloudIDs that differ only in case are one
    /// to the check's `GROUP BY`, though not to the notes (which compare bytes), so such a
    /// store's checks all run, and it restores as with every check run.
    func testACloudIDColumnWithACollationRestoresAsWithEveryCheckRun() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("nocase.store")
        var model = ModelStore(
            model: ModelRepairTests.model(unique: false), uuid: "5D0A1C2E-0000-4000-8000-00000000AB02",
            rows: [
                ModelRow("Folder", 1, ["name": .text("Inbox")]),
                ModelRow("Note", 1, ["code": .text("N1"), "title": .text("One"), "cloudID": .text(Self.ids[10]), "folder": .integer(1)]),
                ModelRow(
                    "Note", 2,
                    ["code": .text("N2"), "title": .text("Two"), "cloudID": .text(Self.ids[10].lowercased()), "folder": .integer(1)]),
            ])
        model.frameworkVersion = 1526
        try ModelStoreWriter.write(model, to: store)
        try editSchema(
            of: store,
            "UPDATE sqlite_master SET sql = replace(sql, 'ZCLOUDID VARCHAR', 'ZCLOUDID VARCHAR COLLATE NOCASE') WHERE name = 'ZNOTE'")
        let archive = directory.path("nocase.qbak")
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        let outcome = try assertSameBothWays(archive, "case twins under NOCASE")
        XCTAssertEqual(outcome.counts["repair.cloudID"], 1, "the check finds the twins: \(outcome.counts)")
    }

    // MARK: The notes themselves

    func testAFilterNeverForgetsAHash() {
        var set = ProbableSet(expectedCount: 10_000)
        var falsePositives = 0
        for number in UInt64(0)..<10_000 where set.insert(StableHasher.mix(number)) { falsePositives += 1 }
        // At 64 bits an item, a false "may" is rare; a missed repeat would be a wrong answer.
        XCTAssertLessThan(falsePositives, 5)
        for number in UInt64(0)..<10_000 { XCTAssertTrue(set.insert(StableHasher.mix(number)), "hash of \(number) forgotten") }
        // Far past its size it answers "may" more often, never "certainly not" to a repeat.
        var small = ProbableSet(expectedCount: 1)
        for number in UInt64(0)..<100_000 { _ = small.insert(number) }
        for number in UInt64(0)..<100_000 { XCTAssertTrue(small.insert(number)) }
    }

    /// Values SQLite calls equal (in a numeric column an integral REAL is stored as an INTEGER;
    /// -0.0 is 0.0) hash alike as parts of a natural key.
    func testKeyPartsSQLiteCallsEqualHashAlike() {
        func hash(_ value: StoredValue) -> UInt64 {
            var hasher = StableHasher(seed: 1)
            hasher.combine(keyPart: value)
            return hasher.value
        }
        XCTAssertEqual(hash(.integer(21)), hash(.real(21)))
        XCTAssertEqual(hash(.real(-0.0)), hash(.real(0)))
        XCTAssertEqual(hash(.real(-0.0)), hash(.integer(0)))
        XCTAssertEqual(hash(.text(Data("a".utf8))), hash(.text(Data("a".utf8))))
        XCTAssertNotEqual(hash(.text(Data("a".utf8))), hash(.blob(Data("a".utf8))))
        XCTAssertNotEqual(hash(.text(Data("Café".utf8))), hash(.text(Data("Cafe\u{301}".utf8))), "text compares byte for byte")
    }

    /// A suspect the filter flagged is a repeat only when two records hold it, compared as the
    /// checks' `GROUP BY` compares (numbers by value, text byte for byte).
    func testASuspectIsARepeatOnlyWhenTwoRecordsHoldIt() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZNAME VARCHAR, ZDAY TIMESTAMP)")
            for (key, entity, name, day) in [
                (1, 1, "a", 2.0), (2, 1, "a", 3.0), (3, 1, "b", 2.0), (4, 1, "b", 2.0), (5, 2, "c", 1.0), (6, 1, "c", 1.0),
            ] {
                try ExactSQL.execute(
                    db, sql: "INSERT INTO ZITEM VALUES (?, ?, ?, ?)",
                    [.integer(Int64(key)), .integer(Int64(entity)), .text(Data(name.utf8)), .real(day)])
            }
            let rows = "FROM ZITEM WHERE Z_ENT = 1"
            func repeated(_ suspects: [[StoredValue]]) throws -> Bool {
                try InsertedValues.anyRepeated(suspects, columns: ["ZNAME", "ZDAY"], rows: rows, db: db)
            }
            XCTAssertFalse(try repeated([]))
            XCTAssertFalse(try repeated([[.text(Data("a".utf8)), .real(2)]]), "a false alarm: held once")
            XCTAssertTrue(try repeated([[.text(Data("a".utf8)), .real(2)], [.text(Data("b".utf8)), .integer(2)]]), "2 is 2.0")
            XCTAssertFalse(try repeated([[.text(Data("c".utf8)), .real(1)]]), "another entity's record is not counted")
            XCTAssertFalse(try repeated([[.text(Data("B".utf8)), .real(2)]]), "text compares byte for byte")
            XCTAssertTrue(try InsertedValues.anyRepeated([[.text(Data("a".utf8))]], columns: ["ZNAME"], rows: rows, db: db))
        }
    }

    /// What the notes say, entity by entity, and that any logged change makes every answer "may".
    func testTheNotesSayMayWhereACheckCouldFindSomething() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let plan = ModelLayout.EntityPlan(
            name: "Item", number: 1, table: "ZITEM",
            fields: [
                ModelLayout.Field(path: ["cloudID"], column: "ZCLOUDID", kind: .string),
                ModelLayout.Field(path: ["name"], column: "ZNAME", kind: .string, isOptional: false),
                ModelLayout.Field(path: ["day"], column: "ZDAY", kind: .date, isOptional: false),
            ], toOne: [], toMany: [])
        // Without a store to look suspects up in, a suspect says "may".
        func cloud(_ notes: InsertedValues, _ plan: ModelLayout.EntityPlan, _ column: String) throws -> Bool {
            try notes.cloudIDsMayNeedRepair(in: column, of: plan, log: log, db: nil, rows: "")
        }
        func keys(_ notes: InsertedValues) throws -> Bool {
            try notes.naturalKeysMayRepeat(of: plan, columns: ["ZNAME", "ZDAY"], log: log, db: nil, rows: "")
        }
        let other = ModelLayout.EntityPlan(name: "Other", number: 2, table: "ZOTHER", fields: [], toOne: [], toMany: [])
        let notes = InsertedValues(
            naturalKeys: ["Item": ["name", "day"]], expectedRecords: 10,
            affinities: ["ZITEM": ["ZCLOUDID": .text, "ZNAME": .text, "ZDAY": .numeric]])
        notes.observe([.text(Data(Self.ids[0].utf8)), .text(Data("a".utf8)), .real(1)], primaryKey: 1, plan: plan)
        notes.observe([.text(Data(Self.ids[1].utf8)), .text(Data("a".utf8)), .real(2)], primaryKey: 2, plan: plan)
        notes.settle(loggedCount: log.total)
        XCTAssertFalse(try cloud(notes, plan, "ZCLOUDID"))
        XCTAssertTrue(try cloud(notes, plan, "ZOTHERID"), "only the column noted is known")
        XCTAssertFalse(try keys(notes))
        XCTAssertFalse(notes.mayHaveNull(in: "ZNAME", of: plan, log: log))
        XCTAssertFalse(try cloud(notes, other, "ZCLOUDID"), "no row, nothing to repair")

        notes.observe([.text(Data(Self.ids[0].utf8)), .text(Data("a".utf8)), .integer(2)], primaryKey: 3, plan: plan)
        XCTAssertTrue(try cloud(notes, plan, "ZCLOUDID"), "a cloudID repeated")
        XCTAssertTrue(try keys(notes), "2 and 2.0 are one key")

        let fresh = InsertedValues(
            naturalKeys: ["Item": ["name", "day"]], expectedRecords: 10,
            affinities: ["ZITEM": ["ZCLOUDID": .text, "ZNAME": .text, "ZDAY": .numeric]])
        fresh.observe([.null, .null, .real(.nan)], primaryKey: 4, plan: plan)
        fresh.settle(loggedCount: log.total)
        XCTAssertTrue(try cloud(fresh, plan, "ZCLOUDID"), "a cloudID missing")
        XCTAssertTrue(fresh.mayHaveNull(in: "ZNAME", of: plan, log: log))
        XCTAssertTrue(fresh.mayHaveNull(in: "ZDAY", of: plan, log: log), "SQLite stores a NaN as NULL")
        XCTAssertFalse(try keys(fresh), "a key with a missing part is never merged")

        let converted = InsertedValues(
            naturalKeys: ["Item": ["name", "day"]], expectedRecords: 10,
            affinities: ["ZITEM": ["ZCLOUDID": .text, "ZNAME": .text, "ZDAY": .numeric]])
        // Text in a numeric column may be stored as a number: "2" and 2 would be one key.
        converted.observe([.text(Data(Self.ids[0].utf8)), .text(Data("a".utf8)), .text(Data("2".utf8))], primaryKey: 5, plan: plan)
        converted.settle(loggedCount: log.total)
        XCTAssertTrue(try keys(converted))

        let logged = InsertedValues(naturalKeys: [:], expectedRecords: 10, affinities: [:])
        logged.observe([.text(Data(Self.ids[0].utf8)), .text(Data("a".utf8)), .real(1)], primaryKey: 6, plan: plan)
        logged.settle(loggedCount: log.total)
        XCTAssertFalse(logged.mayHaveNull(in: "ZNAME", of: plan, log: log))
        try log.record(
            RepairEntry(
                rule: .orphan, kind: .repair, entity: "Item", primaryKey: 1, cloudID: nil, field: "x", old: .value(.integer(1)),
                new: .value(.null)))
        XCTAssertTrue(logged.mayHaveNull(in: "ZNAME", of: plan, log: log), "a change since the inserts: every check runs")
        logged.invalidate()
        XCTAssertTrue(try cloud(logged, plan, "ZCLOUDID"))
    }

    /// A to-one may name nothing exactly where a key it named is no key inserted into its
    /// destination's entities, in the destination's table.
    func testTheNotesOfToOnesSayMayWhereAKeyNamesNothing() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let parent = ModelLayout.EntityPlan(name: "Folder", number: 1, table: "ZFOLDER", fields: [], toOne: [], toMany: [])
        let child = ModelLayout.EntityPlan(name: "Smart", number: 2, table: "ZFOLDER", fields: [], toOne: [], toMany: [])
        let elsewhere = ModelLayout.EntityPlan(name: "Tag", number: 4, table: "ZTAG", fields: [], toOne: [], toMany: [])
        let note = ModelLayout.EntityPlan(
            name: "Note", number: 3, table: "ZNOTE", fields: [], toOne: [.init(name: "folder", column: "ZFOLDER", destination: "Folder")],
            toMany: [])
        func mayNameNothing(_ notes: InsertedValues, destinations: [Int64] = [1, 2]) -> Bool {
            notes.toOneMayNameNothing(0, of: note, destinations: destinations, table: "ZFOLDER", log: log)
        }
        func notes(folders: [Int64], smart: [Int64] = [], tags: [Int64] = [], named: [StoredValue]) -> InsertedValues {
            let notes = InsertedValues(naturalKeys: [:], expectedRecords: 10, affinities: ["ZNOTE": ["ZFOLDER": .integer]])
            for (index, value) in named.enumerated() { notes.observe([value], primaryKey: Int64(index + 1), plan: note) }
            for key in folders { notes.observe([], primaryKey: key, plan: parent) }
            for key in smart { notes.observe([], primaryKey: key, plan: child) }
            for key in tags { notes.observe([], primaryKey: key, plan: elsewhere) }
            notes.settle(loggedCount: log.total)
            return notes
        }
        XCTAssertFalse(mayNameNothing(notes(folders: [1, 2, 700], named: [.integer(2), .null, .integer(700)])))
        XCTAssertTrue(mayNameNothing(notes(folders: [1], named: [.integer(2)])), "2 names nothing")
        XCTAssertFalse(mayNameNothing(notes(folders: [1], smart: [2], named: [.integer(2)])), "a sub-entity's record")
        XCTAssertTrue(mayNameNothing(notes(folders: [1], smart: [2], named: [.integer(2)]), destinations: [1]), "not under it")
        XCTAssertTrue(
            mayNameNothing(notes(folders: [1], tags: [2], named: [.integer(2)]), destinations: [1, 4]), "another table's record")
        XCTAssertTrue(mayNameNothing(notes(folders: [1, 2], named: [.text(Data("2".utf8))])), "not an integer as bound")
        XCTAssertTrue(mayNameNothing(notes(folders: [1], named: [.integer(-1)])), "a key the bits do not hold")
        XCTAssertTrue(mayNameNothing(notes(folders: [1, KeyBits.limit], named: [.integer(1)])), "a destination's key the bits do not hold")
        XCTAssertFalse(
            notes(folders: [], named: []).toOneMayNameNothing(0, of: note, destinations: [1], table: "ZFOLDER", log: log), "no record")
        let textColumn = InsertedValues(naturalKeys: [:], expectedRecords: 10, affinities: ["ZNOTE": ["ZFOLDER": .text]])
        textColumn.observe([.integer(1)], primaryKey: 1, plan: note)
        textColumn.observe([], primaryKey: 1, plan: parent)
        textColumn.settle(loggedCount: log.total)
        XCTAssertTrue(mayNameNothing(textColumn), "a TEXT column may store the key as text")
        let logged = notes(folders: [1], named: [.integer(1)])
        XCTAssertFalse(mayNameNothing(logged))
        try log.record(
            RepairEntry(
                rule: .dedup, kind: .repair, entity: "Folder", primaryKey: 1, cloudID: nil, field: nil, old: .value(.integer(1)),
                new: .value(.null)))
        XCTAssertTrue(mayNameNothing(logged), "a change since the inserts (a folder merged away)")
    }

    /// The restore notes a batch's rows before inserting them (`InsertedValues.note` for each,
    /// then `flush`), so that the filters are asked one row after another: the notes end as
    /// they end with each row observed on its own, whatever the batches. Rows of two entities
    /// (one with a cloudID and a natural key, one with neither), with cloudIDs repeated, missing
    /// and malformed, keys repeated, incomplete and stored otherwise, and more repeats than the
    /// suspects kept, so that both flags are set part way through a batch.
    func testNotesTakenInBatchesEndAsNotesTakenRowByRow() throws {
        let item = ModelLayout.EntityPlan(
            name: "Item", number: 1, table: "ZITEM",
            fields: [
                ModelLayout.Field(path: ["cloudID"], column: "ZCLOUDID", kind: .string),
                ModelLayout.Field(path: ["name"], column: "ZNAME", kind: .string, isOptional: false),
                ModelLayout.Field(path: ["day"], column: "ZDAY", kind: .date, isOptional: false),
            ], toOne: [.init(name: "other", column: "ZOTHER", destination: "Other")], toMany: [])
        let other = ModelLayout.EntityPlan(name: "Other", number: 2, table: "ZOTHER", fields: [], toOne: [], toMany: [])
        func notes() -> InsertedValues {
            InsertedValues(
                naturalKeys: ["Item": ["name", "day"]], expectedRecords: 50,
                affinities: ["ZITEM": ["ZCLOUDID": .text, "ZNAME": .text, "ZDAY": .numeric, "ZOTHER": .integer]])
        }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            // Later rounds repeat more, past the suspects kept (`suspectLimit`).
            let distinct = round < 20 ? 2_000 : 100
            var rows: [(values: [StoredValue], key: Int64, plan: ModelLayout.EntityPlan)] = []
            for key in 1...1_200 {
                if Int.random(in: 0..<10, using: &generator) == 0 {
                    rows.append(([], Int64(key), other))
                    continue
                }
                let id = Int.random(in: 0..<distinct, using: &generator)
                let cloudID: StoredValue
                switch Int.random(in: 0..<200, using: &generator) {
                case 0: cloudID = .null
                case 1: cloudID = .text(Data("not a UUID".utf8))
                default: cloudID = .text(Data(String(format: "%08X-0000-4000-8000-%012X", round, id).utf8))
                }
                let name: StoredValue = Int.random(in: 0..<300, using: &generator) == 0 ? .null : .text(Data("n\(id % 50)".utf8))
                let day: StoredValue =
                    switch Int.random(in: 0..<400, using: &generator) {
                    case 0: .text(Data("2".utf8))
                    case 1: .real(.nan)
                    default: .integer(Int64(id))
                    }
                rows.append(([cloudID, name, day, .integer(Int64.random(in: 1...1_200, using: &generator))], Int64(key), item))
            }
            let byRow = notes()
            for row in rows { byRow.observe(row.values, primaryKey: row.key, plan: row.plan) }
            let batched = notes()
            var start = 0
            while start < rows.count {
                let end = min(rows.count, start + Int.random(in: 1...600, using: &generator))
                for row in rows[start..<end] { batched.note(row.values, primaryKey: row.key, plan: row.plan) }
                batched.flush()
                start = end
            }
            XCTAssertEqual(batched.seen, byRow.seen, "round \(round)")
        }
        // The rounds reach both flags and both kinds of suspects, or they compare little.
        let repeated = notes()
        for key in 1...600 {
            let id = String(format: "00000000-0000-4000-8000-%012X", key % 3)
            repeated.note(
                [.text(Data(id.utf8)), .text(Data("n".utf8)), .integer(Int64(key % 3)), .null], primaryKey: Int64(key), plan: item)
        }
        repeated.flush()
        XCTAssertTrue(repeated.seen[0].cloudIDsMayNeedRepair && repeated.seen[0].naturalKeysMayRepeat)
        XCTAssertEqual(repeated.seen[0].cloudIDSuspects.count, InsertedValues.suspectLimit)
    }
}
