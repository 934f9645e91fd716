import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// `diff`'s thin twins (`Differ.Shortcuts.loadsTwinsThin`): a store A's member that B may hold
/// byte for byte is loaded thin (`Differ.ThinTables`) and whole only when a statement reads more
/// of it, and a store B of A's bytes is not read at all (`Differ.StoreBytes`). Each input is
/// diffed with the shortcut and without it, and the counts, how each entity was matched, the
/// fields only one side has and the listing must be the same.
final class DifferThinTwinTests: XCTestCase {
    private struct Outcome {
        var lines: [String]
        var thinEntities: Set<String>
        var readBAsA: Bool
    }

    private func diff(_ a: URL, _ b: URL, thin: Bool) throws -> Outcome {
        let work = try TemporaryTestDirectory()
        var shortcuts = Differ.Shortcuts()
        shortcuts.loadsTwinsThin = thin
        return try Differ.diff(a, b, profiles: [.timeQuest], workDirectory: work.url, shortcuts: shortcuts) { listing in
            return Outcome(lines: try DiffTestSides.lines(of: listing), thinEntities: listing.thinEntities, readBAsA: listing.readBAsA)
        }
    }

    /// The outcome with the shortcut, after asserting its lines are those without it.
    private func checked(_ a: URL, _ b: URL, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let fast = try diff(a, b, thin: true)
        let full = try diff(a, b, thin: false)
        XCTAssertEqual(fast.lines, full.lines, label, file: file, line: line)
        XCTAssertEqual(full.thinEntities, [], label, file: file, line: line)
        XCTAssertFalse(full.readBAsA, label, file: file, line: line)
        return fast
    }

    private func edit(_ store: URL, _ sql: String) throws {
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: sql) }
    }

    func testAStoreAndItsArchiveOrCopyKeepTheirTwinsThin() throws {
        let sides = try DiffTestSides("v2-typical")
        let archive = try checked(sides.store, sides.archive, "store, archive")
        XCTAssertEqual(archive.lines.first, "0 added, 0 removed, 0 changed")
        // Every entity whose records all have a cloudID of their own stays thin; the profile's
        // cloudID is not well formed, so it is loaded whole from the start.
        XCTAssertTrue(archive.thinEntities.contains("TaskEstimation"), "\(archive.thinEntities)")
        XCTAssertTrue(archive.thinEntities.contains("GameSession"), "\(archive.thinEntities)")
        XCTAssertFalse(archive.thinEntities.contains("PlayerProfile"), "\(archive.thinEntities)")
        XCTAssertFalse(archive.readBAsA)
        let copy = try checked(sides.store, sides.copy, "store, copy")
        XCTAssertTrue(copy.readBAsA)
        XCTAssertEqual(copy.thinEntities, archive.thinEntities)
        // An archive A is read as before: nothing thin.
        let reversed = try checked(sides.archive, sides.store, "archive, store")
        XCTAssertEqual(reversed.thinEntities, [])
    }

    /// A diff whose twins stay thin leaves no copy of a store in the temporary folder: the thin
    /// tables' reload once held the side that held it, a cycle that kept each snapshot (and its
    /// folder) alive as long as the process, which in an app is long.
    func testAThinDiffLeavesNoSnapshotBehind() throws {
        let sides = try DiffTestSides("v2-typical")
        // This process's only: the other tests of a parallel run make their own at the same time.
        func snapshots() throws -> Set<String> {
            Set(
                try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
                    $0.hasPrefix("questbak-snapshot-\(getpid()).")
                })
        }
        let before = try snapshots()
        for b in [sides.copy, sides.archive] {
            let outcome = try diff(sides.store, b, thin: true)
            XCTAssertFalse(outcome.thinEntities.isEmpty, "a diff with nothing thin tests nothing here")
            XCTAssertEqual(try snapshots().subtracting(before), [], b.lastPathComponent)
        }
    }

    func testEveryFixtureAgainstItsCopyAndArchive() throws {
        // v1-anomalies: orphans, cloudIDs shared and malformed; kitchen-sink: to-manys and
        // sub-entities; bennie-game: entities that name each other; the gates' stores.
        for fixture in [
            "v1-anomalies", "v1-edge-cases", "v1-typical", "v1-wal", "v2-typical", "AnyApp/kitchen-sink", "AnyApp/bennie-game",
        ] {
            let sides = try DiffTestSides(fixture)
            for (a, b) in [(sides.store, sides.archive), (sides.store, sides.copy)] {
                let outcome = try checked(a, b, "\(fixture): \(a.lastPathComponent) \(b.lastPathComponent)")
                XCTAssertEqual(outcome.lines.first, "0 added, 0 removed, 0 changed", fixture)
            }
        }
    }

    /// A thin twin that a later statement reads further is loaded whole first: a cloudID shared
    /// by two estimations (the count pairs not every record, the natural key reads the table), a
    /// malformed or missing one after the first record (loaded whole at once), and a record
    /// changed after the first line (B's member is not A's: A's is loaded whole, and compared).
    func testAThinTwinReadFurtherIsLoadedWholeFirst() throws {
        let last = "(SELECT max(Z_PK) FROM ZTASKESTIMATION)"
        for (change, staysThin) in [
            (
                "UPDATE ZTASKESTIMATION SET ZCLOUDID = (SELECT ZCLOUDID FROM ZTASKESTIMATION ORDER BY Z_PK LIMIT 1) WHERE Z_PK = \(last)",
                false
            ),
            ("UPDATE ZTASKESTIMATION SET ZCLOUDID = 'not a cloudID' WHERE Z_PK = \(last)", false),
            ("UPDATE ZTASKESTIMATION SET ZCLOUDID = NULL WHERE Z_PK = \(last)", false),
            ("UPDATE ZTASKESTIMATION SET ZSESSION = 99999 WHERE Z_PK = \(last)", true),
        ] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture("v2-typical")
            let original = directory.path("original.qbak")
            try DiffTestSides.export(store, to: original)
            try edit(store, change)
            let archive = directory.path("a.qbak")
            try DiffTestSides.export(store, to: archive)
            let same = try checked(store, archive, change)
            XCTAssertEqual(same.lines.first, "0 added, 0 removed, 0 changed", change)
            XCTAssertEqual(same.thinEntities.contains("TaskEstimation"), staysThin, "\(change): \(same.thinEntities)")
            // Against the archive from before the change: its first line is A's, its digest not.
            let before = try checked(store, original, change)
            XCTAssertNotEqual(before.lines.first, "0 added, 0 removed, 0 changed", change)
            XCTAssertFalse(before.thinEntities.contains("TaskEstimation"), "\(change): \(before.thinEntities)")
        }
    }

    /// Two stores whose bytes differ are both read, even when their records are the same, and a
    /// store that differs only in its WAL is not A's bytes.
    func testStoresOfOtherBytesAreBothRead() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        // The same records, other bytes: a page rewritten by VACUUM.
        try DatabaseQueue(path: b.path).writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        let vacuumed = try checked(a, b, "vacuumed")
        XCTAssertFalse(vacuumed.readBAsA)
        XCTAssertEqual(vacuumed.lines.first, "0 added, 0 removed, 0 changed")
        try edit(
            b, "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)")
        let changed = try checked(a, b, "changed")
        XCTAssertFalse(changed.readBAsA)
        XCTAssertTrue(changed.lines.contains { $0.hasPrefix("TaskEstimation by cloudID: 0 0 1") }, "\(changed.lines)")
    }

    func testSameFileComparesEveryByte() throws {
        let directory = try TemporaryTestDirectory()
        let (one, other) = (directory.path("one"), directory.path("other"))
        var bytes = Data(repeating: 7, count: (1 << 20) + 5)
        try bytes.write(to: one)
        try bytes.write(to: other)
        XCTAssertTrue(try Differ.StoreBytes.sameFile(one.path, other.path))
        bytes[bytes.count - 1] = 8
        try bytes.write(to: other)
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, other.path))
        try bytes.dropLast().write(to: other)
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, other.path))
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, directory.path("absent").path))
        XCTAssertTrue(try Differ.StoreBytes.sameFile(directory.path("absent").path, directory.path("none").path))
    }
}
