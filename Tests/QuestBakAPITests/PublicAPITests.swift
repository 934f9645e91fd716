import Foundation
import QuestBakKit
import XCTest

/// The public API as an app sees it: a plain import, and no package access (Package.swift), so a
/// symbol these tests use that is not public does not compile.
final class PublicAPITests: XCTestCase {
    private var copies: FixtureCopies!
    private var folder: URL { copies.folder }

    override func setUpWithError() throws {
        copies = try FixtureCopies()
    }

    override func tearDownWithError() throws {
        copies.remove()
    }

    private func copyOfFixture(_ path: String, as name: String, withWAL: Bool = true) throws -> URL {
        try copies.copy(path, as: name, withWAL: withWAL)
    }

    /// The work folders this process has under the system's temporary folder (their names carry
    /// the process id).
    private func temporaryFoldersOfThisProcess() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter {
            $0.hasPrefix("questbak-") && $0.contains("-\(getpid()).")
        }
    }

    func testARescueSavesTheStoreAndItsArchiveAndMergesThemIntoAFreshStore() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let before = try Data(contentsOf: store)
        let rescueFolder = folder.appendingPathComponent("Rescues/1")
        let rescued = try await QuestBak.rescue(store: store, into: rescueFolder)
        XCTAssertTrue(rescued.exported, "\(rescued.exportFailure ?? "")")
        XCTAssertGreaterThan(rescued.records, 0)
        XCTAssertEqual(try Data(contentsOf: store), before, "a rescue only reads the store")
        XCTAssertTrue(FileManager.default.fileExists(atPath: rescueFolder.appendingPathComponent("store.qbak").path))
        do {
            _ = try await QuestBak.rescue(store: store, into: rescueFolder)
            XCTFail("a second rescue into a folder with files in it was not refused")
        } catch {
            XCTAssertEqual(error.category, .outputExists)
        }
        // The app's fresh store: the same model, its records gone (the store emptied by a restore
        // of nothing is not at hand in the public API, so the merge goes into a copy).
        let fresh = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "Fresh")
        let merged = try await QuestBak.mergeRescue(from: rescueFolder, into: fresh)
        XCTAssertEqual(merged.outcome, .merged)
        XCTAssertEqual(merged.inserted, 0, "every rescued record is already in a copy of the store")
        XCTAssertTrue(merged.unplaced.isEmpty)
    }

    func testABackupVerifiesRestoresAndGivesBackTheStore() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        var options = QuestBak.BackupOptions()
        options.verify = true
        options.createdAt = Date(timeIntervalSince1970: 1_767_225_600)
        let summary = try await QuestBak.backUp(store: store, to: archive, options: options)
        XCTAssertNotNil(summary.verification)
        XCTAssertEqual(try QuestBak.inspect(archive: archive).creationDate, options.createdAt)

        let verification = try await QuestBak.verify(archive: archive)
        XCTAssertTrue(verification.restoresExactly)

        let restored = folder.appendingPathComponent("Restored/default.store")
        let repairLog = folder.appendingPathComponent("repairs.jsonl")
        var restoreOptions = QuestBak.RestoreOptions()
        restoreOptions.repairLog = repairLog
        let result = try await QuestBak.restore(archive: archive, into: restored, options: restoreOptions)
        XCTAssertEqual(result.entities.map(\.written), summary.entities.map(\.count))
        XCTAssertTrue(FileManager.default.fileExists(atPath: repairLog.path))
        let difference = try await QuestBak.diff(store, restored)
        XCTAssertTrue(difference.isEmpty, "\(difference)")
        // Every result names its files as URLs.
        XCTAssertEqual(summary.archive?.path, archive.path)
        XCTAssertEqual(verification.archive.path, archive.path)
        XCTAssertEqual(result.archive.path, archive.path)
        XCTAssertEqual(result.target?.path, restored.path)
        XCTAssertEqual([difference.a.path, difference.b.path], [store.path, restored.path])
        XCTAssertEqual(try QuestBak.inspect(store: restored).store.path, restored.path)
        XCTAssertEqual(try QuestBak.inspect(store: restored).entities.map(\.rows), try QuestBak.inspect(store: store).entities.map(\.rows))
        XCTAssertEqual(try temporaryFoldersOfThisProcess(), [])
    }

    func testAMergeInsertsTheRecordsAStoreLacksAndKeepsTheOldStore() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        try await QuestBak.backUp(store: store, to: archive)
        // Without its -wal the store lacks the last session's records (Fixtures/AnyApp/README.md).
        let older = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "Older", withWAL: false)
        let before = try QuestBak.inspect(store: older).entities.map(\.rows).reduce(0, +)
        let merged = try await QuestBak.merge(archive: archive, into: older)
        XCTAssertFalse(merged.unchanged)
        XCTAssertGreaterThan(merged.entities.map(\.inserted).reduce(0, +), 0)
        let backup = try XCTUnwrap(merged.backup)
        XCTAssertTrue(FileManager.default.fileExists(atPath: backup.path))
        XCTAssertEqual(merged.archive.path, archive.path)
        XCTAssertEqual(merged.target.path, older.path)
        XCTAssertTrue(merged.backupFiles.contains(backup), "the kept store is among its files: \(merged.backupFiles)")
        // A result is Encodable with its files as paths, as the command line's reports write them.
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(merged)) as? [String: Any])
        XCTAssertEqual(json["source"] as? String, archive.path)
        XCTAssertEqual(json["backup"] as? String, backup.path)
        XCTAssertGreaterThan(try QuestBak.inspect(store: older).entities.map(\.rows).reduce(0, +), before)
    }

    func testAMigrationToTheNewBuildsModelPassesItsGate() async throws {
        let gate = FixtureCopies.fixtures.appendingPathComponent("Gates/Ritualist")
        let old = try copyOfFixture("Gates/Ritualist/fixtures/v1-john/default.store", as: "Old")
        let newModel = gate.appendingPathComponent("next/default.store")
        let output = folder.appendingPathComponent("Migrated/default.store")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        let result = try await QuestBak.migrate(store: old, toModelOf: newModel, output: output)
        XCTAssertEqual(result.output.path, output.path)
        XCTAssertEqual(
            try QuestBak.inspect(store: output).versionIdentifiers, try QuestBak.inspect(store: newModel).versionIdentifiers)

        let checks = try await QuestBak.gateMigration(fixtures: gate.appendingPathComponent("fixtures"), toModelOf: newModel)
        XCTAssertTrue(checks.passed, checks.checks.filter { !$0.passed }.map(\.detail).joined(separator: "\n"))
    }

    func testEveryFailureIsAQuestBakErrorWithTheCategoryAnAppSwitchesOn() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        try await QuestBak.backUp(store: store, to: archive)

        func category(_ body: () async throws -> Void) async -> QuestBakError.Category? {
            do {
                try await body()
                return nil
            } catch let error as QuestBakError {
                XCTAssertFalse(error.message.isEmpty)
                return error.category
            } catch {
                XCTFail("not a QuestBakError: \(error)")
                return nil
            }
        }
        let missing = await category {
            try await QuestBak.backUp(
                store: self.folder.appendingPathComponent("none.store"), to: self.folder.appendingPathComponent("new.qbak"))
        }
        XCTAssertEqual(missing, .missingInput)
        // Foundation's own refusal to list a folder that is not there is a missing input too.
        let missingFixtures = await category {
            _ = try await QuestBak.gateMigration(fixtures: self.folder.appendingPathComponent("no-fixtures"), toModelOf: store)
        }
        XCTAssertEqual(missingFixtures, .missingInput)
        let exists = await category { try await QuestBak.backUp(store: store, to: archive) }
        XCTAssertEqual(exists, .outputExists)
        let notAStore = await category {
            try await QuestBak.backUp(store: archive, to: self.folder.appendingPathComponent("other.qbak"))
        }
        XCTAssertEqual(notAStore, .invalidInput)
        let storeExists = await category { try await QuestBak.restore(archive: archive, into: store) }
        XCTAssertEqual(storeExists, .outputExists)
        let notAnArchive = await category {
            try await QuestBak.restore(archive: store, into: self.folder.appendingPathComponent("R/default.store"))
        }
        XCTAssertEqual(notAnArchive, .invalidInput)
    }

    /// Cancels the task that runs `operation` from its first progress report, which arrives on
    /// the operation's own thread, once the task is known.
    private func runCancelledFromItsProgress(
        _ operation: @escaping @Sendable (@escaping QuestBak.ProgressHandler) async throws -> Void
    ) async throws -> QuestBakError? {
        let handle = TaskHandle()
        let task = Task { try await operation { _ in handle.cancelWhenKnown() } }
        handle.set(task)
        do {
            try await task.value
            return nil
        } catch let error as QuestBakError {
            return error
        }
    }

    func testACancelledBackupLeavesNoArchiveAndNoTemporaryFile() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let output = folder.appendingPathComponent("Out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let archive = output.appendingPathComponent("backup.qbak")
        let error = try await runCancelledFromItsProgress { progress in
            _ = try await QuestBak.backUp(store: store, to: archive, progress: progress)
        }
        XCTAssertEqual(error?.category, .cancelled)
        XCTAssertTrue(error?.underlying is CancellationError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path), [])
        XCTAssertEqual(try temporaryFoldersOfThisProcess(), [])
    }

    func testACancelledRestoreLeavesNoStoreAndNoTemporaryFile() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        try await QuestBak.backUp(store: store, to: archive)
        let target = folder.appendingPathComponent("Restored/Deeper/default.store")
        let error = try await runCancelledFromItsProgress { progress in
            _ = try await QuestBak.restore(archive: archive, into: target, progress: progress)
        }
        XCTAssertEqual(error?.category, .cancelled)
        // The folders the restore made for the store are gone with it.
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("Restored").path))
        XCTAssertEqual(try temporaryFoldersOfThisProcess(), [])
    }

    func testACancelledMergeLeavesTheStoreAsItWas() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        try await QuestBak.backUp(store: store, to: archive)
        let older = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "Older", withWAL: false)
        let before = try Data(contentsOf: older)
        let error = try await runCancelledFromItsProgress { progress in
            _ = try await QuestBak.merge(archive: archive, into: older, progress: progress)
        }
        XCTAssertEqual(error?.category, .cancelled)
        XCTAssertEqual(try Data(contentsOf: older), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: older.deletingLastPathComponent().path), ["default.store"])
        XCTAssertEqual(try temporaryFoldersOfThisProcess(), [])
    }

    func testAnAlreadyCancelledTaskStartsNothing() async throws {
        let store = try copyOfFixture("AnyApp/kitchen-sink/default.store", as: "App")
        let archive = folder.appendingPathComponent("backup.qbak")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            _ = try await QuestBak.backUp(store: store, to: archive)
        }
        do {
            try await task.value
            XCTFail("a cancelled task backed up")
        } catch {
            XCTAssertEqual((error as? QuestBakError)?.category, .cancelled)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }
}

/// The task to cancel, set once `Task` returns it; a progress report that comes first waits for it.
private final class TaskHandle: @unchecked Sendable {
    private let condition = NSCondition()
    private var cancel: (@Sendable () -> Void)?

    func set<T, E>(_ task: Task<T, E>) {
        condition.lock()
        cancel = { task.cancel() }
        condition.broadcast()
        condition.unlock()
    }

    func cancelWhenKnown() {
        condition.lock()
        while cancel == nil { condition.wait() }
        let cancel = self.cancel
        condition.unlock()
        cancel?()
    }
}
