import Foundation
import GRDB

/// Two stores compared table by table, row by row and value by value as SQLite holds them
/// (storage class and every byte), streamed side by side so memory stays flat. This is the
/// proof `export --verify` ends with: the store its archive restores is the store it was made
/// from, which a comparison of archive digests alone cannot show (an encoder that loses a
/// distinction loses it on both sides).
///
/// What a restore changes on purpose is not a difference: persistent history and CloudKit
/// mirroring start empty (Core Data rebuilds them), a `Z_MAX` below a key already used is raised
/// (reported by the restore), and a virtual table's shadow tables are SQLite's own (the virtual
/// table itself is compared).
package enum StoreComparison {
    /// At most `limit` sentences, each naming the table, the row and the column.
    package static func differences(source: Database, restored: Database, limit: Int = 10) throws -> [String] {
        var found: [String] = []
        func note(_ sentence: String) { if found.count < limit { found.append(sentence) } }
        let sourceTables = try comparedTables(source)
        let restoredTables = try comparedTables(restored)
        for name in sourceTables.keys.sorted() where restoredTables[name] == nil {
            note("table \(name) is not in the restored store")
        }
        for name in restoredTables.keys.sorted() where sourceTables[name] == nil {
            note("table \(name) is in the restored store but not in the source")
        }
        for (name, sourceColumns) in sourceTables.sorted(by: { $0.key < $1.key }) {
            guard let restoredColumns = restoredTables[name], found.count < limit else { continue }
            guard Set(sourceColumns.names) == Set(restoredColumns.names) else {
                note(
                    "table \(name) has columns \(sourceColumns.names.joined(separator: ", ")) in the source and \(restoredColumns.names.joined(separator: ", ")) restored"
                )
                continue
            }
            try compareRows(of: name, columns: sourceColumns, source: source, restored: restored, note: note)
        }
        return found
    }

    private struct Columns {
        var names: [String]
        /// Rows are read in rowid order when the table's key is its rowid (`Z_PK INTEGER PRIMARY
        /// KEY`, kept by a restore); otherwise ordered by every column, bytes compared.
        var rowidKey: String?
    }

    /// The tables whose rows a restore gives back, with their columns.
    private static func comparedTables(_ db: Database) throws -> [String: Columns] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        let virtual = rows.compactMap { row -> String? in
            let sql: String? = row["sql"]
            return sql?.uppercased().hasPrefix("CREATE VIRTUAL TABLE") == true ? row["name"] : nil
        }
        var tables: [String: Columns] = [:]
        for row in rows {
            let name: String = row["name"]
            if CoreDataSQL.isHistoryOrMirroringTable(name.uppercased()) { continue }
            if virtual.contains(where: { name.hasPrefix($0 + "_") }) { continue }
            let info = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_xinfo(?) WHERE hidden = 0", arguments: [name])
            let keys = info.filter { ($0["pk"] as Int) > 0 }
            let integerKey = keys.count == 1 && (keys[0]["type"] as String).uppercased() == "INTEGER" ? keys[0]["name"] as String? : nil
            tables[name] = Columns(names: info.map { $0["name"] }, rowidKey: integerKey)
        }
        return tables
    }

    private static func compareRows(
        of table: String, columns: Columns, source: Database, restored: Database, note: (String) -> Void
    ) throws {
        let quoted = columns.names.map(\.quotedSQLIdentifier)
        let order =
            columns.rowidKey.map(\.quotedSQLIdentifier)
            ?? quoted.map { $0 + " COLLATE BINARY" }.joined(separator: ", ")
        let sql =
            "SELECT \(quoted.joined(separator: ", ")) FROM \(table.quotedSQLIdentifier) ORDER BY \(order)"
        let left = try ExactCursor(source, sql: sql)
        let right = try ExactCursor(restored, sql: sql)
        let maximumKeyColumn = table == CoreDataSQL.primaryKeyTable ? columns.names.firstIndex(of: CoreDataSQL.maxColumn) : nil
        var rowNumber = 0
        while true {
            let (a, b) = (try left.next(), try right.next())
            rowNumber += 1
            guard let a, let b else {
                if a != nil || b != nil {
                    note("table \(table) has \(a != nil ? "more" : "fewer") rows in the source than restored (from row \(rowNumber))")
                }
                return
            }
            for index in a.indices where a[index] != b[index] {
                if index == maximumKeyColumn, case .integer(let raised) = b[index], raised > (a[index].integerValue ?? 0) {
                    continue  // raised above a key already used (from NULL: none), and reported by the restore
                }
                let key = columns.rowidKey.map { "\($0) \(a[columns.names.firstIndex(of: $0) ?? 0].summary)" } ?? "row \(rowNumber)"
                note(
                    "table \(table), \(key), column \(columns.names[index]): \(a[index].summary) in the source, \(b[index].summary) restored"
                )
                return
            }
        }
    }
}
