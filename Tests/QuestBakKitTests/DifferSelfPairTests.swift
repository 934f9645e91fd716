import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// `diff` does not compare the records of an entity that cannot differ (each paired with itself,
/// each relationship to records that are all paired with themselves): the counts and the listing
/// are those the SQL comparison gives, which `comparesSelfPairsInSQL` runs all the same.
final class DifferSelfPairTests: XCTestCase {
    private func listing(_ a: URL, _ b: URL, inSQL: Bool) throws -> [String] {
        let work = try TemporaryTestDirectory()
        return try Differ.diff(a, b, profiles: [.timeQuest], workDirectory: work.url, comparesSelfPairsInSQL: inSQL) { listing in
            var lines = ["\(listing.result.added) added, \(listing.result.removed) removed, \(listing.result.changed) changed"]
            for entity in listing.result.entities {
                lines.append("\(entity.name) by \(entity.matchedBy): \(entity.added) \(entity.removed) \(entity.changed)")
                try listing.forEachLine(of: entity.name) { lines.append(String(describing: $0)) }
            }
            return lines
        }
    }

    func testRecordsLeftUncomparedAreThoseTheSQLFindsTheSame() throws {
        // v1-anomalies: a task names a routine no record is (its key is mapped to itself);
        // kitchen-sink: to-manys and sub-entities; bennie-game: entities that name each other.
        for fixture in ["v2-typical", "v1-anomalies", "v1-wal", "AnyApp/kitchen-sink", "AnyApp/bennie-game"] {
            let sides = try DiffTestSides(fixture)
            for (a, b) in [(sides.store, sides.archive), (sides.store, sides.copy), (sides.archive, sides.store)] {
                let skipping = try listing(a, b, inSQL: false)
                XCTAssertEqual(skipping, try listing(a, b, inSQL: true), "\(fixture): \(a.lastPathComponent) \(b.lastPathComponent)")
                XCTAssertEqual(skipping.first, "0 added, 0 removed, 0 changed", fixture)
            }
        }
        // Estimations paired with themselves whose sessions are not all: compared, and those of
        // the changed sessions differ (a session matched otherwise, or not at all).
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        for store in [a, b] {
            try DatabaseQueue(path: store.path).write { db in
                // An estimation of a session no record is, on both sides.
                try db.execute(sql: "UPDATE ZTASKESTIMATION SET ZSESSION = 99999 WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)")
            }
        }
        try DatabaseQueue(path: b.path).write { db in
            // Matched by its natural key: the same record, its estimations unchanged.
            try db.execute(sql: "UPDATE ZGAMESESSION SET ZCLOUDID = NULL WHERE Z_PK = (SELECT max(Z_PK) FROM ZGAMESESSION)")
            // Matched by no key: another session, and each of its estimations names another.
            try db.execute(
                sql: """
                    UPDATE ZGAMESESSION SET ZCLOUDID = '6A1C7E12-0B4D-4C6E-9F3A-2D5B8C1E0F47', ZSTARTEDAT = ZSTARTEDAT + 1 \
                    WHERE Z_PK = (SELECT min(Z_PK) FROM ZGAMESESSION)
                    """)
        }
        let estimationsOfIt = try DatabaseQueue(path: b.path).read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM ZTASKESTIMATION WHERE ZSESSION = (SELECT min(Z_PK) FROM ZGAMESESSION)")
        }
        XCTAssertGreaterThan(estimationsOfIt ?? 0, 0)
        let archive = directory.path("b.qbak")
        try DiffTestSides.export(b, to: archive)
        for (left, right) in [(a, b), (a, archive), (b, a)] {
            let skipping = try listing(left, right, inSQL: false)
            XCTAssertEqual(skipping, try listing(left, right, inSQL: true))
            XCTAssertTrue(
                skipping.contains { $0.hasPrefix("TaskEstimation ") && $0.hasSuffix(": 0 0 \(estimationsOfIt ?? 0)") }, "\(skipping)")
        }
    }

    /// A twin's shared cloudIDs are grouped among the records flagged as having a value seen
    /// before (`s0`), not among all: the values found so are those found among all, with a
    /// filter of 64 bits (nearly every record flagged) and of the default size (a few).
    func testTheCloudIDsSharedAreFoundAmongTheFlaggedAsAmongAll() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            for bits in [64, 1 << 23] {
                let loader = Differ.Loader(db: db, prefix: "t\(bits)", filterBits: bits)
                for index in 0..<3000 {
                    // Every 5th shares its value with the record before it, every 11th with the
                    // first; every 13th is not well formed (and so shares nothing).
                    let value = index % 5 == 0 && index > 0 ? index - 1 : index % 11 == 0 ? 0 : index
                    let cloudID = String(format: "%08X-0000-4000-8000-%012X", value, value)
                    let member: JSONValue = index % 13 == 0 ? .string(cloudID.lowercased() + "x") : .string(cloudID)
                    try loader.add("Entity", [("_pk", .integer(Int64(index + 1))), ("cloudID", member)])
                }
                try loader.add("Other", [("_pk", .integer(1)), ("cloudID", .string("00000001-0000-4000-8000-000000000001"))])
                try loader.flush()
                let table = try XCTUnwrap(loader.tables["Entity"])
                let column = try XCTUnwrap(table.columns["cloudID"])
                let rows = "SELECT \(column) AS k FROM \(table.name) WHERE w0 = 1"
                let all = try String.fetchAll(db, sql: "SELECT k FROM (\(rows)) GROUP BY k HAVING count(*) > 1 ORDER BY k")
                let amongFlagged = try String.fetchAll(
                    db,
                    sql: """
                        SELECT k FROM (\(rows)) WHERE k IN (SELECT \(column) FROM \(table.name) WHERE w0 = 1 AND s0 = 1) \
                        GROUP BY k HAVING count(*) > 1 ORDER BY k
                        """)
                XCTAssertGreaterThan(all.count, 300)
                XCTAssertEqual(amongFlagged, all, "\(bits) bits")
                let flagged = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name) WHERE s0 = 1") ?? 0
                XCTAssertGreaterThanOrEqual(flagged, all.count)
                if bits > 64 { XCTAssertLessThan(flagged, 1000, "the default filter flags few besides the values seen") }
            }
        }
    }
}
