import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Another app's store (a format 3 archive): its statements from the first plain index on made
/// once the records are in, as a replay of `sqlite3 .dump` makes them, and not kept up row by
/// row (in a replay of the model store's dump, its indexes kept up as the rows went in cost 15% of
/// the replay's CPU).
///
/// What is made first, and what stands in meanwhile:
/// - the statements before the first plain index, all `CREATE TABLE` (the tables the records
///   fill among them), in their order;
/// - each unique index of the later statements on one of those tables, as a stand-in of the same
///   key columns, collations and order under a name of questbak's (`questbak_unique_N`): a row
///   that repeats a key is refused at its insert with the same error (SQLite names the table and
///   columns, not the index), so a duplicate is still dropped for the record restored before it
///   (`UniqueConstraintRule`) and reported at its line;
/// - each table the archive carries as rows (`tables/`, whose lines come before the records) that
///   a later statement makes, as a table of the same statement in `temp`: a line goes in by the
///   table's name, which finds the `temp` one, with the same columns, affinities and constraints,
///   so it is refused, or stored, as it would be, at its line.
///
/// Once the records are in (`finish`), the stand-in indexes are dropped and the later statements
/// made in their order, so `sqlite_master` holds the same rows in the same order; each carried
/// table's rows are copied, in their order, into the table its statement made. *Why the store is
/// the same:* an index holds one entry a row of its table, made from the row's columns, whether
/// built in one pass or kept up (`PRAGMA integrity_check`, which the read-back runs, compares them
/// with the rows); a copied row has the values it had (the same declared types apply the same
/// affinity, which changes nothing the second time) and the same rowid (the rows go in in rowid
/// order into an empty table, as the lines went into the stand-in: an alias of the rowid is
/// copied, else SQLite gives each the next rowid, as it did in `temp`); the
/// constraints that refused a line in `temp` are the same statement's.
///
/// `ModelIndexesAfterRecordsTests` restores every store shape both ways.
///
/// Not made later (`plan` returns nil), so everything is made first, as before: a statement after
/// the first plain index that makes anything but a table or an index (a trigger or a view, or a
/// virtual table); a table made later that the records could fill (every entity's and join table's
/// name starts with `Z`: only Core Data's bookkeeping, history and mirroring, and carried tables
/// named otherwise, are made later); a carried table made later with `AUTOINCREMENT` (its counter
/// is restored from `sqlite_sequence`'s own lines), with a unique index among the later statements,
/// without a rowid it can be ordered by, or whose rows are more than `carriedBytesLimit` by the
/// manifest; a unique index on a table made first that is partial or indexes an expression (its
/// stand-in could refuse a row otherwise, or by another message).
struct ModelIndexesAfterRecords {
    /// The statements made once the records are in.
    let later: [String]
    /// The unique indexes that stand in until then: each one's statement, and its name.
    let uniqueStandIns: [(name: String, sql: String)]
    /// Carried tables made later: each one's name, its statement and the rowid it is ordered by (nil
    /// for a table without one).
    let carriedStandIns: [(name: String, sql: String, rowid: String?)]

    /// A carried table made later waits in `temp` for the records: not one larger than this.
    static let carriedBytesLimit = 8 << 20

    /// How the statements are made for the records of an archive that carries `carried`, or nil
    /// when everything is made first. The statements are tried on a database in memory, so their
    /// objects are known as SQLite makes them (no parsing of their text here).
    static func plan(_ statements: [String], carried: [ArchiveManifest.TableMember]) -> ModelIndexesAfterRecords? {
        let words = statements.map { $0.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        guard let first = words.firstIndex(where: { $0.hasPrefix("CREATE INDEX ") }),
            words[..<first].allSatisfy({ $0.hasPrefix("CREATE TABLE ") }),
            words[first...].allSatisfy({
                $0.hasPrefix("CREATE TABLE ") || $0.hasPrefix("CREATE INDEX ") || $0.hasPrefix("CREATE UNIQUE INDEX ")
            })
        else { return nil }
        let carriedByName = Dictionary(carried.map { ($0.name.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
        do {
            let scratch = try DatabaseQueue()
            return try scratch.write { db -> ModelIndexesAfterRecords? in
                for sql in statements[..<first] { try db.execute(sql: sql) }
                let earlyTables = Set(try String.fetchAll(db, sql: "SELECT upper(name) FROM sqlite_master WHERE type = 'table'"))
                var uniqueStandIns: [(name: String, sql: String)] = []
                var carriedStandIns: [(name: String, sql: String, rowid: String?)] = []
                var laterUniqueTables: Set<String> = []
                for (offset, sql) in statements[first...].enumerated() {
                    let before = Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM sqlite_master"))
                    try db.execute(sql: sql)
                    let made = try Row.fetchAll(db, sql: "SELECT rowid, type, name, tbl_name FROM sqlite_master").filter {
                        !before.contains($0[0])
                    }
                    guard let object = made.first(where: { ($0[1] as String) != "index" || made.count == 1 }) else { return nil }
                    let type: String = object[1]
                    let name: String = object[2]
                    let table = (object[3] as String).uppercased()
                    if type == "table" {
                        let upper = name.uppercased()
                        if let member = carriedByName[upper] {
                            guard !upper.hasPrefix("Z") || CoreDataSQL.isCoreDataTable(upper), member.bytes <= Int64(carriedBytesLimit),
                                !words[first + offset].contains("AUTOINCREMENT"), let rowid = try rowidName(db, table: name)
                            else { return nil }
                            carriedStandIns.append((name, sql, rowid.isEmpty ? nil : rowid))
                        } else {
                            guard CoreDataSQL.isCoreDataTable(upper) else { return nil }
                        }
                    } else if type == "index", words[first + offset].hasPrefix("CREATE UNIQUE INDEX ") {
                        laterUniqueTables.insert(table)
                        guard earlyTables.contains(table) else { continue }
                        guard let standIn = try uniqueStandIn(db, index: name, table: object[3], number: uniqueStandIns.count) else {
                            return nil
                        }
                        uniqueStandIns.append((standIn.name, standIn.sql))
                    } else if type != "index" {
                        return nil
                    }
                }
                guard !carriedStandIns.contains(where: { laterUniqueTables.contains($0.name.uppercased()) }) else { return nil }
                let made = ModelIndexesAfterRecords(
                    later: Array(statements[first...]), uniqueStandIns: uniqueStandIns, carriedStandIns: carriedStandIns)
                // The stand-ins and their later names are made here first: a statement they cannot
                // make (a carried table's name with its schema, a name taken) leaves everything first.
                try made.makeStandIns(db)
                try made.renameCarriedStandIns(db)
                return made
            }
        } catch {
            // A statement SQLite refuses here is refused again where the restore makes it.
            return nil
        }
    }

    /// The name a copy orders `table`'s rows by: "" for a table without a rowid; nil when each of
    /// the rowid's names is one of its columns.
    private static func rowidName(_ db: Database, table: String) throws -> String? {
        let columns = Set(
            try Row.fetchAll(db, sql: "PRAGMA table_xinfo(\(table.quotedSQLIdentifier))").map { ($0["name"] as String).lowercased() })
        let free = ["rowid", "_rowid_", "oid"].filter { !columns.contains($0) }
        guard !free.isEmpty else { return nil }
        // A name that is no column answers for the rowid, or the table has none.
        return free.first { (try? db.makeStatement(sql: "SELECT \($0) FROM \(table.quotedSQLIdentifier)")) != nil } ?? ""
    }

    /// A unique index of the same key columns, collations and order as `index`, or nil when it
    /// is partial or indexes an expression.
    private static func uniqueStandIn(_ db: Database, index: String, table: String, number: Int) throws -> (name: String, sql: String)? {
        let listed = try Row.fetchAll(db, sql: "PRAGMA index_list(\(table.quotedSQLIdentifier))")
        guard let entry = listed.first(where: { ($0["name"] as String) == index }), (entry["partial"] as Int) == 0 else { return nil }
        let keys = try Row.fetchAll(db, sql: "PRAGMA index_xinfo(\(index.quotedSQLIdentifier))").filter { ($0["key"] as Int) == 1 }
        var columns: [String] = []
        for key in keys {
            guard (key["cid"] as Int) >= 0, let column = key["name"] as String?, let collation = key["coll"] as String? else { return nil }
            columns.append(
                "\(column.quotedSQLIdentifier) COLLATE \(collation.quotedSQLIdentifier)\((key["desc"] as Int) == 1 ? " DESC" : "")"
            )
        }
        guard !columns.isEmpty else { return nil }
        let name = "questbak_unique_\(number)"
        return (name, "CREATE UNIQUE INDEX \(name) ON \(table.quotedSQLIdentifier) (\(columns.joined(separator: ", ")))")
    }

    /// Before the records: the stand-ins.
    func makeStandIns(_ db: Database) throws {
        for index in uniqueStandIns { try db.execute(sql: index.sql) }
        for table in carriedStandIns { try db.execute(sql: Self.inTemp(table.sql)) }
    }

    /// Out of the way of the later statements' names: an index made `ON` a name SQLite finds in
    /// `temp` first would be made there.
    private func renameCarriedStandIns(_ db: Database) throws {
        for (number, table) in carriedStandIns.enumerated() {
            try db.execute(sql: "ALTER TABLE temp.\(table.name.quotedSQLIdentifier) RENAME TO questbak_carried_\(number)")
        }
    }

    /// `CREATE TABLE …` as `CREATE TEMP TABLE …`.
    static func inTemp(_ sql: String) -> String {
        guard
            let create = sql.range(of: "CREATE", options: [.caseInsensitive, .anchored])
                ?? sql.range(of: "CREATE", options: .caseInsensitive)
        else { return sql }
        return sql[..<create.upperBound] + " TEMP" + sql[create.upperBound...]
    }

    /// Once the records are in: the stand-in indexes dropped, the later statements made (`replay`),
    /// and each carried table's rows copied from its stand-in, which is dropped.
    func finish(_ db: Database, replay: ([String]) throws -> Void) throws {
        for index in uniqueStandIns { try db.execute(sql: "DROP INDEX \(index.name)") }
        try renameCarriedStandIns(db)
        try replay(later)
        for (number, table) in carriedStandIns.enumerated() {
            let columns = try db.columns(in: table.name, in: "main").map(\.name.quotedSQLIdentifier).joined(separator: ", ")
            // In rowid order into an empty table: each row gets the rowid it had (an alias of the
            // rowid is among the columns; else SQLite gives the next, as it gave it in `temp`).
            let order = table.rowid.map { " ORDER BY \($0)" } ?? ""
            try db.execute(
                sql:
                    "INSERT INTO main.\(table.name.quotedSQLIdentifier) (\(columns)) SELECT \(columns) FROM temp.questbak_carried_\(number)\(order)"
            )
            try db.execute(sql: "DROP TABLE temp.questbak_carried_\(number)")
        }
    }
}
