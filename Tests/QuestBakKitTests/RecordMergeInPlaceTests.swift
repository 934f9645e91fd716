import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// Where every store record in both is matched once, in the archive's order, the merge reads
/// the records that differ from the tables themselves and writes what it settled after the
/// last (`RecordMerge.storeKeysRise`); else, and in tests with `usesShortcuts` off, through a
/// scratch table it writes as it goes. Both must leave the same store and the same report.
final class RecordMergeInPlaceTests: XCTestCase {
    /// 120 estimations in both (beside the fixture's three, the same in both and matched by
    /// cloudID), matched by natural key, each differing: their cloudIDs (one
    /// superseded each), their estimates (a conflict), and every third lacking its actual
    /// seconds in the store (a fill), every fifth its rating too (two changes in one record).
    private func stores(in directory: TemporaryTestDirectory) throws -> (incoming: URL, base: URL) {
        let incoming = directory.path("incoming.store")
        try InsertedValuesTests.clean().write(to: incoming, uuid: RuleRun.storeUUID)
        let base = directory.path("base.store")
        try InsertedValuesTests.clean().write(to: base, uuid: RuleRun.storeUUID)
        for (store, side) in [(base, 1), (incoming, 2)] {
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
                        INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZACTUALSECONDS,
                                                     ZRATINGRAWVALUE, ZCLOUDID)
                        SELECT e.Z_ENT, 1, e.ZSESSION, 'task ' || n.i, 10000 + n.i, 60 + \(side) + n.i,
                               CASE WHEN \(side) = 1 AND n.i % 3 = 0 THEN NULL ELSE 70 + n.i END,
                               CASE WHEN \(side) = 1 AND n.i % 5 = 0 THEN NULL ELSE 'close' END,
                               printf('%08X-BFBC-4B98-A4F6-%012X', n.i, \(side))
                        FROM n, (SELECT * FROM ZTASKESTIMATION WHERE Z_PK = 1) e
                        """)
            }
            try queue.close()
        }
        return (incoming, base)
    }

    func testReadingInPlaceLeavesWhatTheScratchTableLeaves() throws {
        let directory = try TemporaryTestDirectory()
        let (incoming, base) = try stores(in: directory)
        for preference in [Merger.Preference.store, .archive] {
            func merge(inPlace: Bool) throws -> (store: URL, counts: [String: RecordMerge.Counts], entries: [RepairLog.LoggedEntry]) {
                let name = "\(preference)-\(inPlace)"
                let store = directory.path("\(name).store")
                try FileManager.default.copyItem(at: base, to: store)
                let work = directory.url.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
                let log = try RepairLog(directory: work)
                let counts = try RecordMergeTestRun.merge(incoming, into: store, log: log, usesShortcuts: inPlace, preference: preference)
                return (store, counts, try log.firstEntries(100_000))
            }
            let inPlace = try merge(inPlace: true)
            let scratch = try merge(inPlace: false)
            let message = "prefer \(preference)"
            XCTAssertEqual(inPlace.counts["TaskEstimation"]?.matchedBy, ["cloudID": 3, "natural key": 120], message)
            XCTAssertEqual(inPlace.counts["TaskEstimation"]?.changed, preference == .store ? 56 : 120, message)
            for (entity, counts) in inPlace.counts {
                let other = scratch.counts[entity]
                XCTAssertEqual(
                    [counts.inStore, counts.inArchive, counts.inserted, counts.changed],
                    other.map { [$0.inStore, $0.inArchive, $0.inserted, $0.changed] }, "\(message): \(entity)")
            }
            XCTAssertEqual(inPlace.entries, scratch.entries, message)
            XCTAssertEqual(inPlace.entries.filter { $0.rule == "fill" }.count, 64, message)
            try assertSameTables(inPlace.store, scratch.store, message)
            // What was settled was written: the fills always, the archive's estimates when preferred.
            let queue = try DatabaseQueue(path: inPlace.store.path)
            let written = try queue.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT count(*) FILTER (WHERE ZACTUALSECONDS IS NULL), count(*) FILTER (WHERE ZESTIMATEDSECONDS = 62 + substr(ZTASKDISPLAYNAME, 6)),
                               count(*) FILTER (WHERE Z_OPT = 2)
                        FROM ZTASKESTIMATION WHERE ZTASKDISPLAYNAME LIKE 'task %'
                        """)
            }
            try queue.close()
            XCTAssertEqual(
                written.first.map { [$0[0], $0[1], $0[2]] as [Int] }, [0, preference == .store ? 0 : 120, preference == .store ? 56 : 120],
                message)
        }
    }

    /// The keys' order the in-place reading needs, asked of the map: strictly rising store keys
    /// by archive key, the records only the archive has (`new`) and other tables not counted.
    func testStoreKeysRiseOnlyWhereEachStoreRecordComesOnceInTheArchivesOrder() throws {
        let cases: [(rows: [(incoming: Int64, store: Int64, how: RecordMerge.MapOrigin)], rises: Bool)] = [
            ([], true),
            ([(1, 5, .naturalKey), (2, 6, .cloudID), (7, 9, .naturalKey)], true),
            ([(1, 5, .naturalKey), (2, 5, .cloudID)], false),
            ([(1, 5, .naturalKey), (2, 4, .naturalKey)], false),
            ([(1, 5, .naturalKey), (2, 1, .new), (3, 6, .naturalKey)], true),
            ([(1, 5, .naturalKey), (2, 5, .new), (3, 7, .content)], true),
            ([(3, 5, .naturalKey), (1, 9, .naturalKey)], false),
        ]
        let queue = try DatabaseQueue()
        try queue.write { db in
            for table in ["ZA", "ZB", "ZC"] {
                try db.execute(
                    sql:
                        "CREATE TEMP TABLE \(RecordMerge.mapName(table)) (incoming INTEGER PRIMARY KEY, store INTEGER NOT NULL, how INTEGER NOT NULL)"
                )
            }
            let naturalKey = RecordMerge.MapOrigin.naturalKey.rawValue
            for (index, example) in cases.enumerated() {
                for table in ["ZA", "ZB", "ZC"] { try db.execute(sql: "DELETE FROM \(RecordMerge.mapName(table))") }
                // Other tables' rows, which fall.
                try db.execute(sql: "INSERT INTO \(RecordMerge.mapName("ZA")) VALUES (1, 9, \(naturalKey))")
                try db.execute(sql: "INSERT INTO \(RecordMerge.mapName("ZC")) VALUES (1, 9, \(naturalKey)), (2, 1, \(naturalKey))")
                for row in example.rows {
                    try db.execute(
                        sql: "INSERT INTO \(RecordMerge.mapName("ZB")) VALUES (?, ?, ?)",
                        arguments: [row.incoming, row.store, row.how.rawValue])
                }
                XCTAssertEqual(try RecordMerge.storeKeysRise(table: "ZB", db: db), example.rises, "case \(index)")
            }
        }
    }

    /// Each table the merge's statements may look records up in has a map of its own
    /// (`MergeLayout.mappedTables`, made before the matching): the entities' tables, the tables
    /// their references name (here one no entity of the layout owns), and a join table's two sides.
    func testEveryTableAMapLookupMayNameIsMapped() {
        func field(_ name: String, reference: String? = nil) -> MergeLayout.Field {
            MergeLayout.Field(name: name, column: "Z" + name.uppercased(), kind: reference == nil ? .string : nil, reference: reference)
        }
        func entity(_ name: String, table: String, fields: [MergeLayout.Field]) -> MergeLayout.EntityPlan {
            MergeLayout.EntityPlan(
                name: name, table: table, number: nil, isRoot: true, fields: fields, keys: [], isSingleton: false, rules: [:],
                cloudIDColumn: nil)
        }
        let layout = MergeLayout(
            entities: [
                entity("Trip", table: "ZTRIP", fields: [field("name"), field("owner", reference: "ZPERSON")]),
                entity("Expense", table: "ZEXPENSE", fields: [field("trip", reference: "ZTRIP")]),
            ],
            joinTables: [
                MergeLayout.JoinTable(
                    name: "Z_1TAGS", entity: "Trip", relationship: "tags", sourceColumn: "Z_1TRIPS", sourceTable: "ZTRIP",
                    destinationColumn: "Z_3TAGS", destinationTable: "ZTAG")
            ])
        XCTAssertEqual(layout.mappedTables, ["ZEXPENSE", "ZPERSON", "ZTAG", "ZTRIP"])
        XCTAssertEqual(layout.tables, ["ZEXPENSE", "ZTRIP"])
    }
}
