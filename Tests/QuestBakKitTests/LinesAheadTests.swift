import Crypto
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// A model archive's record lines are decoded on a second core, ahead of the inserts
/// (`StatementRestore.RecordInserter.linesAhead`), and taken back line by line as the inserts,
/// on the transaction's thread, reach each one. Restoring with and without the second core must
/// give the same store and report, or the same first error: a line handed back out of order,
/// lost, or decoded by another entity's plan would make them differ, or fail the line numbers
/// the errors must name.
final class LinesAheadTests: XCTestCase {
    /// An import's whole outcome as text: its counts, repairs, notes and every table's rows, or
    /// its error's message.
    func outcome(_ archive: URL, validate: Bool, ahead: Bool, into directory: TemporaryTestDirectory) -> String {
        var options = Importer.Options.timeQuest
        options.validate = validate
        options.decodesLinesAhead = ahead
        return Self.outcome(archive, options: options, into: directory)
    }

    /// The same, with `options`.
    static func outcome(_ archive: URL, options: Importer.Options, into directory: TemporaryTestDirectory) -> String {
        // The same target both ways, so that a message naming it is the same.
        let folder = directory.path("restored")
        try? FileManager.default.removeItem(at: folder)
        let target = folder.appendingPathComponent("default.store")
        do {
            let work = try TemporaryTestDirectory()
            let result = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
            let entries = try result.log.firstEntries(10_000).map(\.sentence)
            let notes = result.notes.filter { !$0.hasPrefix("created folder") }
            let tables = try Self.tables(target)
            let entities = result.entities.map { "\($0.name) \($0.read) \($0.written) \($0.sha256)" }
            return "entities \(entities)\ncounts \(result.counts.sorted { $0.key < $1.key })\nentries \(entries)\nnotes \(notes)\n"
                + tables.joined(separator: "\n")
        } catch {
            return "error \(error.localizedDescription)"
        }
    }

    /// Every table's rows, each in its storage classes, sorted (a virtual table's shadow tables
    /// may have no rowid to order them by).
    static func tables(_ store: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { name in
                let rows = try ExactSQL.fetchAll(db, sql: "SELECT * FROM \(name.quotedSQLIdentifier)").map { "\($0)" }
                return "\(name): \(rows.sorted())"
            }
        }
    }

    @discardableResult
    func assertSameBothWays(
        _ archive: URL, _ name: String, validate: Bool = true, in directory: TemporaryTestDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) -> String {
        Self.assertSame(name, file: file, line: line) { outcome(archive, validate: validate, ahead: $0, into: directory) }
    }

    /// `outcome` one way (true) and the other (false), which must be the same; returns the first.
    @discardableResult
    static func assertSame(_ name: String, file: StaticString, line: UInt, _ outcome: (Bool) -> String) -> String {
        let one = outcome(true)
        XCTAssertEqual(one, outcome(false), name, file: file, line: line)
        return one
    }

    /// Calls `body` with the archive of every store shape whose archive goes by its model, each in
    /// a folder of its own, and checks there were enough of them (comparing none proves nothing).
    static func forEveryStoreShapeByItsModel(
        _ prefix: String, _ body: (StoreShape, URL, TemporaryTestDirectory) throws -> Void
    ) throws {
        var models = 0
        for shape in StoreShapes.all {
            let directory = try TemporaryTestDirectory(prefix)
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let archive = directory.path("backup.qbak")
            guard (try? exportAnyApp(store, to: archive))?.schema == ArchiveManifest.Source.modelSchema else { continue }
            models += 1
            try body(shape, archive, directory)
        }
        XCTAssertGreaterThan(models, 5)
    }

    /// Every store shape whose archive goes by its model, with and without --validate.
    func testEveryStoreShapeWithAModelRestoresTheSameBothWays() throws {
        try Self.forEveryStoreShapeByItsModel("questbak-lines-ahead") { shape, archive, directory in
            for validate in [true, false] {
                let outcome = assertSameBothWays(archive, "\(shape.name) validate \(validate)", validate: validate, in: directory)
                if !shape.needsRepairs { XCTAssertFalse(outcome.hasPrefix("error"), "\(shape.name): \(outcome.prefix(300))") }
            }
        }
    }

    /// The kitchen-sink fixture with 2,000 more steps (some linked to a recipe): lines enough for
    /// several batches of inserts and for the second core to run ahead of them.
    static func grownArchive(in directory: TemporaryTestDirectory) throws -> URL {
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            // Five steps, keys 1 to 5: the copies' keys follow on, so that line n holds key n - 1.
            for copy in 1...400 {
                try db.execute(
                    sql: """
                        INSERT INTO ZSTEP (Z_PK, Z_ENT, Z_OPT, ZSECONDS, Z5STEPS, ZTEXT)
                        SELECT Z_PK + 5 * ?, Z_ENT, Z_OPT, ZSECONDS + ?, CASE ? % 3 WHEN 0 THEN NULL ELSE ? % 3 END, ZTEXT || ?
                        FROM ZSTEP WHERE Z_PK <= 5
                        """, arguments: [copy, copy, copy, copy, " \(copy)"])
            }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZSTEP) WHERE Z_NAME = 'Step'")
        }
        try queue.close()
        let archive = directory.path("grown.qbak")
        XCTAssertEqual(try exportAnyApp(store, to: archive).schema, ArchiveManifest.Source.modelSchema)
        return archive
    }

    /// Rewrites `archive` with `edit` applied to its entities' and tables' members (by path); with `fixSums` the
    /// manifest then lists each member's new size and SHA-256, so that only the record checks
    /// can find the change. `order` reorders the members after the manifest.
    static func rewritten(
        _ archive: URL, in directory: TemporaryTestDirectory, fixSums: Bool = true, _ edit: (String, inout [String]) -> Void = { _, _ in },
        order: (([String]) -> [String])? = nil
    ) throws -> URL {
        let folder = directory.path("x-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.runTool(["tar", "--zstd", "-xf", archive.path, "-C", folder.path]).status, 0)
        var manifest = try JSONDecoder().decode(
            ArchiveManifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
        // Each member's lines edited; its size and digest, when `fixSums`.
        func rewrite(_ path: String) throws -> (bytes: Int64, sha256: String)? {
            let url = folder.appendingPathComponent(path)
            var lines = String(decoding: try Data(contentsOf: url), as: UTF8.self).components(separatedBy: "\n")
            edit(path, &lines)
            let data = Data(lines.joined(separator: "\n").utf8)
            try data.write(to: url)
            return fixSums ? (Int64(data.count), SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()) : nil
        }
        for index in manifest.entities.indices {
            if let sums = try rewrite(manifest.entities[index].path) {
                (manifest.entities[index].bytes, manifest.entities[index].sha256) = sums
            }
        }
        for index in (manifest.tables ?? []).indices {
            if let path = manifest.tables?[index].path, let sums = try rewrite(path) {
                manifest.tables?[index].bytes = sums.bytes
                manifest.tables?[index].sha256 = sums.sha256
            }
        }
        try manifest.encoded().write(to: folder.appendingPathComponent("manifest.json"))
        let members = manifest.files.map(\.path) + (manifest.tables ?? []).map(\.path) + manifest.entities.map(\.path)
        let output = directory.path("rewritten-\(UUID().uuidString).qbak")
        let result = try Questbak.runTool(
            ["tar", "--zstd", "-cf", output.path, "-C", folder.path, "manifest.json"] + (order?(members) ?? members))
        XCTAssertEqual(result.status, 0, result.standardError)
        return output
    }

    /// Line `number` of Step's member (the header is line 1) changed by `change`.
    static func stepLine(_ number: Int, _ change: @escaping (String) -> String) -> (String, inout [String]) -> Void {
        { path, lines in
            if path == "entities/Step.jsonl" { lines[number - 1] = change(lines[number - 1]) }
        }
    }

    func testAnArchiveWhoseNthLineIsBadFailsTheSameBothWaysAtThatLine() throws {
        let directory = try TemporaryTestDirectory("questbak-lines-ahead")
        let archive = try Self.grownArchive(in: directory)
        let clean = assertSameBothWays(archive, "grown", in: directory)
        XCTAssertFalse(clean.hasPrefix("error"), String(clean.prefix(300)))
        XCTAssertTrue(clean.contains("Step 2005 2005"), "the grown steps were restored")
        let stepCount = 2005
        // The first record, either side of the first batch of 512 (and of the second), and the last.
        for number in [2, 3, 513, 514, 1026, 1500, stepCount + 1] {
            // A line that is no JSON, a value of the wrong type, a key written twice: each the
            // line's own error, named at that line.
            let notJSON = try Self.rewritten(
                archive, in: directory, Self.stepLine(number) { $0.replacingOccurrences(of: "\"_pk\":", with: "\"_pk\";") })
            XCTAssertTrue(
                assertSameBothWays(notJSON, "not JSON at \(number)", in: directory).contains("Step.jsonl line \(number): not a JSON object")
            )
            let wrongType = try Self.rewritten(
                archive, in: directory, Self.stepLine(number) { $0.replacingOccurrences(of: "\"_opt\":1", with: "\"_opt\":\"1\"") })
            XCTAssertTrue(
                assertSameBothWays(wrongType, "wrong type at \(number)", in: directory).contains(
                    "Step.jsonl line \(number): _opt must be an integer or null"))
            // A line that decodes but whose row the table refuses: the insert's error, at that line.
            let twice = try Self.rewritten(
                archive, in: directory,
                Self.stepLine(number) { line in
                    line.replacingOccurrences(of: "\"_pk\":\(number - 1),", with: "\"_pk\":\(number == 2 ? 2 : number - 2),")
                })
            // (The first record's key made 2: the error is at the record of key 2, line 3.)
            XCTAssertTrue(
                assertSameBothWays(twice, "a key twice at \(number)", in: directory).contains(
                    "Step.jsonl line \(number == 2 ? 3 : number): _pk"),
                "\(number)")
            // The same damage with the manifest's checksums left as they were (each edit keeps the
            // member's size): the member's checksum is what the reader reports, whichever way the
            // lines are decoded, though a line's error is met first (`ArchiveReader.readLines`).
            let damaged = try Self.rewritten(
                archive, in: directory, fixSums: false, Self.stepLine(number) { $0.replacingOccurrences(of: "\"_pk\":", with: "\"_pk\";") })
            XCTAssertTrue(
                assertSameBothWays(damaged, "damaged at \(number)", in: directory).contains("member entities/Step.jsonl has SHA-256"))
            let damagedTwice = try Self.rewritten(
                archive, in: directory, fixSums: false,
                Self.stepLine(number) { line in
                    line.replacingOccurrences(of: "\"_pk\":\(number - 1),", with: "\"_pk\":\(number == 2 ? 2 : number - 2),")
                })
            XCTAssertTrue(
                assertSameBothWays(damagedTwice, "damaged, a key twice at \(number)", in: directory).contains(
                    "member entities/Step.jsonl has SHA-256"))
        }
        // Two bad lines: the earlier one's error, though a later line's is found first ahead.
        let two = try Self.rewritten(archive, in: directory) { path, lines in
            guard path == "entities/Step.jsonl" else { return }
            lines[1200] = lines[1200].replacingOccurrences(of: "\"_pk\":", with: "\"_pk\";")
            lines[1400] = lines[1400].replacingOccurrences(of: #""_pk":\d+"#, with: "\"_pk\":1", options: .regularExpression)
        }
        XCTAssertTrue(assertSameBothWays(two, "two bad lines", in: directory).contains("Step.jsonl line 1201: not a JSON object"))
        // A line of another entity, in the Step member, is decoded by Step's plan both ways.
        let foreign = try Self.rewritten(
            archive, in: directory, Self.stepLine(700) { _ in #"{"_pk":9000,"_opt":1,"color":3,"label":"x"}"# })
        XCTAssertTrue(assertSameBothWays(foreign, "another entity's line", in: directory).contains("Step.jsonl line 700"))
    }

    /// An archive whose model cache comes after its records (no export writes one): the model is
    /// made where the first record is inserted, and is not there yet, both ways.
    func testAModelCacheAfterTheRecordsIsRefusedTheSameBothWays() throws {
        let directory = try TemporaryTestDirectory("questbak-lines-ahead")
        let archive = try Self.grownArchive(in: directory)
        let late = try Self.rewritten(
            archive, in: directory,
            order: { members in members.filter { $0 != ArchiveManifest.modelCachePath } + [ArchiveManifest.modelCachePath] })
        XCTAssertTrue(
            assertSameBothWays(late, "cache after the records", in: directory).contains(
                "the archive's model (\(ArchiveManifest.modelCachePath)) must come before its records"))
    }
}
