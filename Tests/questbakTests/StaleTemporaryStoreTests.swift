import Foundation
import QuestBakTestSupport
import XCTest

/// Temporary stores beside a target, left by a questbak that was killed, are removed by the next
/// run that writes there; those of a process that still runs are kept. This is the branch every
/// platform but iOS takes (`ProcessLiveness`); in an iOS app nothing is removed as stale.
final class StaleTemporaryStoreTests: XCTestCase {
    func testTemporaryStoresOfKilledRunsAreRemovedAndThoseOfLiveOnesKept() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let folder = directory.path("restore")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let target = folder.appendingPathComponent("default.store")
        // A pid no process has (beyond Linux's largest pid), and this test's own, which lives.
        let stale = [".default.store.questbak-99999999-AbCd1234", "default.store.questbak-backup-1.partial-99999999"]
        let live = [".default.store.questbak-\(getpid())-AbCd1234", "default.store.questbak-backup-1.partial-\(getpid())"]
        for name in stale + live { try Data(repeating: 1, count: 10).write(to: folder.appendingPathComponent(name)) }
        let result = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        XCTAssertTrue(left.isDisjoint(with: stale), "\(left)")
        XCTAssertTrue(left.isSuperset(of: live), "\(left)")
        XCTAssertTrue(left.contains("default.store"), "\(left)")
    }
}
