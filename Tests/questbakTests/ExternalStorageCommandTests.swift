import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// External-storage files (`.default_SUPPORT/_EXTERNAL_DATA/<name>` beside a store) through the
/// command line: any size and any name export carries comes back byte for byte, and neither
/// export nor import follows a symbolic link below the store's folder (issue #23, §1 and §4).
final class ExternalStorageCommandTests: XCTestCase {
    static let photoName = "85119BD1-9242-445A-9557-A0E0B987FF95"

    func externalFolder(_ store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT/_EXTERNAL_DATA")
    }

    /// Deterministic bytes that do not compress.
    func noise(_ count: Int, seed: UInt64) -> Data { StoreShapes.pseudoRandomBytes(count, seed: seed) }

    /// Every file below `folder` (links not followed) with its bytes, and every link with its target.
    func contents(of folder: URL) throws -> [String: Data] {
        var found: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return found }
        for case let relative as String in enumerator {
            let url = folder.appendingPathComponent(relative)
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            switch attributes[.type] as? FileAttributeType {
            case .typeRegular?: found[relative] = try Data(contentsOf: url)
            case .typeSymbolicLink?:
                found[relative + " ->"] = Data(try FileManager.default.destinationOfSymbolicLink(atPath: url.path).utf8)
            default: found[relative + "/"] = Data()
            }
        }
        return found
    }

    func export(_ store: URL, to archive: URL, file: StaticString = #filePath, line: UInt = #line) throws -> CommandResult {
        let result = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
        return result
    }

    /// Export, import into a new store, verify the archive; returns the restored store.
    func roundTrip(
        _ store: URL, in directory: TemporaryTestDirectory, file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> URL
    {
        let archive = directory.path("backup.qbak")
        _ = try export(store, to: archive, file: file, line: line)
        let restored = directory.path("restored/default.store")
        let imported = try Questbak.run(["import", archive.path, "--into", restored.path])
        XCTAssertEqual(imported.status, 0, imported.standardError, file: file, line: line)
        let verified = try Questbak.run(["verify", archive.path])
        XCTAssertEqual(verified.status, 0, verified.standardOutput + verified.standardError, file: file, line: line)
        return restored
    }

    // MARK: §1 Any size, any name

    /// A few MB that do not compress, through the streaming paths both ways (several 1 MiB blocks,
    /// a partial last one), back byte for byte.
    func testALargeExternalFileComesBackByteForByte() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let bytes = noise(5 * 1024 * 1024 + 12345, seed: 23)
        try bytes.write(to: externalFolder(store).appendingPathComponent(Self.photoName))
        let restored = try roundTrip(store, in: directory)
        XCTAssertEqual(try Data(contentsOf: externalFolder(restored).appendingPathComponent(Self.photoName)), bytes)
    }

    /// Import used to refuse any file over 256 MiB, which export wrote without a word. A sparse
    /// file of 300 MB (quick to make, compresses to almost nothing) comes back whole.
    func testAnExternalFileOver256MiBIsRestored() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let size: UInt64 = 300_000_000
        let url = externalFolder(store).appendingPathComponent(Self.photoName)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: size - 4)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("tail".utf8))
        try handle.close()
        let restored = try roundTrip(store, in: directory)
        let back = externalFolder(restored).appendingPathComponent(Self.photoName)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: back.path)[.size] as? NSNumber)?.uint64Value, size)
        let tail = try FileHandle(forReadingFrom: back)
        defer { try? tail.close() }
        try tail.seek(toOffset: size - 4096)
        XCTAssertEqual(try tail.readToEnd(), Data(count: 4092) + Data("tail".utf8))
    }

    /// A name of 255 bytes (NAME_MAX): export staged it under a longer name and failed, and an
    /// import's temporary name beside it would have overflowed too.
    func testAnExternalFileWithA255ByteNameComesBackByteForByte() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let name = String(repeating: "N", count: 250) + "-5.db"
        XCTAssertEqual(name.utf8.count, 255)
        let bytes = noise(70_000, seed: 255)
        try bytes.write(to: externalFolder(store).appendingPathComponent(name))
        let restored = try roundTrip(store, in: directory)
        XCTAssertEqual(try Data(contentsOf: externalFolder(restored).appendingPathComponent(name)), bytes)
        XCTAssertEqual(
            try Data(contentsOf: externalFolder(restored).appendingPathComponent(Self.photoName)),
            try Data(contentsOf: externalFolder(store).appendingPathComponent(Self.photoName)))
        // Nothing but the two files: no temporary name left beside them.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: externalFolder(restored).path).sorted(), [Self.photoName, name].sorted())
    }

    /// Two files whose names differ only in case (possible on Linux): export carried both, and
    /// import refused the archive ("appears more than once"). The first is carried, the other
    /// left out with a warning, and the archive restores.
    func testNamesThatDifferOnlyInCaseAreCarriedOnce() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        try Data("upper".utf8).write(to: externalFolder(store).appendingPathComponent("NOTE"))
        try Data("lower".utf8).write(to: externalFolder(store).appendingPathComponent("note"))
        let result = try export(store, to: directory.path("first.qbak"))
        XCTAssertTrue(result.standardError.contains("_EXTERNAL_DATA/note differs only in case from NOTE"), result.standardError)
        let restored = try roundTrip(store, in: directory)
        XCTAssertEqual(try Data(contentsOf: externalFolder(restored).appendingPathComponent("NOTE")), Data("upper".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: externalFolder(restored).appendingPathComponent("note").path))
    }

    /// The same temporary name beside any output: an archive named with 255 bytes could not be
    /// written (its temporary name was longer than a name can be).
    func testAnArchiveNamedWith255BytesIsWritten() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let archive = directory.path(String(repeating: "a", count: 250) + ".qbak")
        _ = try export(store, to: archive)
        XCTAssertEqual(try Questbak.run(["verify", archive.path]).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("questbak-") }, [])
    }

    // MARK: §4 Confinement: export

    /// `_EXTERNAL_DATA` a link to a folder elsewhere: export used to carry that folder whole. It
    /// is left out with a warning, as a linked file is, and the folder is untouched.
    func testALinkedExternalDataFolderIsLeftOutWithAWarning() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let elsewhere = directory.path("elsewhere")
        try FileManager.default.moveItem(at: externalFolder(store), to: elsewhere)
        try Data("a secret of another folder".utf8).write(to: elsewhere.appendingPathComponent("secret"))
        try FileManager.default.createSymbolicLink(at: externalFolder(store), withDestinationURL: elsewhere)
        let before = try contents(of: elsewhere)
        let archive = directory.path("backup.qbak")
        let result = try export(store, to: archive)
        XCTAssertTrue(result.standardError.contains("_EXTERNAL_DATA is a symbolic link, not followed"), result.standardError)
        let listing = try Questbak.runTool(["tar", "--zstd", "-tf", archive.path])
        XCTAssertFalse(listing.standardOutput.contains("external/"), listing.standardOutput)
        XCTAssertEqual(try contents(of: elsewhere), before)
        // The archive restores, and says the record's file is not there.
        let imported = try Questbak.run(["import", archive.path, "--into", directory.path("restored/default.store").path])
        XCTAssertEqual(imported.status, 0, imported.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("restored/.default_SUPPORT").path))
    }

    /// The support folder itself a link: not followed either.
    func testALinkedSupportFolderIsLeftOutWithAWarning() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let support = store.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT")
        let elsewhere = directory.path("elsewhere")
        try FileManager.default.moveItem(at: support, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: support, withDestinationURL: elsewhere)
        let archive = directory.path("backup.qbak")
        let result = try export(store, to: archive)
        XCTAssertTrue(result.standardError.contains(".default_SUPPORT is a symbolic link, not followed"), result.standardError)
        let listing = try Questbak.runTool(["tar", "--zstd", "-tf", archive.path])
        XCTAssertFalse(listing.standardOutput.contains("external/"), listing.standardOutput)
    }

    /// In `_EXTERNAL_DATA`: a FIFO (reading it would block export for ever), a folder, a link to
    /// a file, names with a newline and a leading dot: each left out with a warning; the plain
    /// file beside them is carried.
    func testWhatIsNotAPlainFileWithAPlainNameIsLeftOutWithAWarning() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let folder = externalFolder(store)
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("fifo").path, 0o644), 0)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("folder"), withIntermediateDirectories: false)
        try Data("outside".utf8).write(to: directory.path("outside"))
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: directory.path("outside"))
        try Data("x".utf8).write(to: folder.appendingPathComponent("new\nline"))
        try Data("x".utf8).write(to: folder.appendingPathComponent("..."))
        let archive = directory.path("backup.qbak")
        let result = try export(store, to: archive)
        for name in ["fifo", "folder", "link", "new\nline", "..."] {
            XCTAssertTrue(
                result.standardError.contains("_EXTERNAL_DATA/\(name) is not a plain file with a plain name and is not carried"),
                "\(name): \(result.standardError)")
        }
        let listing = try Questbak.runTool(["tar", "--zstd", "-tf", archive.path])
        let external = listing.standardOutput.split(separator: "\n").filter { $0.hasPrefix("external/") }
        XCTAssertEqual(external, ["external/\(Self.photoName)"])
    }

    // MARK: §4 Confinement: import

    /// Imports the kitchen-sink archive into `target`, whose folder `prepare` sets up; the
    /// import is refused with 73 naming `refusedPath`, the store is not created, and the folder
    /// `untouched` is byte for byte as it was.
    func assertImportRefused(
        prepare: (_ target: URL, _ untouched: URL) throws -> Void, naming refusedPath: String, saying reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let archive = directory.path("backup.qbak")
        _ = try export(store, to: archive, file: file, line: line)
        let target = directory.path("target/default.store")
        let untouched = directory.path("elsewhere")
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: untouched, withIntermediateDirectories: true)
        try Data("kept as it is".utf8).write(to: untouched.appendingPathComponent("kept"))
        try prepare(target, untouched)
        let before = try contents(of: untouched)
        let targetBefore = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path).sorted()
        let result = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertEqual(result.status, 73, result.standardError, file: file, line: line)
        XCTAssertTrue(result.standardError.contains(refusedPath), result.standardError, file: file, line: line)
        XCTAssertTrue(result.standardError.contains(reason), result.standardError, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "the store was created", file: file, line: line)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path).sorted(), targetBefore,
            file: file, line: line)
        XCTAssertEqual(try contents(of: untouched), before, file: file, line: line)
    }

    func testImportNeverWritesThroughALinkedSupportFolder() throws {
        try assertImportRefused(
            prepare: { target, elsewhere in
                try FileManager.default.createSymbolicLink(
                    at: target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT"), withDestinationURL: elsewhere)
            }, naming: "target/.default_SUPPORT", saying: "symbolic link")
    }

    func testImportNeverWritesThroughALinkedExternalDataFolder() throws {
        try assertImportRefused(
            prepare: { target, elsewhere in
                let support = target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT")
                try FileManager.default.createDirectory(at: support, withIntermediateDirectories: false)
                try FileManager.default.createSymbolicLink(
                    at: support.appendingPathComponent("_EXTERNAL_DATA"), withDestinationURL: elsewhere)
            }, naming: "target/.default_SUPPORT/_EXTERNAL_DATA", saying: "symbolic link")
    }

    /// A link already where a file is to go: not followed, not kept in its place (the store's
    /// record would point through it).
    func testImportRefusesALinkWhereAFileIsToGo() throws {
        try assertImportRefused(
            prepare: { target, elsewhere in
                let folder = target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT/_EXTERNAL_DATA")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(
                    at: folder.appendingPathComponent(Self.photoName), withDestinationURL: elsewhere.appendingPathComponent("kept"))
            }, naming: Self.photoName, saying: "something other than a plain file is there")
    }

    /// A FIFO where a file is to go: import used to block for ever reading it to compare.
    func testImportRefusesAFIFOWhereAFileIsToGo() throws {
        try assertImportRefused(
            prepare: { target, _ in
                let folder = target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT/_EXTERNAL_DATA")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                XCTAssertEqual(mkfifo(folder.appendingPathComponent(Self.photoName).path, 0o644), 0)
            }, naming: Self.photoName, saying: "something other than a plain file is there")
    }

    /// A folder where a file is to go: import used to take it for the file and leave the record
    /// pointing at a folder.
    func testImportRefusesAFolderWhereAFileIsToGo() throws {
        try assertImportRefused(
            prepare: { target, _ in
                let folder = target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT/_EXTERNAL_DATA")
                try FileManager.default.createDirectory(
                    at: folder.appendingPathComponent(Self.photoName), withIntermediateDirectories: true)
            }, naming: Self.photoName, saying: "something other than a plain file is there")
    }

    /// A plain file where the support folder is to go.
    func testImportRefusesAFileWhereTheSupportFolderIsToGo() throws {
        try assertImportRefused(
            prepare: { target, _ in
                try Data().write(to: target.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT"))
            }, naming: "target/.default_SUPPORT", saying: "it is not a folder")
    }

    // MARK: Hostile archives

    /// Unpacks the kitchen-sink's archive, lets `edit` change its folder and its manifest (a JSON
    /// object), and packs it again, uncompressed, members in their order.
    func editedArchive(in directory: TemporaryTestDirectory, _ edit: (URL, inout [String: Any]) throws -> Void) throws -> URL {
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let archive = directory.path("backup.qbak")
        _ = try export(store, to: archive)
        let members = try Questbak.runTool(["tar", "--zstd", "-tf", archive.path]).standardOutput.split(separator: "\n").map(String.init)
        let folder = directory.path("unpacked")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.runTool(["tar", "--zstd", "-xf", archive.path, "-C", folder.path]).status, 0)
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        try edit(folder, &manifest)
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        let edited = directory.path("edited.tar")
        XCTAssertEqual(try Questbak.runTool(["tar", "-cf", edited.path, "-C", folder.path] + members).status, 0)
        return edited
    }

    /// Imports `archive`: refused with 65 saying `text`, and nothing beside the target.
    func assertRefusedAsInvalid(_ archive: URL, in directory: TemporaryTestDirectory, saying text: String, line: UInt = #line) throws {
        let target = directory.path("target/default.store")
        let result = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertEqual(result.status, 65, result.standardError, line: line)
        XCTAssertTrue(result.standardError.contains(text), result.standardError, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.deletingLastPathComponent().path), line: line)
    }

    /// An external file whose bytes are not those the manifest's SHA-256 names: it was spooled
    /// as it streamed, and is refused at its end; nothing is written beside the target.
    func testAnExternalFileWhoseBytesDifferFromTheManifestIsRefusedAndNothingWritten() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try editedArchive(in: directory) { folder, _ in
            let file = folder.appendingPathComponent("external/\(Self.photoName)")
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count - 1] ^= 0x01
            try bytes.write(to: file)
        }
        try assertRefusedAsInvalid(archive, in: directory, saying: "external/\(Self.photoName)")
    }

    /// Names an extracting tar, or the restore, would take for a path: refused by name in the
    /// manifest, before any member is read.
    func testExternalFileNamesThatAreNotPlainAreRefused() throws {
        for name in ["..", "../escape", "a\nb", ".hidden", String(repeating: "x", count: 256)] {
            let directory = try TemporaryTestDirectory()
            let archive = try editedArchive(in: directory) { _, manifest in
                var files = try XCTUnwrap(manifest["files"] as? [[String: Any]])
                let index = try XCTUnwrap(files.firstIndex { ($0["path"] as? String)?.hasPrefix("external/") == true })
                files[index]["path"] = "external/" + name
                manifest["files"] = files
            }
            try assertRefusedAsInvalid(archive, in: directory, saying: "unknown file member")
        }
    }

    // MARK: migrate -o

    /// Migrates the kitchen-sink store, whose folder `prepare` changes, to a new build's model
    /// (one optional attribute more) at `output`.
    func migrateKitchenSink(
        in directory: TemporaryTestDirectory, prepare: (_ source: URL, _ output: URL) throws -> Void
    ) throws
        -> CommandResult
    {
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        var model = AnyAppFixtures.kitchenSinkModel
        model.versionIdentifiers = ["3.0.0"]
        if let tag = model.entities.firstIndex(where: { $0.name == "Tag" }) {
            model.entities[tag].attributes.append(AnyAppFixtures.attribute("season", CompiledAttribute.TypeCode.string, optional: true))
        }
        let next = directory.path("next/default.store")
        try FileManager.default.createDirectory(at: next.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ModelStoreWriter.write(ModelStore(model: model, uuid: "11111111-2222-4333-8444-555555555555", rows: []), to: next)
        let output = directory.path("out/default.store")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try prepare(store, output)
        return try Questbak.run(["migrate", store.path, "--to", next.path, "-o", output.path])
    }

    /// The source's `_EXTERNAL_DATA` a link: migrate -o used to copy what it points at; it is
    /// not followed, and the migration says what it did not carry.
    func testMigrateDoesNotFollowALinkedExternalDataFolderAndSaysSo() throws {
        let directory = try TemporaryTestDirectory()
        let elsewhere = directory.path("elsewhere")
        let result = try migrateKitchenSink(in: directory) { source, _ in
            try FileManager.default.moveItem(at: self.externalFolder(source), to: elsewhere)
            try FileManager.default.createSymbolicLink(at: self.externalFolder(source), withDestinationURL: elsewhere)
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("_EXTERNAL_DATA is a symbolic link, not followed"), result.standardOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("out/.default_SUPPORT").path))
    }

    /// The output's support folder a link: refused with 73, nothing written there or through it.
    func testMigrateNeverWritesThroughALinkedSupportFolder() throws {
        let directory = try TemporaryTestDirectory()
        let elsewhere = directory.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let result = try migrateKitchenSink(in: directory) { _, output in
            try FileManager.default.createSymbolicLink(
                at: output.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT"), withDestinationURL: elsewhere)
        }
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertTrue(result.standardError.contains("symbolic link"), result.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path("out").path), [".default_SUPPORT"])
    }

    // MARK: import --merge

    /// A merge that brings in the record pointing at the photo, into a store whose
    /// `_EXTERNAL_DATA` is a link: it used to write the photo into the linked folder; refused
    /// with 73, the store and the linked folder as they were.
    func testMergeNeverWritesThroughALinkedExternalDataFolder() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("AnyApp/kitchen-sink", as: "source")
        let archive = directory.path("backup.qbak")
        _ = try export(source, to: archive)
        let target = try directory.copyFixture("AnyApp/kitchen-sink", as: "target")
        let queue = try DatabaseQueue(path: target.path)
        try queue.write { db in
            // Recipe 2 (the one with the photo) and what points at it.
            try db.execute(
                sql: """
                    DELETE FROM ZRECIPE WHERE Z_PK = 2; UPDATE ZSTEP SET Z5STEPS = NULL WHERE Z5STEPS = 2;
                    DELETE FROM Z_5TAGS WHERE Z_5RECIPES = 2; UPDATE ZINGREDIENT SET ZRECIPE = NULL WHERE ZRECIPE = 2
                    """)
        }
        try queue.close()
        let elsewhere = directory.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.removeItem(at: externalFolder(target))
        try FileManager.default.createSymbolicLink(at: externalFolder(target), withDestinationURL: elsewhere)
        let result = try Questbak.run(["import", archive.path, "--merge", "--into", target.path])
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertTrue(result.standardError.contains("_EXTERNAL_DATA: cannot create: it is a symbolic link"), result.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [])
        XCTAssertFalse(
            try FileManager.default.contentsOfDirectory(atPath: directory.path("target").path).contains { $0.contains("questbak") })
        var configuration = Configuration()
        configuration.readonly = true
        let count = try DatabaseQueue(path: target.path, configuration: configuration).read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM ZRECIPE WHERE Z_PK = 2")
        }
        XCTAssertEqual(count, 0)
    }
}
