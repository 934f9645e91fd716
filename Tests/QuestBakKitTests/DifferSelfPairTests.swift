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

    private func export(_ store: URL, to archive: URL) throws {
        var options = Exporter.Options(createdAt: 0)
        options.profiles = [.timeQuest]
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: options)
    }

    func testRecordsLeftUncomparedAreThoseTheSQLFindsTheSame() throws {
        // v1-anomalies: a task names a routine no record is (its key is mapped to itself);
        // kitchen-sink: to-manys and sub-entities; bennie-game: entities that name each other.
        for fixture in ["v2-typical", "v1-anomalies", "v1-wal", "AnyApp/kitchen-sink", "AnyApp/bennie-game"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let copy = try directory.copyFixture(fixture, as: "copy")
            let archive = directory.path("a.qbak")
            try export(store, to: archive)
            for (a, b) in [(store, archive), (store, copy), (archive, store)] {
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
        try export(b, to: archive)
        for (left, right) in [(a, b), (a, archive), (b, a)] {
            let skipping = try listing(left, right, inSQL: false)
            XCTAssertEqual(skipping, try listing(left, right, inSQL: true))
            XCTAssertTrue(
                skipping.contains { $0.hasPrefix("TaskEstimation ") && $0.hasSuffix(": 0 0 \(estimationsOfIt ?? 0)") }, "\(skipping)")
        }
    }
}
