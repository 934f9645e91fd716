import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// Restores the tables an archive carries besides its entities (`ArchiveManifest.TableMember`):
/// each is created from its own statements and filled row by row, exactly.
///
/// The statements come from the archive, which may be hostile, so each must be one `CREATE
/// TABLE` (or `CREATE [UNIQUE] INDEX`) that makes a new object of that table and nothing else.
struct CarriedTables {
    let archive: String
    let tables: [ArchiveManifest.TableMember]
    /// Whether the tables are made from their members' statements; false when the whole schema was
    /// already made from the manifest's `sql` (format version 3).
    let createsTables: Bool
    /// Each table's INSERT and columns (the statement itself is the connection's cached one, so
    /// nothing here outlives the connection).
    private var inserts: [String: (sql: String, columns: [String], affinities: [ColumnAffinity])] = [:]

    init(archive: String, tables: [ArchiveManifest.TableMember], createsTables: Bool = true) {
        self.archive = archive
        self.tables = tables
        self.createsTables = createsTables
    }

    private func refuse(_ table: ArchiveManifest.TableMember, _ reason: String) -> ArchiveError {
        ArchiveError.invalidLine(path: archive, member: table.path, line: 0, reason: reason)
    }

    /// Creates every carried table and its indexes in `db` (or, when the schema is made already,
    /// checks that each table is there).
    mutating func create(in db: Database) throws {
        for table in tables where !createsTables {
            guard try db.tableExists(table.name) else {
                throw refuse(table, "table \(table.name) is not one the archive's statements make")
            }
            prepareInsert(table, columns: try db.columns(in: table.name))
        }
        for table in tables where createsTables {
            guard try !db.tableExists(table.name) else {
                throw refuse(table, "table \(table.name) is one the store has already")
            }
            let before = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master"))
            try execute(table.sql, prefixes: ["CREATE TABLE "], for: table, in: db)
            for index in table.indexes {
                try execute(index, prefixes: ["CREATE INDEX ", "CREATE UNIQUE INDEX "], for: table, in: db)
            }
            // Everything the statements made belongs to this table, and the table is there.
            let made = try Row.fetchAll(db, sql: "SELECT name, tbl_name FROM sqlite_master").filter { !before.contains($0[0]) }
            guard try db.tableExists(table.name), made.allSatisfy({ ($0[1] as String).caseInsensitiveCompare(table.name) == .orderedSame })
            else {
                throw refuse(table, "its statements create something other than table \(table.name) and its indexes")
            }
            prepareInsert(table, columns: try db.columns(in: table.name))
        }
    }

    private mutating func prepareInsert(_ table: ArchiveManifest.TableMember, columns info: [ColumnInfo]) {
        let columns = info.map(\.name)
        let sql =
            "INSERT INTO \(table.name.quotedSQLIdentifier) (\(columns.map(\.quotedSQLIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        inserts[table.name] = (sql, columns, info.map { ColumnAffinity(declaredType: $0.type) })
    }

    private func execute(_ sql: String, prefixes: [String], for table: ArchiveManifest.TableMember, in db: Database) throws {
        if let reason = Self.execute(sql, prefixes: prefixes, in: db) { throw refuse(table, reason) }
    }

    /// Runs one statement from an archive if it starts with one of `prefixes` (upper case, words
    /// separated by single spaces) and is a single statement; else, or when it fails, the reason.
    static func execute(_ sql: String, prefixes: [String], in db: Database) -> String? {
        let words = sql.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard prefixes.contains(where: { words.hasPrefix($0) }) else {
            return "\"\(UntrustedText.display(String(sql.prefix(60))))\" is not a \(prefixes[0].lowercased())statement"
        }
        do {
            // One statement only: GRDB refuses a string that holds several.
            try db.makeStatement(sql: sql).execute()
            return nil
        } catch let error as DatabaseError {
            return "its statement fails: \(error.message ?? "\(error)")"
        } catch {
            return "its statement fails: \(error)"
        }
    }

    /// Inserts one row line of a carried table.
    func insert(line: Data, table: ArchiveManifest.TableMember, lineNumber: Int, into db: Database) throws {
        func invalid(_ reason: String) -> ArchiveError {
            ArchiveError.invalidLine(path: archive, member: table.path, line: lineNumber, reason: reason)
        }
        guard let insert = inserts[table.name] else { throw invalid("table \(table.name) was not created") }
        let members: [(key: String, value: JSONValue)]
        do {
            members = try JSONLine.parseObject(line)
        } catch let error as JSONLine.SyntaxError {
            throw invalid(error.lineReason)
        }
        guard members.map(\.key) == insert.columns else {
            throw invalid("the row's keys are not the table's columns (\(insert.columns.joined(separator: ", ")))")
        }
        let values: [StoredValue] = try zip(members, insert.affinities).map { member, affinity in
            do {
                return try TableMemberEncoding.value(member.value, affinity: affinity, in: db)
            } catch let mismatch as TableMemberEncoding.Mismatch {
                throw invalid("\(member.key) holds \(mismatch.found)")
            }
        }
        do {
            try ExactSQL.execute(try db.cachedStatement(sql: insert.sql), values)
        } catch let error as DatabaseError {
            throw invalid("the row cannot be stored: \(error.message ?? "\(error)")")
        }
    }

    /// Each table of the written store, encoded as an export would, must have its member's digest.
    func verify(_ db: Database, store: String) throws {
        for table in tables {
            var hasher = SHA256()
            let count = try TableMemberEncoding.encode(db, table: table.name, path: store) { hasher.update(data: $0) }
            let digest = hasher.finalize().hexString
            guard count == table.count, digest == table.sha256 else {
                throw ImportError.verificationFailed(
                    store: store, entity: "table \(table.name)", expected: "\(table.count) rows \(table.sha256)",
                    found: "\(count) rows \(digest)")
            }
        }
    }
}
