import CSQLiteConfig
import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Makes a store's schema again from its `CREATE` statements (a version-3 archive's `sql`), in
/// their order, so that `sqlite_master` reads back exactly as the source's did: tables, indexes,
/// views, triggers and virtual tables interleaved as they were made.
///
/// One mechanism serves export and import: export replays the store's statements into a scratch
/// database and refuses (with the sentence import would give) a store whose statements would not
/// come back as written; import replays the archive's before it reads a row, and again into the
/// new store.
struct StatementReplay {
    /// Virtual tables the statements make: their rows live in their shadow tables, which are
    /// carried row by row; the virtual table itself is not.
    var virtualTables: Set<String> = []
    /// Tables SQLite made itself for a virtual table: their own statements in the list are skipped
    /// (SQLite made them, as it did in the source), and their rows come from the archive.
    var shadowTables: Set<String> = []
    /// Every table the statements make, upper-cased.
    var tables: Set<String> = []

    /// Statements that make a schema object; anything else is refused.
    static let prefixes = [
        "CREATE TABLE ", "CREATE INDEX ", "CREATE UNIQUE INDEX ", "CREATE VIEW ", "CREATE TRIGGER ", "CREATE VIRTUAL TABLE ",
    ]

    /// Why a list of statements cannot be made again exactly: one sentence naming the statement.
    struct Refusal: Error {
        var reason: String
    }

    /// Replays `statements` into `db` with triggers turned off for the rest of the connection (the
    /// rows that follow must go in as archived, not as a trigger would change them). The rows
    /// SQLite writes into a new virtual table's shadow tables are removed: the archive carries
    /// them as they were.
    static func replay(_ statements: [String], in db: Database) throws -> StatementReplay {
        guard let connection = db.sqliteConnection, questbak_set_triggers_enabled(connection, 0) == SQLITE_OK else {
            throw Refusal(reason: "this SQLite cannot turn triggers off, so a restore would fire them on its own inserts")
        }
        var replay = StatementReplay()
        for (index, sql) in statements.enumerated() {
            let named = "statement \(index + 1) (\"\(UntrustedText.display(String(sql.prefix(80))))\")"
            do {
                try replay.make(sql, named: named, in: db)
            } catch let error as DatabaseError {
                // Reading back what a hostile statement made can fail too: still this statement's refusal.
                throw Refusal(reason: "\(named) cannot be made again: \(error.message ?? "\(error)")")
            }
        }
        return replay
    }

    /// Runs one statement and checks what it made (`named` says which, in a refusal).
    private mutating func make(_ sql: String, named: String, in db: Database) throws {
        let words = sql.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard Self.prefixes.contains(where: { words.hasPrefix($0) }) else {
            throw Refusal(reason: "\(named) is not a CREATE TABLE, INDEX, VIEW, TRIGGER or VIRTUAL TABLE statement")
        }
        // A shadow table's own statement: SQLite made it with its virtual table, word for word.
        if let made = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND sql = ?", arguments: [sql]),
            shadowTables.contains(made)
        {
            return
        }
        let before = Set(try String.fetchAll(db, sql: "SELECT type || ' ' || name FROM sqlite_master"))
        do {
            // One statement only: GRDB refuses a string that holds several.
            try db.makeStatement(sql: sql).execute()
        } catch let error as DatabaseError {
            let message = error.message ?? "\(error)"
            if message.hasPrefix("no such module") {
                throw Refusal(
                    reason:
                        "\(named) makes a virtual table of a module this SQLite lacks (\(message)), so it cannot be restored")
            }
            throw Refusal(reason: "\(named) fails: \(message)")
        }
        let made = try Row.fetchAll(
            db, sql: "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
        ).filter {
            // SQLite's own objects (sqlite_sequence, which AUTOINCREMENT makes) are SQLite's.
            !before.contains("\($0[0] as String) \($0[1] as String)") && !($0[1] as String).lowercased().hasPrefix("sqlite_")
        }
        guard let object = made.first, object[2] == sql else {
            let stored = made.first.map { "\"\(UntrustedText.display(String(($0[2] as String).prefix(80))))\"" } ?? "nothing"
            throw Refusal(reason: "SQLite stores \(named) as \(stored), not as written, so it would not read back as it was")
        }
        let name: String = object[1]
        if object[0] == "table" { tables.insert(name.uppercased()) }
        if words.hasPrefix("CREATE VIRTUAL TABLE ") {
            virtualTables.insert(name)
            let shadows = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'")
            for shadow in made.dropFirst().map({ $0[1] as String }) {
                guard shadows.contains(shadow) else {
                    throw Refusal(reason: "\(named) made \(shadow), which is not one of its shadow tables")
                }
                shadowTables.insert(shadow)
                try db.execute(sql: "DELETE FROM \(shadow.quotedSQLIdentifier)")
            }
        } else if made.count > 1 {
            throw Refusal(reason: "\(named) made more than one object")
        }
        if words.hasPrefix("CREATE TABLE ") {
            // A generated column's values are SQLite's to compute: an insert cannot put them
            // back as stored, and a VIRTUAL one is no stored value at all.
            let generated = try String.fetchAll(
                db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3)", arguments: [name])
            if let column = generated.first {
                throw Refusal(
                    reason:
                        "\(named): table \(name) has a generated column \(column), whose values SQLite computes, so they cannot be restored as stored"
                )
            }
        }
    }

    /// Replays `statements` into a scratch in-memory database: what a restore would make, or why
    /// it cannot.
    static func check(_ statements: [String]) throws -> StatementReplay {
        let scratch = try DatabaseQueue()
        return try scratch.writeWithoutTransaction { db in try replay(statements, in: db) }
    }
}
