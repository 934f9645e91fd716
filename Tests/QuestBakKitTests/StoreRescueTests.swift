import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// `StoreRescue`: an app's store that its build cannot open, copied aside and exported by its
/// own model, then merged into the fresh store the app makes, migrated when the archive is
/// older, kept when it is newer. Real stores: the kitchen-sink fixture (another app's, with a
/// WAL, a -shm and external storage) and stores written with other versions of its model.
final class StoreRescueTests: XCTestCase {
    typealias Code = CompiledAttribute.TypeCode

    /// The kitchen-sink model (2.1.0) as another build has it: `version`, with `Recipe.sweetness`
    /// removed and an optional `Recipe.notes` added.
    static func otherBuildModel(version: String) -> CompiledModel {
        var model = AnyAppFixtures.kitchenSinkModel
        model.versionIdentifiers = [version]
        let recipe = model.entities.firstIndex { $0.name == "Recipe" }!
        var attributes = model.entities[recipe].attributes.filter { $0.name != "sweetness" }
        attributes.append(AnyAppFixtures.attribute("notes", Code.string, optional: true))
        model.entities[recipe].attributes = attributes.sorted { $0.name < $1.name }
        return model
    }

    /// The empty store a build makes with `model`.
    func freshStore(_ model: CompiledModel, at url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ModelStoreWriter.write(ModelStore(model: model, uuid: "22222222-3333-4444-8555-666666666666", rows: []), to: url)
    }

    /// Every file under `folder` (hidden ones too) by its path relative to it, with its bytes.
    func contents(of folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        while let path = enumerator?.nextObject() as? String {
            let url = folder.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: url)
            }
        }
        return files
    }

    func count(_ store: URL, _ sql: String) throws -> Int {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: sql) ?? -1 }
    }

    func testAHealthyStoreIsCopiedWholeAndExportedByItsOwnModelLeavingItAsItWas() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let original = try contents(of: store.deletingLastPathComponent())
        XCTAssertEqual(original.count, 4, "store, -wal, -shm and one external-storage file")
        let rescueFolder = directory.path("Rescue/1")

        let result = try StoreRescue.rescue(storeAt: store, into: rescueFolder, options: .init(createdAt: 1_800_000_000))

        XCTAssertEqual(try contents(of: store.deletingLastPathComponent()), original, "the store is only read")
        XCTAssertEqual(
            try contents(of: rescueFolder.appendingPathComponent(StoreRescue.filesFolderName)), original,
            "the copy holds every file, the support folder's too, byte for byte")
        XCTAssertEqual(result.copiedFiles.count, 4)
        XCTAssertEqual(result.copiedBytes, Int64(original.values.reduce(0) { $0 + $1.count }))
        XCTAssertNil(result.exportFailure)
        XCTAssertEqual(result.archive?.path, rescueFolder.appendingPathComponent(StoreRescue.archiveName).path)
        XCTAssertEqual(result.schemaVersion, "2.1.0")
        // By the store's own model: the archive says so, and restores every record the store has.
        let manifest = try ArchiveReader(path: try XCTUnwrap(result.archive).path).readManifest()
        XCTAssertEqual(manifest.source.schema, ArchiveManifest.Source.modelSchema)
        let recipes = try count(try directory.copyFixture("AnyApp/kitchen-sink", as: "reference"), "SELECT count(*) FROM ZRECIPE")
        XCTAssertEqual(result.entities["Recipe"], recipes)
        XCTAssertEqual(result.records, result.entities.values.reduce(0, +))
        XCTAssertGreaterThan(result.records, recipes)

        // A second rescue into the same folder would put the first at risk: refused, nothing changed.
        let before = try contents(of: rescueFolder)
        XCTAssertThrowsError(try StoreRescue.rescue(storeAt: store, into: rescueFolder)) { error in
            XCTAssertEqual(error as? OutputError, .exists(path: rescueFolder.path))
        }
        XCTAssertEqual(try contents(of: rescueFolder), before)
    }

    func testADamagedStoreIsStillCopiedAndTheFailedExportIsSaid() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        // Every page after the first overwritten: SQLite's header and schema intact, the tables
        // behind them garbage (but for what the WAL holds).
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: store.path)[.size] as? NSNumber).intValue
        let handle = try FileHandle(forWritingTo: store)
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: size - 4096))
        try handle.close()
        let damaged = try contents(of: store.deletingLastPathComponent())
        let rescueFolder = directory.path("rescue")

        let result = try StoreRescue.rescue(storeAt: store, into: rescueFolder)

        XCTAssertFalse(result.exported)
        XCTAssertNil(result.archive)
        XCTAssertTrue(
            result.exportError is StoreError || result.exportError is ArchiveError,
            "a typed error: \(String(describing: result.exportError))")
        XCTAssertFalse(try XCTUnwrap(result.exportFailure).isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: rescueFolder.appendingPathComponent(StoreRescue.archiveName).path))
        XCTAssertEqual(
            try contents(of: rescueFolder.appendingPathComponent(StoreRescue.filesFolderName)), damaged,
            "the files are saved as they were, damage and all")
        XCTAssertEqual(try contents(of: store.deletingLastPathComponent()), damaged)
        // With no archive there is nothing to merge, and the error says where the files are.
        let fresh = directory.path("fresh/default.store")
        try freshStore(AnyAppFixtures.kitchenSinkModel, at: fresh)
        XCTAssertThrowsError(try StoreRescue.merge(rescuedIn: rescueFolder, into: fresh)) { error in
            guard case ArchiveError.unreadable(_, let reason)? = error as? ArchiveError else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(reason.contains(StoreRescue.filesFolderName), reason)
        }
    }

    func testAMissingStoreIsRefusedAndNothingIsWritten() throws {
        let directory = try TemporaryTestDirectory()
        let missing = directory.path("gone/default.store")
        let rescueFolder = directory.path("rescue")
        XCTAssertThrowsError(try StoreRescue.rescue(storeAt: missing, into: rescueFolder)) { error in
            XCTAssertEqual(error as? StoreError, .notFound(path: missing.path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: rescueFolder.path))
    }

    /// The support folder is copied as it is: a link as a link (what it points at is not the
    /// store's), and what is neither file, folder nor link named rather than copied.
    func testTheSupportFolderIsCopiedWithoutFollowingLinks() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let support = store.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT")
        let outside = directory.path("outside.txt")
        try Data("not the store's".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(atPath: support.appendingPathComponent("link").path, withDestinationPath: outside.path)
        XCTAssertEqual(mkfifo(support.appendingPathComponent("pipe").path, 0o644), 0)
        let rescueFolder = directory.path("rescue")

        let result = try StoreRescue.rescue(storeAt: store, into: rescueFolder)

        let copiedSupport = rescueFolder.appendingPathComponent(StoreRescue.filesFolderName).appendingPathComponent(".default_SUPPORT")
        XCTAssertEqual(
            try FileManager.default.destinationOfSymbolicLink(atPath: copiedSupport.appendingPathComponent("link").path), outside.path)
        XCTAssertEqual(result.notCopied.map(\.path), [support.appendingPathComponent("pipe").path])
        XCTAssertFalse(FileManager.default.fileExists(atPath: copiedSupport.appendingPathComponent("pipe").path))
        XCTAssertEqual(
            try Data(contentsOf: copiedSupport.appendingPathComponent("_EXTERNAL_DATA/85119BD1-9242-445A-9557-A0E0B987FF95")),
            try Data(contentsOf: support.appendingPathComponent("_EXTERNAL_DATA/85119BD1-9242-445A-9557-A0E0B987FF95")))
        XCTAssertTrue(result.exported, result.exportFailure ?? "")
    }

    func testAnArchiveOfTheSameModelMergesIntoTheFreshStoreAsItIs() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let rescueFolder = directory.path("rescue")
        let rescued = try StoreRescue.rescue(storeAt: store, into: rescueFolder)
        let fresh = directory.path("fresh/default.store")
        try freshStore(AnyAppFixtures.kitchenSinkModel, at: fresh)

        let result = try StoreRescue.merge(rescuedIn: rescueFolder, into: fresh)

        XCTAssertEqual(result.outcome, .merged)
        XCTAssertEqual(result.inserted, rescued.records)
        XCTAssertEqual(result.unplaced, [])
        XCTAssertEqual(result.archiveRepairs, [:], "the fixture's records need no repair")
        XCTAssertEqual(result.migrationCounts, [:], "nothing was migrated")
        XCTAssertEqual(try count(fresh, "SELECT count(*) FROM ZRECIPE"), rescued.entities["Recipe"])
        XCTAssertEqual(
            try count(fresh, "SELECT count(*) FROM ZRECIPE WHERE ZSWEETNESS IS NOT NULL"), rescued.entities["Recipe"],
            "every value came along")
    }

    func testAnOlderArchiveIsMigratedOnTheWayAndWhatTheNewModelLacksIsReported() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let reference = try directory.copyFixture("AnyApp/kitchen-sink", as: "reference")
        let sweetness = try count(reference, "SELECT count(*) FROM ZRECIPE WHERE ZSWEETNESS IS NOT NULL")
        XCTAssertGreaterThan(sweetness, 0)
        let rescueFolder = directory.path("rescue")
        let rescued = try StoreRescue.rescue(storeAt: store, into: rescueFolder)
        XCTAssertTrue(rescued.exported, rescued.exportFailure ?? "")
        // The new build: 3.0.0, without Recipe.sweetness, with Recipe.notes.
        let fresh = directory.path("fresh/default.store")
        try freshStore(Self.otherBuildModel(version: "3.0.0"), at: fresh)

        let result = try StoreRescue.merge(rescuedIn: rescueFolder, into: fresh)

        XCTAssertEqual(result.outcome, .migratedAndMerged)
        XCTAssertEqual(result.archiveSchemaVersion, "2.1.0")
        XCTAssertEqual(result.storeSchemaVersion, "3.0.0")
        XCTAssertEqual(result.inserted, rescued.records)
        XCTAssertEqual(try count(fresh, "SELECT count(*) FROM ZRECIPE"), rescued.entities["Recipe"])
        XCTAssertEqual(try count(fresh, "SELECT count(*) FROM ZRECIPE WHERE ZNOTES IS NULL"), rescued.entities["Recipe"])
        // Every sweetness is said, record by record, with its value; none is dropped unsaid.
        let unplaced = result.unplaced.filter { $0.entity == "Recipe" && $0.field == "sweetness" }
        XCTAssertEqual(unplaced.count, sweetness, "\(result.unplaced)")
        XCTAssertEqual(result.unplaced.count, unplaced.count, "nothing else lacks a place: \(result.unplaced)")
        XCTAssertEqual(
            Set(unplaced.map(\.value)),
            Set(
                try DatabaseQueue(path: reference.path).read { db in
                    try Double.fetchAll(db, sql: "SELECT ZSWEETNESS FROM ZRECIPE WHERE ZSWEETNESS IS NOT NULL")
                }.map { ValueJSON.text(.double($0)) }))
        XCTAssertEqual(result.migrationCounts["unstorable.unknown-property"], sweetness)
        XCTAssertTrue(result.notes.contains { $0.contains("no place") }, "\(result.notes)")
        let report = try String(contentsOf: try XCTUnwrap(result.report), encoding: .utf8)
        XCTAssertEqual(report.split(separator: "\n").filter { $0.contains("\"sweetness\"") }.count, sweetness)
        // The fresh store as it was is kept beside it.
        XCTAssertFalse(result.backupFiles.isEmpty)
        for file in result.backupFiles { XCTAssertTrue(FileManager.default.fileExists(atPath: file.path), file.path) }
    }

    func testAStoreNewerThanTheAppIsKeptAsTheArchiveAndTheCopyAndNothingIsMerged() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let rescueFolder = directory.path("rescue")
        let rescued = try StoreRescue.rescue(storeAt: store, into: rescueFolder)
        XCTAssertTrue(rescued.exported, rescued.exportFailure ?? "")
        // The app is an older build (2.0.0) than the one that wrote the store (2.1.0).
        let fresh = directory.path("fresh/default.store")
        try freshStore(Self.otherBuildModel(version: "2.0.0"), at: fresh)
        let freshBefore = try contents(of: fresh.deletingLastPathComponent())
        let rescueBefore = try contents(of: rescueFolder)

        let result = try StoreRescue.merge(rescuedIn: rescueFolder, into: fresh)

        XCTAssertEqual(result.outcome, .keptNewer)
        XCTAssertEqual(result.inserted, 0)
        XCTAssertNil(result.report)
        XCTAssertTrue(result.notes.contains { $0.contains("newer") && $0.contains(StoreRescue.filesFolderName) }, "\(result.notes)")
        XCTAssertEqual(try contents(of: fresh.deletingLastPathComponent()), freshBefore, "the app's store is not touched")
        XCTAssertEqual(try contents(of: rescueFolder), rescueBefore, "the archive and the copy are kept")
    }
}
