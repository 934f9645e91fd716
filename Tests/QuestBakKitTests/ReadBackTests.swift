import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakFixtures
@testable import QuestBakKit

/// The read-back proof of a restore reads the closed store on more than one connection at once:
/// `integrity_check` on one of its own, and large entities described by a model (TimeQuest's
/// schema, or another app's own model) encoded in ranges of keys on `Importer.Options.readBackReaders` more (`StatementRestore.verifyReadBack`).
/// Restoring with and without them must give the same store and report, or the same first
/// error: a range lost, doubled or taken out of order would change a digest, and a failure
/// found by the other reads must not be thrown before the integrity check's.
final class ReadBackTests: XCTestCase {
    /// How the read-back reads: no more connections (every read in turn, as before), or
    /// `readers` more with ranges of `rowsPerRange` keys.
    struct Reading: CustomStringConvertible {
        var readers: Int
        var rowsPerRange: Int
        var description: String { "\(readers) readers, \(rowsPerRange) rows a range" }
        static let inTurn = Reading(readers: 0, rowsPerRange: 2048)
        /// Every entity of more than one record cut into ranges, on one and on two connections.
        static let inRanges = [Reading(readers: 1, rowsPerRange: 1), Reading(readers: 2, rowsPerRange: 2)]
    }

    /// An import's whole outcome as text: each entity's counts and digest, the repair counts,
    /// entries and notes, every table's rows; or its error's message.
    func outcome(
        _ archive: URL, validate: Bool = true, toVersion: String? = nil, reading: Reading,
        damage: (@Sendable (URL) -> Void)? = nil
    ) throws -> String {
        let directory = try TemporaryTestDirectory("questbak-read-back")
        let work = try TemporaryTestDirectory()
        var options = Importer.Options.timeQuest
        options.validate = validate
        options.targetVersion = toVersion
        options.readBackReaders = reading.readers
        options.readBackRowsPerRange = reading.rowsPerRange
        let target = directory.path("restored/default.store")
        if let damage {
            // The restore's file, committed (its writer still open, at the point named "complete in
            // its main file"), is built beside the target.
            let folder = target.deletingLastPathComponent()
            Hooks.faultPoint = { label in
                guard label.hasPrefix("complete in its main file ") else { return }
                damage(folder.appendingPathComponent(String(label.dropFirst("complete in its main file ".count))))
            }
        }
        defer { Hooks.faultPoint = nil }
        do {
            let result = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
            let entities = result.entities.map { "\($0.name) \($0.read) \($0.written) \($0.sha256)" }
            // Which temporary folder each was restored into differs.
            let notes = result.notes.filter { !$0.hasPrefix("created folder") }
            // A virtual table may have no rowid to order its rows by: then each table's rows sorted.
            let tables: String
            if let exact = try? exactTables(target) {
                tables = "\(exact.sorted { $0.key < $1.key })"
            } else {
                tables = "\(try LinesAheadTests.tables(target))"
            }
            let text =
                "entities \(entities)\ncounts \(result.counts.sorted { $0.key < $1.key })\n"
                + "entries \(try result.log.firstEntries(10_000).map(\.sentence))\nnotes \(notes)\ntables \(tables)"
            // A note may name the folder restored into, which differs from one import to the next.
            return text.replacingOccurrences(of: directory.url.path, with: "<folder>")
        } catch {
            // The temporary store's folder and name differ from one import to the next.
            return "error "
                + error.localizedDescription.replacingOccurrences(of: directory.url.path, with: "<folder>")
                .replacingOccurrences(of: "questbak-[0-9]+-[0-9A-F]{8}", with: "questbak-<id>", options: .regularExpression)
        }
    }

    @discardableResult
    func assertSameEveryWay(
        _ archive: URL, _ name: String, validate: Bool = true, toVersion: String? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> String {
        let inTurn = try outcome(archive, validate: validate, toVersion: toVersion, reading: .inTurn)
        for reading in Reading.inRanges {
            let other = try outcome(archive, validate: validate, toVersion: toVersion, reading: reading)
            XCTAssertEqual(other, inTurn, "\(name), \(reading)", file: file, line: line)
        }
        return inTurn
    }

    func exported(_ store: URL, to archive: URL) throws -> URL {
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        return archive
    }

    /// Every TimeQuest fixture, restored as it is, without repairs and (a V1 store) as V2.
    func testEveryTimeQuestFixtureReadsBackTheSameInRanges() throws {
        for fixture in ["v1-typical", "v1-edge-cases", "v1-anomalies", "v1-wal", "v2-typical"] {
            let directory = try TemporaryTestDirectory("questbak-read-back-source")
            let archive = try exported(try directory.copyFixture(fixture), to: directory.path("\(fixture).qbak"))
            let restored = try assertSameEveryWay(archive, fixture)
            XCTAssertTrue(restored.hasPrefix("entities"), "\(fixture): \(restored.prefix(300))")
            try assertSameEveryWay(archive, "\(fixture) without --validate", validate: false)
            if fixture.hasPrefix("v1") { try assertSameEveryWay(archive, "\(fixture) as 2.0.0", toVersion: "2.0.0") }
        }
    }

    /// Archives that need each repair (the read-back then compares with what the transaction
    /// encoded), and a larger store cut into the default ranges.
    func testArchivesThatNeedRepairsAndALargeOneReadBackTheSameInRanges() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        for (index, variant) in InsertedValuesTests.variants.enumerated() {
            let store = directory.path("source-\(index).store")
            try variant.dataset.write(to: store, uuid: RuleRun.storeUUID)
            try assertSameEveryWay(try exported(store, to: directory.path("backup-\(index).qbak")), variant.name)
        }
        let large = directory.path("large.store")
        try BulkStore.write(to: large, estimations: 5_000)
        let archive = try exported(large, to: directory.path("large.qbak"))
        let inTurn = try outcome(archive, reading: .inTurn)
        XCTAssertTrue(inTurn.hasPrefix("entities"), String(inTurn.prefix(300)))
        XCTAssertEqual(try outcome(archive, reading: Reading(readers: 2, rowsPerRange: 2048)), inTurn)
    }

    /// A format 2 archive whose lines another tool spelled otherwise: its read-back does not find
    /// the archive's digests, and the archive is restored again and proved by what the
    /// transaction encoded, as before.
    func testAnArchiveSpelledOtherwiseReadsBackTheSameInRanges() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        let archive = try exported(try directory.copyFixture("v2-typical"), to: directory.path("exported.qbak"))
        let respelled = directory.path("respelled.qbak")
        try ArchiveRepack.repack(archive, to: respelled) { folder in
            let member = folder.appendingPathComponent("entities/TaskEstimation.jsonl")
            let lines = try String(contentsOf: member, encoding: .utf8).components(separatedBy: "\n")
            // Line 0 is the member's header; every record after the first gets a space.
            let changed = lines.enumerated().map { line in
                line.offset >= 2 && line.element.hasPrefix("{") ? "{ " + line.element.dropFirst() : line.element
            }
            try changed.joined(separator: "\n").write(to: member, atomically: true, encoding: .utf8)
        }
        let restored = try assertSameEveryWay(respelled, "respelled")
        XCTAssertTrue(restored.hasPrefix("entities"), String(restored.prefix(300)))
    }

    /// Another app's stores, of every shape the fixtures and generators make: archives by the
    /// store's own model (read back in ranges too) and by its tables (`integrity_check` on its
    /// own connection, the rest in turn).
    func testEveryStoreShapeOfAnotherAppReadsBackTheSameInRanges() throws {
        var models = 0
        for shape in StoreShapes.all {
            let directory = try TemporaryTestDirectory("questbak-read-back-source")
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let archive = directory.path("backup.qbak")
            guard let summary = try? exportAnyApp(store, to: archive) else { continue }
            if summary.schema == ArchiveManifest.Source.modelSchema { models += 1 }
            let restored = try assertSameEveryWay(archive, shape.name)
            if !shape.needsRepairs { XCTAssertTrue(restored.hasPrefix("entities"), "\(shape.name): \(restored.prefix(300))") }
        }
        // Comparing no archive by its model proves nothing.
        XCTAssertGreaterThan(models, 5)
    }

    /// A store damaged after its commit, so that `integrity_check` finds an index that does not
    /// match its table, and one record changed, so that its digest differs too: the error is the
    /// integrity check's, as when the checks ran one after the other (the digest's failure alone
    /// would have the archive restored again and name the entity).
    func testAStoreDamagedAfterItsCommitFailsItsIntegrityCheckFirst() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        let archive = try exported(try directory.copyFixture("v2-typical"), to: directory.path("v2-typical.qbak"))
        let damage: @Sendable (URL) -> Void = { store in Self.change(store) { db in try Self.swapIndexRoots(db) } }
        let inTurn = try outcome(archive, reading: .inTurn, damage: damage)
        XCTAssertTrue(inTurn.contains("integrity_check"), inTurn)
        for reading in Reading.inRanges {
            XCTAssertEqual(try outcome(archive, reading: reading, damage: damage), inTurn, "\(reading)")
        }
        // Undamaged but for the record, it is the digest that fails: the archive is restored
        // again, changed again, and the entity named.
        let digestOnly = try outcome(archive, reading: .inTurn, damage: { Self.change($0) { _ in } })
        XCTAssertTrue(digestOnly.contains("TaskEstimation") && !digestOnly.contains("integrity_check"), digestOnly)
    }

    /// A format 1 or 2 archive's read-back cuts an entity's ranges from its table's `count(*)`,
    /// `min` and `max` where only the entity's records fill the table
    /// (`StatementRestore.tablesOnlyItsRecordsFill`), not from a pass over its keys. A record
    /// removed or added after the commit fails the proof in ranges as it fails it read in turn
    /// (the entity named, with the same counts and digests found); a row of another entity in
    /// the table, which the proof read in turn does not see, fails it in ranges too (the
    /// member's header then counts the table's rows).
    func testAnEntitysRowsDamagedAfterTheCommitFailTheProofInRangesAsInTurn() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        let store = directory.path("bulk.store")
        try BulkStore.write(to: store, estimations: 300)
        let archive = try exported(store, to: directory.path("bulk.qbak"))
        let last = "(SELECT max(Z_PK) FROM ZTASKESTIMATION)"
        let readings = Reading.inRanges + [Reading(readers: 2, rowsPerRange: 64)]
        for damage in Self.lastRecordRemovedAndCopied(in: "ZTASKESTIMATION", "record") {
            let inTurn = try outcomeInTurnAndInRanges(archive, readings: readings, damage: damage)
            XCTAssertTrue(inTurn.hasPrefix("error") && inTurn.contains("TaskEstimation"), "\(damage.name): \(inTurn)")
        }
        let strayRow =
            "INSERT INTO ZTASKESTIMATION (Z_PK, Z_ENT, Z_OPT) VALUES (\(last) + 1, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'GameSession'), 1)"
        XCTAssertTrue(try outcome(archive, reading: .inTurn, damage: { Self.execute($0, strayRow) }).hasPrefix("entities"))
        for reading in readings {
            let inRanges = try outcome(archive, reading: reading, damage: { Self.execute($0, strayRow) })
            XCTAssertTrue(inRanges.hasPrefix("error") && inRanges.contains("TaskEstimation"), "\(reading): \(inRanges)")
        }
    }

    /// Another app's read-back cuts the ranges of an entity whose table the row checks of its
    /// layout found to hold that entity's records alone (`ModelLayout.tablesOfOneEntity`) from
    /// the table's `count(*)`, `min` and `max`, as export does, and runs those checks on the
    /// range readers (`StatementRestore.tablesOnlyItsRecordsFill`, `verifyReadBackRest`). Damaged
    /// after the commit (a step removed, a step added, a row of another entity in the steps'
    /// table, a link to no recipe), the proof fails in ranges with the error it fails with read
    /// in turn; undamaged, it passes the same.
    func testAnotherAppsRowsDamagedAfterTheCommitFailTheProofInRangesAsInTurn() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        let archive = try exported(try directory.copyFixture("AnyApp/kitchen-sink"), to: directory.path("kitchen-sink.qbak"))
        let last = "(SELECT max(Z_PK) FROM ZSTEP)"
        let damages: [(name: String, sql: String)] =
            Self.lastRecordRemovedAndCopied(in: "ZSTEP", "step") + [
                (
                    "a row of another entity",
                    "INSERT INTO ZSTEP (Z_PK, Z_ENT, Z_OPT) VALUES (\(last) + 1, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'), 1)"
                ),
                ("a link to no recipe", "UPDATE ZSTEP SET Z5STEPS = 999999 WHERE Z_PK = \(last)"),
            ]
        let readings = Reading.inRanges + [Reading(readers: 2, rowsPerRange: 64)]
        let undamaged = try outcome(archive, reading: .inTurn)
        XCTAssertTrue(undamaged.hasPrefix("entities"), undamaged)
        for reading in readings { XCTAssertEqual(try outcome(archive, reading: reading), undamaged, "\(reading)") }
        for damage in damages {
            let inTurn = try outcomeInTurnAndInRanges(archive, readings: readings, damage: damage)
            XCTAssertTrue(inTurn.hasPrefix("error"), "\(damage.name): \(inTurn)")
        }
    }

    /// The last record of `table` removed, and the last record copied under the next key: two
    /// damages named after `what` a record is.
    static func lastRecordRemovedAndCopied(in table: String, _ what: String) -> [(name: String, sql: String)] {
        let last = "(SELECT max(Z_PK) FROM \(table))"
        return [
            ("a \(what) removed", "DELETE FROM \(table) WHERE Z_PK = \(last)"),
            (
                "a \(what) added",
                """
                CREATE TEMP TABLE copied AS SELECT * FROM \(table) WHERE Z_PK = \(last);
                UPDATE copied SET Z_PK = Z_PK + 1;
                INSERT INTO \(table) SELECT * FROM copied
                """
            ),
        ]
    }

    /// The proof's outcome read in turn after `damage`, once every reading in ranges was found
    /// to give the same outcome after it.
    func outcomeInTurnAndInRanges(
        _ archive: URL, readings: [Reading], damage: (name: String, sql: String), file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let sql = damage.sql
        let inTurn = try outcome(archive, reading: .inTurn, damage: { Self.execute($0, sql) })
        for reading in readings {
            XCTAssertEqual(
                try outcome(archive, reading: reading, damage: { Self.execute($0, sql) }), inTurn, "\(damage.name), \(reading)",
                file: file, line: line)
        }
        return inTurn
    }

    /// Whether a format 2 archive's digests are proof enough (`Written.digestsAreTheArchives`)
    /// turns on each member's first line against its entity's record with the lowest key,
    /// encoded as an export writes it; for an entity without to-manys that is answered when the
    /// first line's row is inserted (`RecordInserter.noteFirstRecord`), where that row keeps
    /// the lowest key. The answer must be what an export of the restored store says: its
    /// members' first lines are the archive's. An archive as exported, its first estimation
    /// respelled, its second respelled, and its first two estimations swapped (the first line
    /// then not the lowest key's, which the answer at the insert alone would miss).
    func testFirstLinesAnsweredAtTheirInsertAreAnsweredAsAfterTheRecords() throws {
        let directory = try TemporaryTestDirectory("questbak-first-lines")
        let archive = try exported(try directory.copyFixture("v2-typical"), to: directory.path("exported.qbak"))
        func edited(_ name: String, _ edit: @escaping ([String]) -> [String]) throws -> URL {
            let output = directory.path("\(name).qbak")
            try ArchiveRepack.repack(archive, to: output) { folder in
                let member = folder.appendingPathComponent("entities/TaskEstimation.jsonl")
                let lines = try String(contentsOf: member, encoding: .utf8).components(separatedBy: "\n")
                try edit(lines).joined(separator: "\n").write(to: member, atomically: true, encoding: .utf8)
            }
            return output
        }
        // Line 0 is the member's header.
        let archives: [(name: String, archive: URL, asExported: Bool)] = [
            ("as exported", archive, true),
            (
                "first respelled",
                try edited("first") { lines in lines.enumerated().map { $0.offset == 1 ? "{ " + $0.element.dropFirst() : $0.element } },
                false
            ),
            (
                "second respelled",
                try edited("second") { lines in lines.enumerated().map { $0.offset == 2 ? "{ " + $0.element.dropFirst() : $0.element } },
                true
            ),
            ("first two swapped", try edited("swapped") { lines in [lines[0], lines[2], lines[1]] + lines.dropFirst(3) }, false),
        ]
        for (name, archive, asExported) in archives {
            let reader = ArchiveReader(path: archive.path, displayPath: archive.path, keys: ArchiveKeys())
            let manifest = try reader.readManifest()
            var options = Importer.Options.timeQuest
            options.validate = true
            let restore = try StatementRestore(
                legacy: try LegacyArchive(manifest: manifest, archive: archive.path, options: options), archive: archive.path)
            let work = try TemporaryTestDirectory()
            let store = work.path("restored.store")
            let written = try restore.write(
                from: reader, to: store, spool: nil, log: try RepairLog(directory: work.url), validate: true)
            XCTAssertEqual(written.digestsAreTheArchives, asExported, name)
            // What an export of the restored store says.
            let again = try exported(store, to: work.path("again.qbak"))
            let members = manifest.entities.map(\.path)
            XCTAssertEqual(
                try Self.firstRecordLines(archive, members: members) == Self.firstRecordLines(again, members: members), asExported,
                "\(name): the export of the restored store")
        }
    }

    /// Each member's first record line (its line 2), by member path.
    static func firstRecordLines(_ archive: URL, members: [String]) throws -> [String: String] {
        let directory = try TemporaryTestDirectory("questbak-first-lines-peek")
        var lines: [String: String] = [:]
        // Unpacked (and packed again, unchanged, into a file nobody reads).
        try ArchiveRepack.repack(archive, to: directory.path("peek.qbak")) { folder in
            for member in members {
                let text = try String(contentsOf: folder.appendingPathComponent(member), encoding: .utf8)
                lines[member] = text.components(separatedBy: "\n").dropFirst().first
            }
        }
        return lines
    }

    static func execute(_ url: URL, _ sql: String) {
        do {
            let queue = try DatabaseQueue(path: url.path)
            try queue.writeWithoutTransaction { try $0.execute(sql: sql) }
            try queue.close()
        } catch {
            XCTFail("\(error)")
        }
    }

    /// A store kept in WAL mode is built with a rollback journal and switched to WAL after its
    /// commit (`StoreWriter.writeDatabase`'s `writingPagesOnce`): the store put in place is in WAL mode as the
    /// archived one was (the header's read and write versions 2), with no journal left beside it,
    /// and holds what an import writing in WAL mode throughout held (`ReadBackTests`' other tests
    /// compare the rows; before and after the change, the dumps of every fixture's import are the
    /// same byte for byte, docs/performance.md).
    func testAStoreKeptInWALModeIsRestoredInWALMode() throws {
        let directory = try TemporaryTestDirectory("questbak-read-back-source")
        let archive = try exported(try directory.copyFixture("v2-typical"), to: directory.path("v2-typical.qbak"))
        let target = directory.path("restored/default.store")
        var options = Importer.Options.timeQuest
        options.validate = true
        let work = try TemporaryTestDirectory()
        _ = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
        let header = try Data(contentsOf: target).prefix(20)
        XCTAssertEqual(Array(header.suffix(2)), [2, 2], "read and write versions")
        for suffix in ["-wal", "-journal"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + suffix), suffix)
        }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: target.path, configuration: configuration)
        defer { try? queue.close() }
        XCTAssertEqual(try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }, "wal")
    }

    /// Changes the first estimation's name in the store at `url`, then does `more`.
    /// Two indexes of one column each swap their B-trees: each now lists another table's rows,
    /// which `integrity_check` finds.
    static func swapIndexRoots(_ db: Database) throws {
        let indexes = ["ZGAMESESSION_ZROUTINE_INDEX", "ZROUTINETASK_ZROUTINE_INDEX"]
        let roots = try Row.fetchAll(
            db, sql: "SELECT name, rootpage FROM sqlite_master WHERE name IN (?, ?)", arguments: StatementArguments(indexes))
        XCTAssertEqual(roots.count, 2)
        try db.execute(sql: "PRAGMA writable_schema = ON")
        for (row, other) in zip(roots, roots.reversed()) {
            try db.execute(
                sql: "UPDATE sqlite_master SET rootpage = ? WHERE name = ?", arguments: [other["rootpage"] as Int64, row["name"] as String])
        }
        try db.execute(sql: "PRAGMA writable_schema = OFF")
    }

    static func change(_ url: URL, more: (Database) throws -> Void) {
        do {
            let queue = try DatabaseQueue(path: url.path)
            try queue.writeWithoutTransaction { db in
                try db.execute(
                    sql: "UPDATE ZTASKESTIMATION SET ZTASKDISPLAYNAME = 'changed' WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)")
                try more(db)
            }
            try queue.close()
        } catch {
            XCTFail("\(error)")
        }
    }
}
