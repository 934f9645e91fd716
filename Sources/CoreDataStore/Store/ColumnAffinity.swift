import Foundation
import GRDB

/// A column's affinity, from its declared type (SQLite's rules, https://www.sqlite.org/datatype3.html
/// section 3.1), and what it does to a value stored in it.
///
/// A restore of rows kept in their storage classes (tables carried row by row, a store by its
/// tables) writes each value as the archive spells it, and the column may store another: a REAL
/// 1.0 in an INTEGER column becomes the INTEGER 1, a REAL in a TEXT column text, −0.0 in a REAL
/// column 0. Such a value is refused while the line is read, by its key, rather than found when
/// the restored store is read back.
package enum ColumnAffinity: String {
    case integer = "INTEGER"
    case text = "TEXT"
    case blob = "BLOB"
    case real = "REAL"
    case numeric = "NUMERIC"

    package init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// What a column of this affinity would store for `value`, when that is not `value` itself
    /// (its storage class, its number or, for −0.0, its sign); nil when the column keeps it.
    ///
    /// The cases that may change are decided here; whether they do is asked of SQLite itself (a
    /// row in a temporary table of the same affinity), since which text looks like a number, and
    /// which whole REALs become integers, are SQLite's to say and differ between its versions.
    package func storedForm(of value: StoredValue, in db: Database) throws -> StoredValue? {
        let mayChange: Bool
        switch (self, value) {
        case (.blob, _), (_, .null), (_, .blob): mayChange = false
        case (.text, .text): mayChange = false
        case (.text, _): mayChange = true
        case (.real, .integer), (.real, .text), (.integer, .text), (.numeric, .text): mayChange = true
        case (.real, .real(let number)): mayChange = number == 0 && number.sign == .minus
        case (.integer, .real(let number)), (.numeric, .real(let number)): mayChange = number.rounded() == number
        case (.integer, .integer), (.numeric, .integer): mayChange = false
        }
        guard mayChange else { return nil }
        // One column per affinity, made once per connection (a table made and dropped per value
        // would change the schema each time, and every prepared statement would be made again).
        let column = "value_\(rawValue.lowercased())"
        try db.execute(
            sql:
                "CREATE TEMP TABLE IF NOT EXISTS questbak_affinity (value_integer INTEGER, value_text TEXT, value_blob BLOB, value_real REAL, value_numeric NUMERIC)"
        )
        try ExactSQL.execute(try db.cachedStatement(sql: "INSERT INTO temp.questbak_affinity (\(column)) VALUES (?)"), [value])
        var stored = StoredValue.null
        try ExactSQL.forEachRow(try db.cachedStatement(sql: "SELECT \(column) FROM temp.questbak_affinity")) { stored = $0[0] }
        try db.cachedStatement(sql: "DELETE FROM temp.questbak_affinity").execute()
        return stored.isIdentical(to: value) ? nil : stored
    }
}

extension StoredValue {
    /// The same storage class and value, a REAL compared bit for bit (so −0.0 is not 0.0).
    func isIdentical(to other: StoredValue) -> Bool {
        switch (self, other) {
        case (.real(let left), .real(let right)): return left.bitPattern == right.bitPattern
        default: return self == other
        }
    }
}
