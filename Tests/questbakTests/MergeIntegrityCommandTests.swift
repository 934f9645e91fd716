import Foundation
import QuestBakTestSupport
import XCTest

/// The merged store's integrity check, answered by the check of the store's copy it was made
/// from where the merge wrote no page of it (`Merger.verify`'s `integrityShown`): only that copy's
/// "ok" stands for the merged store's; a damaged store fails the merge as it always did.
final class MergeIntegrityCommandTests: XCTestCase, MergeTesting {
    /// A store whose header counts a freelist page it does not have: SQLite reads it, and
    /// `integrity_check` says it is damaged. Its own archive merges into it without writing a page
    /// (nothing to add): the merge fails on the integrity check, and leaves the store as it was.
    func testADamagedStoreTheMergeWritesNothingToFailsItsIntegrityCheck() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        // The WAL folded in first: the header read is the main file's.
        _ = try sql(store, "PRAGMA wal_checkpoint(TRUNCATE)")
        var bytes = try Data(contentsOf: store)
        let freelistCount = bytes[36..<40].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } + 1
        bytes.replaceSubrange(36..<40, with: (0..<4).map { UInt8(truncatingIfNeeded: freelistCount >> (24 - 8 * $0)) })
        try bytes.write(to: store)
        XCTAssertNotEqual(try sql(store, "PRAGMA integrity_check"), "ok", "the damage is what integrity_check finds")
        let before = files(store)
        let result = try Questbak.run(["import", archive.path, "--merge", "--into", store.path, "--json"])
        XCTAssertEqual(result.status, 74, result.standardError)
        XCTAssertTrue(result.standardError.contains("expected integrity_check ok, found damage"), result.standardError)
        XCTAssertEqual(files(store), before, "a merge that fails leaves the store as it was")
    }
}
