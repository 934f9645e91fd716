import Foundation
import QuestBakKit
import XCTest

/// A migration to an app profile's version through the public API (a plain import): the same
/// migration as to a new build's model, with the profile's model as the target.
final class MigrationToAVersionTests: XCTestCase {
    private var copies: FixtureCopies!
    private var folder: URL { copies.folder }

    override func setUpWithError() throws {
        copies = try FixtureCopies()
    }

    override func tearDownWithError() throws {
        copies.remove()
    }

    /// A copy of a bundled TimeQuest fixture store, with its -wal and -shm.
    private func copyOfFixture(_ name: String) throws -> URL {
        try copies.copy(name + "/default.store", as: name)
    }

    func testAV1StoreMigratesToTheProfilesVersionAndEveryRecordGetsItsOwnCloudID() async throws {
        let store = try copyOfFixture("v1-wal")
        let output = folder.appendingPathComponent("Migrated/default.store")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        var options = QuestBak.MigrateOptions()
        options.now = Date(timeIntervalSince1970: 1_767_225_600)
        let result = try await QuestBak.migrate(store: store, toVersion: "2.0.0", of: .timeQuest, output: output, options: options)
        XCTAssertEqual(result.sourceSchemaVersion, "1.0.0")
        XCTAssertEqual(result.targetSchemaVersion, "2.0.0")
        XCTAssertEqual(result.counts, ["migration.cloudID": 18])
        XCTAssertEqual(try QuestBak.inspect(store: output).versionIdentifiers, ["2.0.0"])
    }

    func testAVersionNoProfileHasIsAUsageError() async throws {
        let store = try copyOfFixture("v1-typical")
        let output = folder.appendingPathComponent("out.store")
        func category(_ version: String, of schemas: KnownSchemas) async -> QuestBakError.Category? {
            do {
                _ = try await QuestBak.migrate(store: store, toVersion: version, of: schemas, output: output)
                return nil
            } catch {
                XCTAssertFalse(error.message.isEmpty)
                return error.category
            }
        }
        let unknown = await category("9.9.9", of: .timeQuest)
        XCTAssertEqual(unknown, .usage)
        let noProfile = await category("2.0.0", of: .none)
        XCTAssertEqual(noProfile, .usage)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    /// A change log that cannot be written refuses the migration before it starts: an in-place
    /// migration that failed over its log afterwards would have replaced the store and lost the
    /// result that says where the old one was kept.
    func testAnUnwritableChangeLogRefusesAnInPlaceMigrationBeforeItStarts() async throws {
        let store = try copyOfFixture("v1-typical")
        let before = try Data(contentsOf: store)
        var options = QuestBak.MigrateOptions()
        options.now = Date(timeIntervalSince1970: 1_767_225_600)
        options.repairLog = folder.appendingPathComponent("no-such-folder/changes.jsonl")
        do {
            _ = try await QuestBak.migrate(store: store, toVersion: "2.0.0", of: .timeQuest, output: nil, options: options)
            XCTFail("the migration ran though its change log cannot be written")
        } catch {
            XCTAssertEqual(error.category, .outputExists, error.message)
        }
        XCTAssertEqual(try Data(contentsOf: store), before)
        let left = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path)
        XCTAssertFalse(left.contains { $0.contains("questbak-backup") }, "\(left)")
    }
}
