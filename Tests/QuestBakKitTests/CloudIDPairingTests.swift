import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// The cloudID key's matching of a store's own archive by pairing each record with the store's
/// of the same `Z_PK` (`RecordMerge.pairedBySameKey`): where it answers that it paired every
/// record, the map holds what the key table's lookup and the archive side's take-back give;
/// where not, it holds nothing of the entity.
final class CloudIDPairingTests: XCTestCase {
    private static func id(_ number: Int) -> StoredValue {
        .text(Data(String(format: "%08X-BFBC-4B98-A4F6-%012X", number, 7).utf8))
    }

    private static func lowercased(_ value: StoredValue) -> StoredValue {
        guard case .text(let bytes) = value else { return value }
        return .text(Data(String(decoding: bytes, as: UTF8.self).lowercased().utf8))
    }

    /// One side's records: `Z_PK` → (`Z_ENT`, cloudID).
    private typealias Side = [Int64: (entity: Int64, cloudID: StoredValue)]

    private static func side(_ values: [StoredValue], from first: Int64 = 1) -> Side {
        Dictionary(uniqueKeysWithValues: values.enumerated().map { (first + Int64($0.offset), (1, $0.element)) })
    }

    func testPairingBySameKeyGivesTheLookupsRowsOrNone() throws {
        let ids = (0..<300).map(Self.id)
        let same = Self.side(ids)
        let twin = Self.lowercased(ids[7])
        // The column's declaration: Core Data's, or with a collation on one side.
        let (text, nocase) = ("VARCHAR", "VARCHAR COLLATE NOCASE")
        var lost = same
        lost[11] = nil
        var moreInStore = same
        for (offset, value) in (300..<305).map(Self.id).enumerated() { moreInStore[301 + Int64(offset)] = (1, value) }
        // Another entity's record holds, in the archive, the cloudID of the store's record of its key.
        var otherEntity = same
        otherEntity[301] = (2, Self.id(900))
        var withOwnOfKey = same
        withOwnOfKey[301] = (1, Self.id(900))
        var sharedInStore = same
        sharedInStore[301] = (1, ids[3])
        var caseTwins = same
        caseTwins[301] = (1, twin)
        var blob = same
        if case .text(let bytes) = ids[4] { blob[5] = (1, .blob(bytes)) }
        var nullInBoth = same
        nullInBoth[3] = (1, .null)
        var changed = same
        changed[6] = (1, Self.lowercased(ids[5]))
        let cases: [(name: String, store: Side, archive: Side, storeColumn: String, archiveColumn: String, pairsAll: Bool)] = [
            ("the same records", same, same, text, text, true),
            ("the store has more", moreInStore, same, text, text, true),
            ("another entity's record of a key the store's entity has", withOwnOfKey, otherEntity, text, text, true),
            ("the store lost one", lost, same, text, text, false),
            ("keys renumbered", same, Self.side(ids, from: 2), text, text, false),
            ("one's cloudID in lower case", same, changed, text, text, false),
            // A store cloudID two store records share: the lookup finds two, and matches neither.
            ("shared by two store records", sharedInStore, same, text, text, false),
            // Twins NOCASE takes for one in the archive's table: the take-back takes both back.
            ("case twins, NOCASE in the archive's table", caseTwins, caseTwins, text, nocase, false),
            ("case twins, NOCASE in the store's table", caseTwins, caseTwins, nocase, text, false),
            ("the store's cloudID as a BLOB in the archive", same, blob, text, text, false),
            ("a NULL in both", nullInBoth, nullInBoth, text, text, false),
            ("no archive record", same, [:], text, text, false),
        ]
        var answers: Set<Bool> = []
        for (name, store, archive, storeColumn, archiveColumn, pairsAll) in cases {
            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ':memory:' AS incoming")
                for (schema, column, records) in [("main", storeColumn, store), ("incoming", archiveColumn, archive)] {
                    try db.execute(sql: "CREATE TABLE \(schema).ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID \(column))")
                    let insert = try db.makeStatement(sql: "INSERT INTO \(schema).ZTHING (Z_PK, Z_ENT, ZCLOUDID) VALUES (?, ?, ?)")
                    for (key, record) in records.sorted(by: { $0.key < $1.key }) {
                        try ExactSQL.execute(insert, [.integer(key), .integer(record.entity), record.cloudID])
                    }
                }
                try db.execute(
                    sql:
                        "CREATE TEMP TABLE \(RecordMerge.mapName("ZTHING")) (incoming INTEGER PRIMARY KEY, store INTEGER NOT NULL, how INTEGER NOT NULL)"
                )
                let expected = try Self.lookupsRows(db)
                let count = { (side: Side) in side.values.filter { $0.entity == 1 }.count }
                let paired = try RecordMerge.pairedBySameKey(
                    column: "ZCLOUDID", of: "ZTHING", storeRows: "s.Z_ENT = 1", archiveRows: "i.Z_ENT = 1", storeCount: count(store),
                    archiveCount: count(archive), storeCloudIDsAreIdentities: nil, db: db)
                let rows = try Self.pairs(
                    db,
                    sql:
                        "SELECT incoming, store FROM \(RecordMerge.mapName("ZTHING")) WHERE how = \(RecordMerge.MapOrigin.cloudID.rawValue)"
                )
                XCTAssertEqual(paired.matchedEveryRecord, pairsAll, name)
                if paired.matchedEveryRecord {
                    XCTAssertEqual(rows, expected, name)
                } else {
                    XCTAssertEqual(rows, [], "\(name): the rows written are taken back")
                }
                answers.insert(paired.matchedEveryRecord)
            }
        }
        XCTAssertEqual(answers, [true, false], "the cases give both answers")
    }

    /// What the cloudID key's lookup in `RecordMerge.match` gives the records of `Z_ENT` 1, with
    /// the archive side's take-back asked in SQL (the filter `cloudIDsAreIdentities` stands for).
    private static func lookupsRows(_ db: Database) throws -> [[Int64]] {
        try db.execute(sql: "CREATE TEMP TABLE questbak_key (pk INTEGER, k0)")
        try db.execute(
            sql: "INSERT INTO temp.questbak_key SELECT s.Z_PK, s.ZCLOUDID FROM main.ZTHING s WHERE s.Z_ENT = 1 AND s.ZCLOUDID IS NOT NULL")
        defer { try? db.execute(sql: "DROP TABLE temp.questbak_key") }
        return try pairs(
            db,
            sql: """
                SELECT ipk, spk FROM (
                    SELECT i.Z_PK AS ipk, (SELECT CASE WHEN count(*) = 1 THEN min(k.pk) END FROM temp.questbak_key k WHERE k.k0 = +i.ZCLOUDID) AS spk
                    FROM incoming.ZTHING i WHERE i.Z_ENT = 1
                    AND (\(DeterministicID.wellFormedSQL("i.ZCLOUDID")) AND i.ZCLOUDID IN (SELECT x.ZCLOUDID FROM incoming.ZTHING x
                         WHERE x.Z_ENT = 1 GROUP BY x.ZCLOUDID HAVING count(*) = 1)) IS 1
                ) WHERE spk IS NOT NULL
                """)
    }

    private static func pairs(_ db: Database, sql: String) throws -> [[Int64]] {
        try Row.fetchAll(db, sql: sql + " ORDER BY 1").map { [$0[0], $0[1]] }
    }
}

extension RecordMergeShortcutTests {
    /// A store merged with its own archive (the same records: the fixture's and 120 estimations
    /// more), the store changed as each case says: with the shortcuts (the records paired by
    /// key) and without (the key table's lookup), the same counts, report and tables.
    func testAStoresOwnArchiveIsMergedTheSameWithThePairingByKeyAndWithout() throws {
        let cases: [(name: String, editStore: String?, matchedBy: [String: Int])] = [
            ("the same records", nil, ["cloudID": 123]),
            (
                "two more in the store",
                "INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID) "
                    + "SELECT Z_ENT, 1, ZSESSION, 'more ' || Z_PK, 30000 + Z_PK, 60, printf('%08X-0000-4B98-A4F6-00000000000A', Z_PK) "
                    + "FROM ZTASKESTIMATION WHERE Z_PK IN (1, 2)",
                ["cloudID": 123]
            ),
            ("one lost by the store", "DELETE FROM ZTASKESTIMATION WHERE Z_PK = 50", ["cloudID": 122]),
            (
                // A record new to the store with one of its cloudIDs: the lookup finds two
                // records, and matches by cloudID none of the archive's copies of it.
                "a cloudID two store records share",
                "INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID) "
                    + "SELECT Z_ENT, 1, ZSESSION, 'copy', 40000, 60, ZCLOUDID FROM ZTASKESTIMATION WHERE Z_PK = 60",
                ["cloudID": 122, "natural key": 1]
            ),
        ]
        for (name, editStore, matchedBy) in cases {
            let directory = try TemporaryTestDirectory()
            // The store made as the archive's side (2) is, then changed.
            let (store, archive) = try storeAndArchive(
                in: directory, recordedAt: { _ in "10000 + n.i" }, cloudIDSide: { _ in "1" },
                edit: { db, side in
                    guard side == 1 else { return }
                    try db.execute(
                        sql: "UPDATE ZTASKESTIMATION SET ZCLOUDID = printf('%08X-0000-4B98-A4F6-000000000002', Z_PK) WHERE Z_PK <= 3")
                    try db.execute(sql: "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = 62 WHERE Z_PK > 3")
                    if let editStore { try db.execute(sql: editStore) }
                })
            let (with, without) = try mergedWithAndWithoutShortcuts(archive, into: store, in: directory)
            XCTAssertEqual(with.counts["TaskEstimation"]?.matchedBy, matchedBy, name)
            try assertSameMerges(with, without, name)
        }
    }
}
