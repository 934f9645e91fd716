import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// `diff`'s shortcuts (`Differ.Shortcuts`): `diff_map` filled only when a statement reads it, and
/// a twin whose every record its cloudID pairs with itself counted so, its pairs not written.
/// Each input is compared with the shortcuts and without them (the work they spare done), and
/// the counts, how each entity was matched and the listing must be the same.
final class DifferShortcutTests: XCTestCase {
    private struct Outcome {
        var lines: [String]
        var rootsLookedUp: Set<String>
        var pairsWritten: Int
        var keysSkipped: Set<String>
    }

    private func diff(_ a: URL, _ b: URL, _ shortcuts: Differ.Shortcuts) throws -> Outcome {
        let work = try TemporaryTestDirectory()
        return try Differ.diff(a, b, profiles: [.timeQuest], workDirectory: work.url, shortcuts: shortcuts) { listing in
            return Outcome(
                lines: try DiffTestSides.lines(of: listing), rootsLookedUp: listing.rootsLookedUp, pairsWritten: try listing.pairsWritten(),
                keysSkipped: listing.keysSkipped)
        }
    }

    private static var none: Differ.Shortcuts {
        var shortcuts = Differ.Shortcuts()
        shortcuts.fillsKeyMapWhenRead = false
        shortcuts.pairsIdentityByCount = false
        shortcuts.decidesIdentityFromLoad = false
        shortcuts.skipsCloudIDsNotShared = false
        return shortcuts
    }

    /// The outcome with every shortcut, after asserting it is the one without any, and without each.
    private func checked(_ a: URL, _ b: URL, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let fast = try diff(a, b, Differ.Shortcuts())
        XCTAssertEqual(fast.lines, try diff(a, b, Self.none).lines, label, file: file, line: line)
        var onlyMap = Differ.Shortcuts()
        onlyMap.pairsIdentityByCount = false
        XCTAssertEqual(fast.lines, try diff(a, b, onlyMap).lines, label, file: file, line: line)
        var onlyCount = Differ.Shortcuts()
        onlyCount.fillsKeyMapWhenRead = false
        XCTAssertEqual(fast.lines, try diff(a, b, onlyCount).lines, label, file: file, line: line)
        var countedInSQL = Differ.Shortcuts()
        countedInSQL.decidesIdentityFromLoad = false
        XCTAssertEqual(fast.lines, try diff(a, b, countedInSQL).lines, label, file: file, line: line)
        var triesEveryCloudID = Differ.Shortcuts()
        triesEveryCloudID.skipsCloudIDsNotShared = false
        let tried = try diff(a, b, triesEveryCloudID)
        XCTAssertEqual(fast.lines, tried.lines, label, file: file, line: line)
        XCTAssertEqual(tried.keysSkipped, [], label, file: file, line: line)
        return fast
    }

    private func edit(_ store: URL, _ sql: String) throws {
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: sql) }
    }

    func testAStoreAndItsCopyOrArchiveNeedNoPairsWrittenAndNoKeyMap() throws {
        let sides = try DiffTestSides("v2-typical")
        for (a, b) in [(sides.store, sides.copy), (sides.store, sides.archive), (sides.archive, sides.store)] {
            let outcome = try checked(a, b, "\(a.lastPathComponent) \(b.lastPathComponent)")
            XCTAssertEqual(outcome.lines.first, "0 added, 0 removed, 0 changed")
            XCTAssertTrue(outcome.lines.contains { $0.hasPrefix("TaskEstimation by cloudID: 0 0 0") }, "\(outcome.lines)")
            // Every record of v2-typical but the profile (matched as the singleton: its cloudID
            // is not well formed) has a cloudID of its own: no other pair is written, no key
            // looked up (the profile's keys name no record).
            XCTAssertTrue(outcome.lines.contains { $0.hasPrefix("PlayerProfile by singleton: 0 0 0") }, "\(outcome.lines)")
            XCTAssertEqual(outcome.pairsWritten, 1)
            XCTAssertEqual(outcome.rootsLookedUp, [])
        }
        // Without the shortcuts, the same diff writes the pairs and fills the map.
        let full = try diff(sides.store, sides.copy, Self.none)
        XCTAssertGreaterThan(full.pairsWritten, 1)
        XCTAssertFalse(full.rootsLookedUp.isEmpty)
    }

    func testEveryFixtureAgainstItsCopyAndArchive() throws {
        // v1-anomalies: orphans (dangling keys), cloudIDs shared and malformed; v1-edge-cases;
        // kitchen-sink: to-manys and sub-entities; bennie-game: entities that name each other.
        for fixture in ["v1-anomalies", "v1-edge-cases", "v1-typical", "v1-wal", "AnyApp/kitchen-sink", "AnyApp/bennie-game"] {
            let sides = try DiffTestSides(fixture)
            for (a, b) in [(sides.store, sides.archive), (sides.store, sides.copy), (sides.archive, sides.store)] {
                _ = try checked(a, b, "\(fixture): \(a.lastPathComponent) \(b.lastPathComponent)")
            }
        }
    }

    /// A twin whose cloudIDs are not all its records' own (one shared by two estimations, one
    /// malformed) is not counted as paired whole: its pairs are written, and the records the
    /// cloudID leaves are matched by the natural key, through `diff_map`.
    func testATwinWithASharedOrMalformedCloudIDIsPairedRecordByRecord() throws {
        for change in [
            "UPDATE ZTASKESTIMATION SET ZCLOUDID = (SELECT ZCLOUDID FROM ZTASKESTIMATION ORDER BY Z_PK LIMIT 1) WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)",
            "UPDATE ZTASKESTIMATION SET ZCLOUDID = 'not a cloudID' WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)",
            "UPDATE ZTASKESTIMATION SET ZCLOUDID = NULL WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)",
        ] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture("v2-typical")
            try edit(store, change)
            let copy = directory.path("copy.store")
            try FileManager.default.copyItem(at: store, to: copy)
            let archive = directory.path("a.qbak")
            try DiffTestSides.export(store, to: archive)
            for (a, b) in [(store, copy), (store, archive)] {
                let outcome = try checked(a, b, change)
                XCTAssertEqual(outcome.lines.first, "0 added, 0 removed, 0 changed", change)
                XCTAssertTrue(
                    outcome.lines.contains { $0.hasPrefix("TaskEstimation by cloudID, natural key") }, "\(change): \(outcome.lines)")
                XCTAssertGreaterThan(outcome.pairsWritten, 1, change)
                // The natural key (session, taskDisplayName, recordedAt) looks sessions up.
                XCTAssertEqual(outcome.rootsLookedUp, ["GameSession"], change)
            }
        }
    }

    /// Two stores that differ: records matched by natural keys that name other records (a
    /// session by its routine, an estimation by its session), which look B's keys up in
    /// `diff_map`; changed, added and removed records listed.
    func testStoresThatDifferAreMatchedThroughTheKeyMapAsBefore() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        try edit(
            b,
            """
            UPDATE ZGAMESESSION SET ZCLOUDID = NULL;
            UPDATE ZTASKESTIMATION SET ZCLOUDID = NULL WHERE Z_PK % 2 = 0;
            UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK % 5 = 0;
            DELETE FROM ZTASKESTIMATION WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION);
            UPDATE ZTASKESTIMATION SET ZSESSION = 99999 WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION);
            """)
        let archive = directory.path("b.qbak")
        try DiffTestSides.export(b, to: archive)
        for (left, right) in [(a, b), (b, a), (a, archive)] {
            let outcome = try checked(left, right, "\(left.lastPathComponent) \(right.lastPathComponent)")
            XCTAssertNotEqual(outcome.lines.first, "0 added, 0 removed, 0 changed")
            XCTAssertTrue(outcome.lines.contains { $0.hasPrefix("GameSession by natural key") }, "\(outcome.lines)")
            XCTAssertTrue(outcome.rootsLookedUp.contains("GameSession"), "\(outcome.rootsLookedUp)")
        }
    }

    /// A second device's store: the same records under cloudIDs of its own. No cloudID is on
    /// both sides, so the cloudID key is not tried in SQL, and the records are matched by their
    /// natural keys as when it is. One value kept (a session's), or the other side's values not
    /// well formed, decide it the other way and the same way.
    func testACloudIDKeyNoValueOfWhichBothSidesHaveIsNotTriedInSQL() throws {
        let newCloudIDs = """
            UPDATE ZGAMESESSION SET ZCLOUDID = upper(printf('%08x-0000-4000-8000-%012x', Z_PK, Z_PK + 7));
            UPDATE ZTASKESTIMATION SET ZCLOUDID = upper(printf('%08x-0000-4000-8000-%012x', Z_PK, Z_PK + 9));
            UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK % 3 = 0;
            """
        // (The entities not changed are B's twins, each record paired with itself.)
        let entities = ["GameSession", "TaskEstimation"]
        for (change, skipped) in [
            (newCloudIDs, entities),
            (
                newCloudIDs
                    + "UPDATE ZGAMESESSION SET ZCLOUDID = (SELECT x.ZCLOUDID FROM a.ZGAMESESSION x WHERE x.Z_PK = ZGAMESESSION.Z_PK) WHERE Z_PK = 2;",
                ["TaskEstimation"]
            ),
            ("UPDATE ZGAMESESSION SET ZCLOUDID = 'not a cloudID'; UPDATE ZTASKESTIMATION SET ZCLOUDID = 'x' || Z_PK;", entities),
        ] {
            let directory = try TemporaryTestDirectory()
            let a = try directory.copyFixture("v2-typical")
            let b = try directory.copyFixture("v2-typical", as: "second")
            try DatabaseQueue(path: b.path).writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS a", arguments: [a.path])
                try db.execute(sql: change)
                try db.execute(sql: "DETACH DATABASE a")
            }
            let archive = directory.path("second.qbak")
            try DiffTestSides.export(b, to: archive)
            for (left, right) in [(a, b), (b, a), (a, archive), (archive, a)] {
                let label = "\(change) \(left.lastPathComponent) \(right.lastPathComponent)"
                let outcome = try checked(left, right, label)
                XCTAssertEqual(outcome.keysSkipped, Set(skipped.map { "\($0): cloudID" }), label)
                XCTAssertTrue(outcome.lines.contains { $0.hasPrefix("TaskEstimation by natural key") }, "\(label): \(outcome.lines)")
                XCTAssertTrue(outcome.lines.first?.hasPrefix("0 added, 0 removed, ") == true, "\(label): \(outcome.lines)")
            }
        }
    }
}
