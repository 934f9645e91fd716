import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// The cloudID key's lookup left out where no archive cloudID is the store's
/// (`RecordMerge.noCloudIDIsInBoth`): the answer is sound against the lookup it stands for, and
/// a merge gives the same store, counts and report with the shortcut and without it.
final class RecordMergeShortcutTests: XCTestCase {
    private func id(_ number: Int, side: Int) -> StoredValue {
        .text(Data(String(format: "%08X-BFBC-4B98-A4F6-%012X", number, side).utf8))
    }

    func testNoCloudIDIsInBothOnlyWhereTheKeysLookupFindsNone() throws {
        let store = (0..<300).map { id($0, side: 1) }
        let archive = (0..<300).map { id($0, side: 2) }
        func string(of value: StoredValue) -> String {
            guard case .text(let bytes) = value else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        let upper = string(of: store[200])
        // The column's declaration: Core Data's (TEXT affinity, which stores a number bound as text),
        // with a collation, or none (a hand-made store's: a number stays one).
        let (text, nocase, none) = ("VARCHAR", "VARCHAR COLLATE NOCASE", "")
        let cases: [(name: String, store: [StoredValue], archive: [StoredValue], column: String, expected: Bool)] = [
            ("disjoint", store, archive, text, true),
            ("one in both, past the first 64", store, archive + [store[200]], text, false),
            ("one in both, among the first 64", store, [store[7]] + archive, text, false),
            ("a case twin", store, archive + [.text(Data(upper.lowercased().utf8))], text, true),
            // The Bloom filter compares bytes, as the lookup does: a twin NOCASE takes for the
            // same is no match there. Among the archive's first, `IN` takes it for one: no.
            ("a case twin, NOCASE", store, archive + [.text(Data(upper.lowercased().utf8))], nocase, true),
            ("a case twin among the first, NOCASE", store, [.text(Data(upper.lowercased().utf8))] + archive, nocase, false),
            ("a NUL after one of the store's", store, archive + [.text(Data(upper.utf8) + Data([0]))], text, true),
            ("NULLs", store + [.null], [.null] + archive + [.null], text, true),
            ("the archive's all NULL", store, [.null, .null], text, true),
            ("the store's all NULL", [.null], archive, text, true),
            ("a BLOB in the store", store + [.blob(Data(upper.utf8))], archive, text, false),
            ("a number in the archive", store, archive + [.integer(7)], none, false),
            ("a number in the archive, stored as text", store, archive + [.integer(7)], text, true),
            ("the same number on both sides", store + [.integer(7)], archive + [.real(7)], none, false),
        ]
        var answers: Set<Bool> = []
        for (name, storeValues, archiveValues, column, expected) in cases {
            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ':memory:' AS incoming")
                for schema in ["main", "incoming"] {
                    try db.execute(
                        sql: """
                            CREATE TABLE \(schema).ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID \(column))
                            """)
                }
                try db.inTransaction {
                    for (schema, values) in [("main", storeValues), ("incoming", archiveValues)] {
                        let insert = try db.makeStatement(sql: "INSERT INTO \(schema).ZTHING (Z_ENT, ZCLOUDID) VALUES (?, ?)")
                        for value in values { try ExactSQL.execute(insert, [.integer(1), value]) }
                    }
                    // Another entity of the store's table holds every archive cloudID: not the entity's records.
                    let other = try db.makeStatement(sql: "INSERT INTO main.ZTHING (Z_ENT, ZCLOUDID) VALUES (2, ?)")
                    for value in archiveValues { try ExactSQL.execute(other, [value]) }
                    // The lookup as `RecordMerge.match` runs it: the store's values in a column
                    // without affinity or collation, each archive value looked up.
                    try db.execute(sql: "CREATE TEMP TABLE questbak_key (pk INTEGER, k0)")
                    try db.execute(
                        sql:
                            "INSERT INTO temp.questbak_key SELECT s.Z_PK, s.ZCLOUDID FROM main.ZTHING s WHERE s.Z_ENT = 1 AND s.ZCLOUDID IS NOT NULL"
                    )
                    let found =
                        try Int.fetchOne(
                            db,
                            sql: """
                                SELECT count(*) FROM incoming.ZTHING i WHERE i.Z_ENT = 1
                                AND EXISTS (SELECT 1 FROM temp.questbak_key k WHERE k.k0 = +i.ZCLOUDID)
                                """) ?? -1
                    try db.execute(sql: "DROP TABLE temp.questbak_key")
                    let answer = try RecordMerge.noCloudIDIsInBoth(
                        column: "ZCLOUDID", of: "ZTHING", storeRows: "s.Z_ENT = 1", archiveRows: "i.Z_ENT = 1",
                        storeCount: storeValues.count, db: db
                    ).noneInBoth
                    // Yes only where the lookup finds none; no may be said of a lookup that finds
                    // none (a number, a collation), never yes of one that finds any.
                    if answer { XCTAssertEqual(found, 0, "\(name): the lookup finds \(found)") }
                    XCTAssertEqual(answer, expected, name)
                    answers.insert(answer)
                    return .rollback
                }
            }
        }
        XCTAssertEqual(answers, [true, false], "the cases give both answers")
    }

    /// Two copies of a store whose estimations' cloudIDs differ, but for one past the first 64
    /// (which the shortcut finds only in its full pass, and whose natural key differs, so that
    /// only its cloudID matches it): merged with the shortcut and without, the stores, counts
    /// and reports are the same, and that record is matched by its cloudID.
    func testAMergeIsTheSameWithTheCloudIDShortcutAndWithout() throws {
        let directory = try TemporaryTestDirectory()
        let (base, incoming) = try storeAndArchive(
            in: directory, recordedAt: { "\($0) * 10000 + n.i" }, cloudIDSide: { "CASE WHEN n.i = 100 THEN 1 ELSE \($0) END" })
        let (with, without) = try mergedWithAndWithoutShortcuts(incoming, into: base, in: directory)
        XCTAssertEqual(with.counts["TaskEstimation"]?.matchedBy, ["cloudID": 1, "natural key": 3])
        XCTAssertEqual(with.counts["TaskEstimation"]?.inserted, 119)
        XCTAssertGreaterThan(with.entries.count, 119)
        try assertSameMerges(with, without)
    }

    typealias MergeRun = (store: URL, counts: [String: RecordMerge.Counts], entries: [RepairLog.LoggedEntry])

    /// `incoming` merged into a copy of `base` with the shortcuts, and into another without.
    func mergedWithAndWithoutShortcuts(
        _ incoming: URL, into base: URL, in directory: TemporaryTestDirectory
    ) throws -> (with: MergeRun, without: MergeRun) {
        func merge(usingShortcuts: Bool) throws -> MergeRun {
            let name = usingShortcuts ? "with" : "without"
            let store = directory.path("\(name).store")
            try FileManager.default.copyItem(at: base, to: store)
            let work = directory.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let log = try RepairLog(directory: work)
            let counts = try RecordMergeTestRun.merge(incoming, into: store, log: log, usesShortcuts: usingShortcuts)
            return (store, counts, try log.firstEntries(100_000))
        }
        return (try merge(usingShortcuts: true), try merge(usingShortcuts: false))
    }

    /// The same counts, report entries and tables.
    func assertSameMerges(_ with: MergeRun, _ without: MergeRun, _ name: String = "") throws {
        XCTAssertEqual(with.counts.keys.sorted(), without.counts.keys.sorted(), name)
        for (entity, counts) in with.counts {
            let other = without.counts[entity]
            XCTAssertEqual(counts.matchedBy, other?.matchedBy, "\(name) \(entity)")
            XCTAssertEqual(
                [counts.inStore, counts.inArchive, counts.inserted, counts.changed],
                other.map { [$0.inStore, $0.inArchive, $0.inserted, $0.changed] }, "\(name) \(entity)")
        }
        XCTAssertEqual(with.entries, without.entries, name)
        try assertSameTables(with.store, without.store, name)
    }

    /// The fixture store (`InsertedValuesTests.clean()`) twice, as the store (side 1) and the
    /// archive's store (side 2), each with 120 more estimations of one session, their recording
    /// date and their cloudID's last part (SQL of the side, over `n.i`, 1 to 120) as given; the
    /// fixture's own estimations get other cloudIDs on the archive's side, so that the
    /// shortcut's guess finds none of its first among the store's. `edit` changes each more.
    func storeAndArchive(
        in directory: TemporaryTestDirectory, recordedAt: (Int) -> String, cloudIDSide: (Int) -> String,
        edit: (Database, Int) throws -> Void = { _, _ in }
    ) throws -> (store: URL, archive: URL) {
        let stores = (directory.path("base.store"), directory.path("incoming.store"))
        for (side, store) in [(1, stores.0), (2, stores.1)] {
            try InsertedValuesTests.clean().write(to: store, uuid: RuleRun.storeUUID)
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
                        INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID)
                        SELECT e.Z_ENT, 1, e.ZSESSION, 'task ' || n.i, \(recordedAt(side)), 60 + \(side),
                               printf('%08X-BFBC-4B98-A4F6-%012X', n.i, \(cloudIDSide(side)))
                        FROM n, (SELECT * FROM ZTASKESTIMATION WHERE Z_PK = 1) e
                        """)
                if side == 2 {
                    try db.execute(
                        sql: "UPDATE ZTASKESTIMATION SET ZCLOUDID = printf('%08X-0000-4B98-A4F6-000000000002', Z_PK) WHERE Z_PK <= 3")
                }
                try edit(db, side)
            }
            try queue.close()
        }
        return stores
    }

    /// The settling's question whether every store cloudID is an identity, answered by the
    /// matching's pass over the store's cloudIDs (`RecordMerge.CloudIDPass`) where no record was
    /// inserted since, and asked again where one was: the merge is the same as with every
    /// question asked on its own (no shortcut), where the store shares a cloudID from the start,
    /// and where the archive's inserts make one shared. The archive's copies' identities fill
    /// the shared ones: two records' in the first case, one in the second.
    func testTheStoresCloudIDsAreAskedOnceOnlyWhereNothingWasInsertedBetween() throws {
        for insertsAShared in [false, true] {
            let directory = try TemporaryTestDirectory()
            // The same natural keys on both sides, other cloudIDs and another estimate.
            let (base, incoming) = try storeAndArchive(
                in: directory, recordedAt: { _ in "10000 + n.i" }, cloudIDSide: { "\($0)" },
                edit: { db, side in
                    if side == 1, !insertsAShared {
                        // A default two of the store's records share.
                        try db.execute(
                            sql: """
                                UPDATE ZTASKESTIMATION SET ZCLOUDID = (SELECT ZCLOUDID FROM ZTASKESTIMATION WHERE ZTASKDISPLAYNAME = 'task 99')
                                WHERE ZTASKDISPLAYNAME = 'task 100'
                                """)
                    }
                    if side == 2, insertsAShared {
                        // Two records new to the store with one of its cloudIDs (a default on the
                        // archive's side, so neither is matched by it): inserted.
                        try db.execute(
                            sql: """
                                INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID)
                                SELECT Z_ENT, 1, ZSESSION, 'extra ' || x.k, 20000 + x.k, 60, printf('%08X-BFBC-4B98-A4F6-%012X', 50, 1)
                                FROM ZTASKESTIMATION, (SELECT 1 AS k UNION ALL SELECT 2) x WHERE Z_PK = 1
                                """)
                    }
                })
            let (with, without) = try mergedWithAndWithoutShortcuts(incoming, into: base, in: directory)
            let name = insertsAShared ? "shared by the inserts" : "shared in the store"
            XCTAssertEqual(with.counts["TaskEstimation"]?.inserted, insertsAShared ? 2 : 0, name)
            let filledCloudIDs = with.entries.filter { $0.rule == RepairEntry.Rule.fill.rawValue && $0.field == "cloudID" }
            XCTAssertEqual(filledCloudIDs.count, insertsAShared ? 1 : 2, name)
            try assertSameMerges(with, without, name)
        }
    }
}
