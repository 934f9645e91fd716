import CoreDataStore
import Foundation
import GRDB

/// The links of one to-many kept on its destination's row: the table and the column that holds
/// the source's `Z_PK` (`ModelLayout.LinkStorage.destinationColumn`), as `temp.questbak_links`
/// names them.
struct DestinationLinkGroup: Hashable {
    var table: String
    var column: String
}

/// Which groups of links the link step (`StatementRestore.applyDestinationLinks`) leaves alone.
enum DestinationLinkGroups {
    case none
    case some(Set<DestinationLinkGroup>)
    /// Every group: the step has nothing to do.
    case all
}

/// The links of one group in the order of their targets (then sources), read while the
/// destination's rows are inserted in the order of their keys, as an export writes a member:
/// a row takes the lowest source of the links that name it, and the reading moves past them.
///
/// *Why the link step may skip a group whose every link was taken* (`bound` equals the links
/// the group has). Each row takes at most one link and each link is taken at most once, by
/// the row its target names, a row that was stored (a row refused does not count), so every link
/// names a distinct row of the table. The step's join then reaches as many rows as there are
/// links and would set each to the one source that names it, which is what the row took: no
/// link is dropped, no entry logged, no value different. A link the reading passed (its target
/// was inserted before the link was read, or is not a row, or is named twice), or read after the
/// reading started, is not taken, and the group goes to the step, which sets every row a link is
/// left for, so a value a row took is overwritten: every row that took a link keeps one (a link
/// to a row is never dropped, but one of a higher source for the same row, which leaves the
/// lowest). After a row is refused nothing is skipped (`linkGroupsBoundOnInsert`).
final class DestinationLinkCursor {
    let group: DestinationLinkGroup
    private var rows: RowCursor?
    private var next: (target: Int64, source: Int64)?
    /// Links taken by rows that were stored.
    var bound = 0

    init(_ db: Database, _ group: DestinationLinkGroup) throws {
        self.group = group
        rows = try Row.fetchCursor(
            db, sql: "SELECT target, source FROM temp.questbak_links WHERE tableName = ? AND columnName = ? ORDER BY target, source",
            arguments: [group.table, group.column])
        try advance()
    }

    private func advance() throws {
        next = nil
        guard let row = try rows?.next() else {
            rows = nil
            return
        }
        // Written as integers (`RecordInserter.insert`); anything else is left to the link step.
        if case .int64(let target) = (row[0] as DatabaseValue).storage, case .int64(let source) = (row[1] as DatabaseValue).storage {
            next = (target, source)
        } else {
            next = (Int64.min, 0)
        }
    }

    /// The source of the first link that names `key`, read past every link to a lower target.
    func source(linkingTo key: Int64) throws -> Int64? {
        while let link = next, link.target < key { try advance() }
        guard let link = next, link.target == key else { return nil }
        try advance()
        return link.source
    }

    /// Resets the statement (the link step writes the table, and the restore drops it).
    func close() {
        rows = nil
        next = nil
    }
}

/// What one entity's rows take as they are inserted: a reader per group of links kept on its
/// table, and the insert of each set of them a row takes.
final class DestinationLinkBinding {
    let plan: ModelLayout.EntityPlan
    let insertColumns: [String]
    let cursors: [DestinationLinkCursor]
    /// By the bits of `cursors` whose link the row takes.
    private var inserts: [Int: Statement] = [:]

    init(plan: ModelLayout.EntityPlan, insertColumns: [String], cursors: [DestinationLinkCursor]) {
        self.plan = plan
        self.insertColumns = insertColumns
        self.cursors = cursors
    }

    /// The insert of the row's columns followed by the columns of the links it takes, in the
    /// order of `cursors`. (A row that takes none is inserted as before: a column it leaves out
    /// gets the column's default, not a null.)
    func insert(taking links: Int, db: Database) throws -> Statement {
        if let made = inserts[links] { return made }
        let columns = insertColumns + cursors.indices.filter { links & (1 << $0) != 0 }.map { cursors[$0].group.column }
        let made = try db.makeStatement(
            sql:
                "INSERT INTO \(plan.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        )
        inserts[links] = made
        return made
    }

    /// The row that took `links` was stored.
    func stored(_ links: Int) {
        for (index, cursor) in cursors.enumerated() where links & (1 << index) != 0 { cursor.bound += 1 }
    }

    /// Whether a row may take the group's column when it is inserted rather than have it set
    /// afterwards with no other outcome: one row a key, and nothing an insert checks reads the
    /// column. Not in a table whose `Z_PK` is not its rowid, nor when the column is one of the
    /// row's own columns, is NOT NULL (the insert of a row without a link fails
    /// either way, but one with a link would not), is generated or the table has generated
    /// columns, is in a unique index or the table has a partial index or one on an expression (a
    /// conflict or an error at the insert instead of in the link step), the table has a CHECK
    /// constraint or a foreign key. (Triggers are off while a restore writes: `StatementReplay`.)
    static func takesLinksOnInsert(_ db: Database, _ group: DestinationLinkGroup, insertColumns: [String]) throws -> Bool {
        let column = group.column.uppercased()
        guard !insertColumns.contains(where: { $0.uppercased() == column }) else { return false }
        // A table whose `Z_PK` is not its rowid may hold a key twice: the link step sets both rows.
        guard try KeyRangeReaders.isKeyedByRowid(db, table: group.table) else { return false }
        let table = group.table.quotedDatabaseIdentifier
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_xinfo(\(table))")
        guard let info = columns.first(where: { ($0["name"] as String?)?.uppercased() == column }), (info["notnull"] as Int?) == 0,
            !columns.contains(where: { ($0["hidden"] as Int? ?? 0) != 0 })
        else { return false }
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [group.table])
        guard let sql, !sql.uppercased().contains("CHECK") else { return false }
        guard try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(table))").isEmpty else { return false }
        for index in try Row.fetchAll(db, sql: "PRAGMA index_list(\(table))") {
            guard let name: String = index["name"] else { return false }
            let keyColumns = try Row.fetchAll(db, sql: "PRAGMA index_xinfo(\(name.quotedDatabaseIdentifier))").filter {
                ($0["key"] as Int?) == 1
            }
            // An expression's column number is -2.
            if keyColumns.contains(where: { ($0["cid"] as Int?) == -2 }) { return false }
            if (index["partial"] as Int?) != 0 { return false }
            let named = keyColumns.contains { ($0["name"] as String?)?.uppercased() == column }
            if named, (index["unique"] as Int?) != 0 { return false }
        }
        return true
    }
}
