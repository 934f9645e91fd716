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

    /// A twin's count of records whose cloudID is well formed and their own, decided from the
    /// loader's census (`Comparison.everyRecordHasItsOwn`), against the count in SQL: the same
    /// answer wherever the census answers, over values shared next to each other or far apart,
    /// by three records, differing only in case, malformed, missing, and with filters that flag
    /// nearly everything, a few, or more than the census keeps; loaded whole and thin (no row),
    /// and with the log of hashes read in rounds.
    func testTheCensusOfCloudIDsAnswersAsTheCountInSQL() throws {
        func cloudID(_ value: Int) -> String { String(format: "%08X-0000-4000-8000-%012X", value, value) }
        let unique: [JSONValue?] = (0..<2000).map { .string(cloudID($0)) }
        var cases: [(label: String, values: [JSONValue?], expected: Bool?)] = [
            ("unique", unique, true),
            ("none", [], true),
            ("one", [.string(cloudID(7))], true),
            ("shared next to each other", unique + [unique[1999]], nil),
            ("shared far apart", unique + [unique[0]], nil),
            ("shared by three", unique + [unique[5], unique[5]], nil),
            // Well formed or not, the same letters in lower case are another value.
            ("in lower case", unique + [.string(cloudID(0xAB).lowercased())], DeterministicID.isWellFormed(cloudID(0xAB).lowercased())),
            ("malformed", unique + [.string("not a cloudID")], false),
            ("missing", unique + [nil], false),
            ("shared and malformed", unique + [unique[3], .string("x")], false),
        ]
        cases.append(("all the same", Array(repeating: unique[0], count: 50), nil))
        var decided = 0
        try DatabaseQueue().write { db in
            for (bits, limit) in [(64, 5000), (1 << 12, 5000), (1 << 23, Differ.CloudIDCensus.suspectLimit), (64, 10)] {
                for (number, item) in cases.enumerated() {
                    // Loaded whole, and thin (no row: the census is all there is).
                    var loaders: [Differ.Loader] = []
                    for thin in [false, true] {
                        let loader = Differ.Loader(
                            db: db, prefix: "t\(bits)_\(limit)_\(number)_\(thin)_", filterBits: bits, suspectLimit: limit)
                        // Another entity's values share the filter: its flags are suspects of nobody's.
                        try loader.add("Other", [("_pk", .integer(1)), ("cloudID", .string(cloudID(9)))])
                        for (index, value) in item.values.enumerated() {
                            var members: [(key: String, value: JSONValue)] = [("_pk", .integer(Int64(index + 1)))]
                            if let value { members.append(("cloudID", value)) } else { members.append(("title", .string("no cloudID"))) }
                            try loader.add("Entity", members, thin: thin)
                        }
                        try loader.flush()
                        loaders.append(loader)
                    }
                    guard let table = loaders[0].tables["Entity"], let thinTable = loaders[1].tables["Entity"] else {
                        XCTAssertTrue(item.values.isEmpty)
                        continue
                    }
                    XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM \(thinTable.name)"), 0)
                    XCTAssertEqual(thinTable.count, table.count)
                    let column = try XCTUnwrap(table.columns["cloudID"])
                    let rows = "SELECT \(column) AS k FROM \(table.name) WHERE w0 = 1"
                    let counted = try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM (\(rows)) WHERE k NOT IN (SELECT k FROM (\(rows)) GROUP BY k HAVING count(*) > 1)")
                    let inSQL = counted == table.count
                    let label = "\(item.label), \(bits) bits, \(limit) kept"
                    let answer = try Differ.Comparison.everyRecordHasItsOwn("cloudID", in: table)
                    if let answer {
                        decided += 1
                        XCTAssertEqual(answer, inSQL, label)
                    }
                    // Where the census must answer (with more flagged than it keeps too: the log of
                    // hashes is then read in rounds), and where it must leave it to SQL (a value on
                    // two records).
                    XCTAssertEqual(answer, item.expected, label)
                    XCTAssertEqual(inSQL, item.expected ?? false, label)
                    // Thin, and read in rounds of a few hashes: the same answers.
                    XCTAssertEqual(try Differ.Comparison.everyRecordHasItsOwn("cloudID", in: thinTable), answer, "\(label), thin")
                    var dropped = table
                    dropped.census[0].suspects = nil
                    XCTAssertEqual(
                        try Differ.Comparison.everyRecordHasItsOwn("cloudID", in: dropped, hashesPerRound: 97), answer, "\(label), rounds")
                }
            }
        }
        XCTAssertGreaterThan(decided, 20)
    }
}
