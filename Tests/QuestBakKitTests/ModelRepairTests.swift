import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// `import --validate` on an archive of another app's store repairs it by its own model: records
/// that break a uniqueness constraint (children and links re-pointed), relationships to missing
/// records, missing values from the model's defaults, and cloudIDs wherever an entity has one.
final class ModelRepairTests: XCTestCase {
    typealias Code = CompiledAttribute.TypeCode
    static let sharedID = "6A0C5E3B-1111-4C2D-8E9F-000000000001"

    /// Folder 1—n Note (a unique `code`, a defaulted `title`, a `cloudID`), Note n—n Label.
    static func model(unique: Bool) -> CompiledModel {
        CompiledModel(
            versionIdentifiers: ["1.0.0"],
            entities: [
                AnyAppFixtures.entity(
                    "Folder", [AnyAppFixtures.attribute("name", Code.string)], [AnyAppFixtures.toMany("notes", "Note", inverse: "folder")]),
                AnyAppFixtures.entity(
                    "Label", [AnyAppFixtures.attribute("text", Code.string)], [AnyAppFixtures.toMany("notes", "Note", inverse: "labels")]),
                AnyAppFixtures.entity(
                    "Note",
                    [
                        AnyAppFixtures.attribute("cloudID", Code.string, default: .string(sharedID)),
                        AnyAppFixtures.attribute("code", Code.string),
                        AnyAppFixtures.attribute("title", Code.string, default: .string("Untitled")),
                    ],
                    [
                        AnyAppFixtures.toOne("folder", "Folder", inverse: "notes"),
                        AnyAppFixtures.toMany("labels", "Label", inverse: "notes"),
                    ],
                    unique: unique ? [["code"]] : []),
            ])
    }

    func note(_ pk: Int64, code: String, title: FixtureValue, cloudID: String, folder: Int64?, labels: [Int64]) -> ModelRow {
        ModelRow(
            "Note", pk,
            ["code": .text(code), "title": title, "cloudID": .text(cloudID), "folder": folder.map { .integer($0) } ?? .null],
            links: ["labels": labels])
    }

    func store(unique: Bool, notes: [ModelRow], at url: URL) throws {
        var store = ModelStore(
            model: Self.model(unique: unique), uuid: "5D0A1C2E-0000-4000-8000-00000000AB01",
            rows: [
                ModelRow("Folder", 1, ["name": .text("Inbox")]), ModelRow("Folder", 2, ["name": .text("Work")]),
                ModelRow("Label", 1, ["text": .text("red")]), ModelRow("Label", 2, ["text": .text("blue")]),
            ] + notes)
        store.frameworkVersion = 1526
        try ModelStoreWriter.write(store, to: url)
    }

    func export(_ store: URL, to archive: URL) throws {
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
    }

    /// An archive whose records break the model it carries: the records of a store made without
    /// the unique constraint, under the statements, metadata and cache of the model that has it.
    func damagedArchive(in directory: TemporaryTestDirectory) throws -> URL {
        let clean = directory.path("clean.store")
        try store(unique: true, notes: [note(1, code: "A", title: .text("One"), cloudID: Self.sharedID, folder: 1, labels: [1])], at: clean)
        let damaged = directory.path("damaged.store")
        try store(
            unique: false,
            notes: [
                note(1, code: "A", title: .text("One"), cloudID: Self.sharedID, folder: 1, labels: [1]),
                note(2, code: "A", title: .text("One again"), cloudID: "3F2504E0-4F89-11D3-9A0C-0305E82C3301", folder: 2, labels: [1, 2]),
                note(3, code: "B", title: .null, cloudID: Self.sharedID, folder: 9, labels: [2]),
            ], at: damaged)
        let (cleanArchive, damagedArchive) = (directory.path("clean.qbak"), directory.path("damaged-raw.qbak"))
        try export(clean, to: cleanArchive)
        try export(damaged, to: damagedArchive)
        let (cleanFolder, damagedFolder) = (directory.path("clean-x"), directory.path("damaged-x"))
        for (archive, folder) in [(cleanArchive, cleanFolder), (damagedArchive, damagedFolder)] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            XCTAssertEqual(try Questbak.runTool(["tar", "--zstd", "-xf", archive.path, "-C", folder.path]).status, 0)
        }
        var manifest = try JSONDecoder().decode(
            ArchiveManifest.self, from: Data(contentsOf: damagedFolder.appendingPathComponent("manifest.json")))
        let cleanManifest = try JSONDecoder().decode(
            ArchiveManifest.self, from: Data(contentsOf: cleanFolder.appendingPathComponent("manifest.json")))
        manifest.sql = cleanManifest.sql
        manifest.files = cleanManifest.files
        for file in manifest.files {
            let target = damagedFolder.appendingPathComponent(file.path)
            try FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: cleanFolder.appendingPathComponent(file.path), to: target)
        }
        try manifest.encoded().write(to: damagedFolder.appendingPathComponent("manifest.json"))
        let members = ["manifest.json"] + manifest.files.map(\.path) + (manifest.tables ?? []).map(\.path) + manifest.entities.map(\.path)
        let archive = directory.path("damaged.qbak")
        let result = try Questbak.runTool(["tar", "--zstd", "-cf", archive.path, "-C", damagedFolder.path] + members)
        XCTAssertEqual(result.status, 0, result.standardError)
        return archive
    }

    func testAnArchiveThatBreaksItsModelIsRefusedWithoutValidateAndRepairedWithIt() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try damagedArchive(in: directory)
        let work = try TemporaryTestDirectory()
        let target = directory.path("restored/default.store")
        XCTAssertThrowsError(try Importer.run(archive: archive.path, into: target, options: .timeQuest, workDirectory: work.url)) { error in
            guard case ImportError.repairsNeeded(_, let counts) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(counts["repair.dedup"], 1)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "nothing is written without --validate")

        var options = Importer.Options.timeQuest
        options.validate = true
        let secondWork = try TemporaryTestDirectory()
        let result = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: secondWork.url)
        XCTAssertEqual(result.counts["repair.dedup"], 1, "\(result.counts)")
        XCTAssertEqual(result.counts["repair.orphan"], 1, "note 3's folder 9 does not exist")
        XCTAssertEqual(result.counts["repair.default"], 1, "note 3's title from the model's default")
        XCTAssertEqual(result.counts["repair.cloudID"], 1, "note 3 shared note 1's cloudID")
        XCTAssertGreaterThanOrEqual(result.counts["repair.repoint"] ?? 0, 1, "note 2's label links move to note 1")

        let queue = try DatabaseQueue(path: target.path)
        defer { try? queue.close() }
        try queue.read { db in
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZNOTE ORDER BY Z_PK"), [1, 3])
            XCTAssertEqual(try String.fetchOne(db, sql: "SELECT ZTITLE FROM ZNOTE WHERE Z_PK = 3"), "Untitled")
            XCTAssertNil(try Int64.fetchOne(db, sql: "SELECT ZFOLDER FROM ZNOTE WHERE Z_PK = 3"))
            let ids = try String.fetchAll(db, sql: "SELECT ZCLOUDID FROM ZNOTE ORDER BY Z_PK")
            XCTAssertEqual(ids.first, Self.sharedID, "the lowest key keeps its cloudID")
            XCTAssertEqual(Set(ids).count, 2)
            let links = try Row.fetchAll(db, sql: "SELECT Z_2LABELS, Z_3NOTES FROM Z_2NOTES ORDER BY 1, 2").map {
                [$0[0] as Int64, $0[1] as Int64]
            }
            XCTAssertEqual(links, [[1, 1], [2, 1], [2, 3]], "label 2 (blue) kept its link from the dropped duplicate, now to note 1")
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA integrity_check"), "ok")
        }
    }

    /// A missing value the model gives no default is not guessed: with `--validate` it stays empty
    /// and a note says where (an app profile's entity would be an error instead:
    /// `RepairRuleDefaultFillTests`), while one the model gives a default is filled.
    func testAValueTheModelGivesNoDefaultIsLeftEmptyWithANote() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source.store")
        let noCode = ModelRow("Note", 1, ["code": .null, "title": .null, "cloudID": .text(Self.sharedID), "folder": .integer(1)])
        try store(unique: false, notes: [noCode], at: source)
        let archive = directory.path("no-code.qbak")
        try export(source, to: archive)
        var options = Importer.Options.timeQuest
        options.validate = true
        let target = directory.path("restored/default.store")
        let work = try TemporaryTestDirectory()
        let result = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
        XCTAssertTrue(
            result.notes.contains("Note.code is empty in 1 record(s) and the model gives it no default: left empty"), "\(result.notes)")
        XCTAssertEqual(result.counts["repair.default"], 1, "the title has a default: \(result.counts)")
        let queue = try DatabaseQueue(path: target.path)
        defer { try? queue.close() }
        try queue.read { db in
            XCTAssertNil(try String.fetchOne(db, sql: "SELECT ZCODE FROM ZNOTE WHERE Z_PK = 1"))
            XCTAssertEqual(try String.fetchOne(db, sql: "SELECT ZTITLE FROM ZNOTE WHERE Z_PK = 1"), "Untitled")
        }
    }
}
