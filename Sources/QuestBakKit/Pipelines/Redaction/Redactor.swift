import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// Writes a copy of a store with every value that could identify a person replaced, keeping the
/// model, the keys, the relationships, the counts and Core Data's own tables, so that the app
/// opens it and the migration gate treats it as it treats the original.
///
/// The source is read through a snapshot (its files are never written). The copy is a new file
/// made from the source's own statements and filled with `INSERT … SELECT` through the
/// `questbak_redact` function: no page of it ever held an original value, so none can survive
/// in a free page, a journal or a WAL. It is built beside the target and linked into place only
/// when complete.
package enum Redactor {
    public struct Options: Sendable {
        public var key: RedactionKey
        /// `Entity.property` names whose values are copied as they are.
        public var keep: [String] = []
        public var scrambleNumbers = false
        /// Describes the key in the report (never the key itself).
        public var keyDescription = "a random key, not kept"
        /// The apps whose schemas an archive or store may be of (`Exporter.Options.profiles`).
        public var profiles: [AppProfile] = []

        public init(key: RedactionKey) { self.key = key }
    }

    public static func redact(storeAt source: URL, to target: URL, options: Options) throws -> RedactionReport {
        try StorePlacement.checkTarget(target, replace: false)
        try ExternalStorage.checkConfined(forStore: target)
        let (externalFiles, _) = try ExternalStorage.files(forStore: source)
        for file in externalFiles
        where FileManager.default.fileExists(atPath: ExternalStorage.folder(forStore: target).appendingPathComponent(file.name).path) {
            throw OutputError.exists(path: ExternalStorage.folder(forStore: target).appendingPathComponent(file.name).path)
        }
        let snapshot = try StoreSnapshot(storeAt: source)
        let path = snapshot.path
        let (plan, objects, settings) = try snapshot.read { db in
            try StoreReader.requireCoreDataSQL(db, path: path)
            let plan = try RedactionPlan.make(db, path: path, keep: options.keep, scrambleNumbers: options.scrambleNumbers)
            let objects = try Row.fetchAll(
                db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
            )
            .map { SchemaObject(type: $0[0], name: $0[1], table: $0[2], sql: $0[3]) }
            // What SQLite keeps in the file header that the copy must have too.
            let settings = try StoreFileSettings.of(db)
            return (plan, objects, settings)
        }
        let redactor = ValueRedactor(key: options.key, scrambleNumbers: options.scrambleNumbers)
        let temporary = StorePlacement.temporaryStoreURL(besides: target)
        TemporaryFiles.createdStore(temporary)
        var installed: [URL] = []
        do {
            try build(temporary, plan: plan, objects: objects, settings: settings, snapshot: snapshot, redactor: redactor)
            let scratch = try TemporaryDirectory.create(prefix: "questbak-redact")
            defer { TemporaryDirectory.remove(scratch) }
            let files = try redactExternalFiles(externalFiles, into: scratch, redactor: redactor)
            installed = try ExternalStorage.install(files, forStore: target)
            _ = try StorePlacement.place(temporary, at: target, replace: false, backupStamp: "")
            TemporaryFiles.removeStore(temporary)
            return RedactionReport(
                describedBy: plan.describedBy, key: options.keyDescription, numbersScrambled: options.scrambleNumbers,
                tables: plan.tables.map { table in
                    RedactionReport.Table(
                        name: table.name, rows: table.rows, action: table.action,
                        columns: table.treatment == .copy
                            ? table.columns.map { .init(column: $0.name, property: $0.property, kind: $0.kind, action: $0.action) } : [])
                }, externalFiles: files.count, collisionsAvoided: redactor.collisions)
        } catch {
            TemporaryFiles.removeStore(temporary)
            ExternalStorage.remove(installed)
            throw error
        }
    }

    struct SchemaObject {
        var type: String
        var name: String
        var table: String
        var sql: String
    }

    private static func build(
        _ url: URL, plan: RedactionPlan, objects: [SchemaObject], settings: StoreFileSettings, snapshot: StoreSnapshot,
        redactor: ValueRedactor
    ) throws {
        let byName = Dictionary(plan.tables.map { ($0.name.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
        func isMade(_ object: SchemaObject) -> Bool {
            guard let table = byName[object.table.uppercased()] else { return true }
            if object.name.uppercased().hasPrefix("SQLITE_") { return false }
            return table.treatment != .dropped && table.treatment != .shadow
        }
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            let output = try DatabaseQueue(path: url.path, configuration: configuration)
            try output.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA page_size = \(settings.pageSize)")
                try db.execute(sql: "PRAGMA auto_vacuum = \(settings.autoVacuum)")
                try db.inTransaction {
                    // Triggers last, once the rows are in: a trigger must not fire on the copy.
                    for object in objects where object.type != "trigger" && isMade(object) { try db.execute(sql: object.sql) }
                    return .commit
                }
            }
            try output.close()
            try snapshot.database.writeWithoutTransaction { db in
                db.add(function: redactor.sqlFunction)
                try db.execute(sql: "ATTACH DATABASE ? AS redacted", arguments: [url.path])
                defer { try? db.execute(sql: "DETACH DATABASE redacted") }
                try db.inTransaction {
                    for table in plan.tables where table.treatment == .copy {
                        let name = table.name.quotedSQLIdentifier
                        var targets = table.columns.map(\.name.quotedSQLIdentifier)
                        var sources = table.columns.map { column in
                            column.rule.map { "questbak_redact(\(column.name.quotedSQLIdentifier), '\($0.rawValue)')" }
                                ?? column.name.quotedSQLIdentifier
                        }
                        if table.hasRowID {
                            targets.insert("rowid", at: 0)
                            sources.insert("rowid", at: 0)
                        }
                        if table.name.uppercased() == "SQLITE_SEQUENCE" { try db.execute(sql: "DELETE FROM redacted.sqlite_sequence") }
                        try db.execute(
                            sql:
                                "INSERT INTO redacted.\(name) (\(targets.joined(separator: ", "))) SELECT \(sources.joined(separator: ", ")) FROM main.\(name)"
                        )
                    }
                    return .commit
                }
            }
            let finished = try DatabaseQueue(path: url.path, configuration: configuration)
            try finished.writeWithoutTransaction { db in
                for object in objects where object.type == "trigger" && isMade(object) { try db.execute(sql: object.sql) }
                try db.execute(sql: "PRAGMA user_version = \(settings.userVersion ?? 0)")
                try db.execute(sql: "PRAGMA application_id = \(settings.applicationId ?? 0)")
                if settings.journalMode == nil { _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard check == ["ok"] else {
                    throw StoreError.io(path: url.path, reason: "the redacted copy fails SQLite's integrity check: \(check.prefix(3))")
                }
            }
            try finished.close()
        } catch let error as DatabaseError {
            if error.resultCode == .SQLITE_CONSTRAINT {
                throw RedactionError.collision(error.message ?? "a uniqueness constraint")
            }
            throw StoreError.wrapping(error, path: url.path)
        }
    }

    /// Each external-storage file under its new name (the one its references got, when a record
    /// names it) with as many bytes derived from its own: equal files stay equal.
    private static func redactExternalFiles(
        _ files: [(name: String, url: URL)], into folder: URL, redactor: ValueRedactor
    ) throws -> [(name: String, source: URL)] {
        var result: [(name: String, source: URL)] = []
        for file in files {
            var hash = SHA256()
            var size = 0
            try ExternalStorage.readChunks(of: file.url) { chunk in
                hash.update(bufferPointer: chunk)
                size += chunk.count
            }
            let seed = Data(hash.finalize())
            let name = try redactor.redactText(file.name)
            let url = folder.appendingPathComponent(name)
            guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path)
            else {
                throw OutputError.cannotCreate(path: url.path, reason: "cannot write a redacted external-storage file")
            }
            defer { try? handle.close() }
            var block = 0
            var written = 0
            while written < size {
                // One megabyte at a time: a file may be larger than memory.
                let count = min(1 << 20, size - written)
                var seedForBlock = seed
                seedForBlock.append(contentsOf: withUnsafeBytes(of: UInt64(block).bigEndian) { Array($0) })
                try handle.write(contentsOf: redactor.key.stream("external-file", seed: seedForBlock, count: count))
                written += count
                block += 1
            }
            result.append((name, url))
        }
        return result
    }
}
