import Foundation
import GRDB
import GRDBSQLite

/// A column value exactly as SQLite holds it: its storage class and, for TEXT, every byte.
///
/// GRDB reads TEXT through a C string, which ends at the first NUL, and binds text with length −1,
/// which does the same; it also has no way to hold bytes that are not valid UTF-8. A backup must
/// keep every byte, so questbak reads and binds column values through this type, with explicit
/// byte lengths, and leaves GRDB the connections, transactions and statements.
package enum StoredValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    /// TEXT as stored: UTF-8 bytes in a UTF-8 database, valid or not, NUL included.
    case text(Data)
    case blob(Data)

    init(_ statement: SQLiteStatement, column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: self = .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: self = .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            // Text first, then its length: the order SQLite documents for exact lengths.
            let bytes = sqlite3_column_text(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            self = .text(bytes.map { Data(bytes: $0, count: count) } ?? Data())
        case SQLITE_BLOB:
            let bytes = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            self = .blob(bytes.map { Data(bytes: $0, count: count) } ?? Data())
        default: self = .null
        }
    }

    /// The integer, or nil for any other storage class.
    var integerValue: Int64? {
        guard case .integer(let number) = self else { return nil }
        return number
    }

    /// The text when it is valid UTF-8 (NUL allowed), else nil.
    package var validText: String? {
        guard case .text(let bytes) = self else { return nil }
        return String(validUTF8: bytes)
    }

    /// The value as a report shows it, whatever column it came from.
    package var reportable: Value {
        switch self {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .real(let number): return .double(number)
        case .text(let bytes): return Value.text(bytes)
        case .blob(let bytes): return .binary(bytes)
        }
    }

    /// The storage class and value in words, for error messages.
    package var summary: String {
        switch self {
        case .null: return "NULL"
        case .integer(let number): return "INTEGER \(number)"
        case .real(let number): return "REAL \(number)"
        case .text(let bytes): return "TEXT of \(bytes.count) bytes"
        case .blob(let bytes): return "BLOB of \(bytes.count) bytes"
        }
    }

    /// The bytes of a TEXT or BLOB, which `bind` points SQLite at.
    fileprivate var byteCount: Int {
        switch self {
        case .text(let bytes), .blob(let bytes): return bytes.count
        case .null, .integer, .real: return 0
        }
    }

    /// Binds the value; a TEXT's or BLOB's bytes are first copied to `storage`, which must hold
    /// `byteCount` bytes and stay as it is until the statement is reset and its bindings cleared
    /// (SQLITE_STATIC: SQLite neither copies nor frees them).
    fileprivate func bind(to statement: SQLiteStatement, at index: Int32, storage: UnsafeMutableRawPointer?) -> Int32 {
        let unowned = unsafeBitCast(0, to: sqlite3_destructor_type.self)
        switch self {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let number): return sqlite3_bind_int64(statement, index, number)
        case .real(let number): return sqlite3_bind_double(statement, index, number)
        case .text(let bytes):
            guard !bytes.isEmpty, let storage else { return bindText(statement, index, nil, count: 0) }
            bytes.copyBytes(to: storage.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            return bindText(statement, index, storage.assumingMemoryBound(to: CChar.self), count: bytes.count)
        case .blob(let bytes):
            guard !bytes.isEmpty, let storage else { return sqlite3_bind_zeroblob(statement, index, 0) }
            bytes.copyBytes(to: storage.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            return sqlite3_bind_blob64(statement, index, storage, UInt64(bytes.count), unowned)
        }
    }
}

/// Runs SQL with exact values in and out: the one row reader for entity tables, and the way
/// values that may hold NUL or arbitrary bytes are written. Statements are GRDB's, stepped here
/// directly: always inside a transaction GRDB opened, so its observation and autocommit
/// tracking, which questbak does not use, see nothing amiss.
package enum ExactSQL {
    /// Runs `statement` once with `arguments` bound exactly; for INSERT, UPDATE and DELETE.
    package static func execute(_ statement: Statement, _ arguments: [StoredValue]) throws {
        try withBound(statement, arguments, step)
    }

    /// Runs `statement` once with `leading`, `values` and `trailing` bound one after another, as
    /// the one array of them would be: a restore's row (its key, entity and version, the record's
    /// values, the sources of the links it takes), whose values were otherwise copied into one
    /// array for each row, each text's storage retained and released again.
    package static func execute(
        _ statement: Statement, _ leading: [StoredValue], _ values: [StoredValue], _ trailing: [StoredValue]
    )
        throws
    {
        try withBound(statement, leading, values, trailing, step)
    }

    /// Runs `statement` once with `arguments` bound, each text straight from its range of
    /// `texts` (SQLITE_STATIC), for INSERTs of many rows whose texts the caller writes into one
    /// buffer: a `StoredValue` holds each text in a `Data` of its own, which a merge's report
    /// (half a million entries, two values each) made, copied and freed one by one, a third of
    /// the time of its writer thread. The bindings are cleared before `texts` can change.
    package static func execute(_ statement: Statement, _ arguments: [ExactArgument], texts: [UInt8]) throws {
        try texts.withUnsafeBufferPointer { bytes in
            try withBound(
                statement, count: arguments.count,
                { handle in
                    for (index, argument) in arguments.enumerated() {
                        let code = try argument.bind(to: handle, at: Int32(index + 1), texts: bytes)
                        guard code == SQLITE_OK else { throw error(code, handle) }
                    }
                }, step)
        }
    }

    /// One step of a statement that writes: done, or a row (a `RETURNING`), or the error.
    private static func step(_ handle: SQLiteStatement) throws {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code, handle) }
    }

    package static func execute(_ db: Database, sql: String, _ arguments: [StoredValue]) throws {
        try execute(try db.makeStatement(sql: sql), arguments)
    }

    /// Calls `body` with each result row's column reader, in the order SQLite returns them.
    package static func forEachRow(
        _ db: Database, sql: String, _ arguments: [StoredValue] = [], _ body: (ExactRow) throws -> Void
    ) throws {
        try forEachRow(try db.makeStatement(sql: sql), arguments, body)
    }

    /// The same, for a statement prepared once and run many times.
    package static func forEachRow(_ statement: Statement, _ arguments: [StoredValue] = [], _ body: (ExactRow) throws -> Void) throws {
        // The raw handle lives as long as GRDB's statement: keep that alive through the loop.
        try withBound(statement, arguments) { handle in
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw error(code, handle) }
                try body(ExactRow(handle: handle))
            }
        }
    }

    /// Every row, read exactly (for small result sets).
    package static func fetchAll(_ db: Database, sql: String, _ arguments: [StoredValue] = []) throws -> [[StoredValue]] {
        var rows: [[StoredValue]] = []
        try forEachRow(db, sql: sql, arguments) { row in rows.append((0..<row.count).map { row[$0] }) }
        return rows
    }

    /// Runs `body` with the statement's handle, `arguments` bound. Texts and blobs are copied
    /// once into one buffer that lives through `body` and bound from it without a copy of
    /// SQLite's own: binding with SQLITE_TRANSIENT made SQLite allocate, copy and later free
    /// every value, a third of the time of a merge's report entries. The statement is reset and
    /// its bindings cleared before the buffer goes, so nothing is left pointing into it.
    private static func withBound<T>(_ statement: Statement, _ arguments: [StoredValue], _ body: (SQLiteStatement) throws -> T) throws -> T
    {
        try withBound(statement, arguments, [], [], body)
    }

    /// The same, of the arguments of three arrays one after another. Each array's values are
    /// read in its buffer, not copied out of it (each text's storage retained and released) as
    /// an iteration of the array copied them.
    private static func withBound<T>(
        _ statement: Statement, _ first: [StoredValue], _ second: [StoredValue], _ third: [StoredValue],
        _ body: (SQLiteStatement) throws -> T
    ) throws -> T {
        func byteCount(_ arguments: [StoredValue]) -> Int {
            arguments.withUnsafeBufferPointer { values in
                var count = 0
                for index in values.indices { count += values[index].byteCount }
                return count
            }
        }
        let byteCount = byteCount(first) + byteCount(second) + byteCount(third)
        return try withUnsafeTemporaryAllocation(byteCount: max(byteCount, 1), alignment: 1) { buffer in
            try withBound(
                statement, count: first.count + second.count + third.count,
                { handle in
                    var offset = 0
                    var number: Int32 = 1
                    func bind(_ arguments: [StoredValue]) throws {
                        try arguments.withUnsafeBufferPointer { values in
                            for index in values.indices {
                                let code = values[index].bind(to: handle, at: number, storage: buffer.baseAddress.map { $0 + offset })
                                guard code == SQLITE_OK else { throw error(code, handle) }
                                offset += values[index].byteCount
                                number += 1
                            }
                        }
                    }
                    try bind(first)
                    try bind(second)
                    try bind(third)
                }, body)
        }
    }

    /// Runs `body` with the statement's handle once `bind` has bound its `count` parameters; the
    /// statement is reset and its bindings cleared after, whatever `bind` or `body` threw, so no
    /// binding outlives the bytes its caller bound without a copy.
    private static func withBound<T>(
        _ statement: Statement, count: Int, _ bind: (SQLiteStatement) throws -> Void, _ body: (SQLiteStatement) throws -> T
    ) throws -> T {
        // The raw handle lives as long as GRDB's statement: keep that alive throughout.
        try withExtendedLifetime(statement) {
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            // GRDB would refuse a count that differs; unbound placeholders would be NULL.
            guard sqlite3_bind_parameter_count(handle) == Int32(count) else {
                throw argumentCountError(handle, count)
            }
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            try bind(handle)
            return try body(handle)
        }
    }

    /// Whether two statements without arguments, stepped side by side, give the same number of
    /// rows and columns and the same values in the same order, exactly as SQLite holds them: the
    /// storage class, an INTEGER's value, a REAL's bits, every byte of a TEXT or BLOB. Stops at
    /// the first difference; nothing is copied. A TEXT's bytes are read as stored, so both
    /// statements' databases must be UTF-8 (`diff` checks that first): in another encoding,
    /// `sqlite3_column_bytes` would convert after `sqlite3_column_blob` gave the pointer.
    package static func sameRows(_ first: Statement, _ second: Statement) throws -> Bool {
        try withBound(first, []) { left in
            try withBound(second, []) { right in
                let columns = sqlite3_column_count(left)
                guard sqlite3_column_count(right) == columns else { return false }
                while true {
                    let (leftCode, rightCode) = (sqlite3_step(left), sqlite3_step(right))
                    guard leftCode == SQLITE_ROW || leftCode == SQLITE_DONE else { throw error(leftCode, left) }
                    guard rightCode == SQLITE_ROW || rightCode == SQLITE_DONE else { throw error(rightCode, right) }
                    guard leftCode == rightCode else { return false }
                    if leftCode == SQLITE_DONE { return true }
                    for column in 0..<columns where !sameValue(left, right, column) { return false }
                }
            }
        }
    }

    private static func sameValue(_ left: SQLiteStatement, _ right: SQLiteStatement, _ column: Int32) -> Bool {
        // Each value taken once (a `sqlite3_column_*` call enters the connection's mutex; a
        // `sqlite3_value_*` call does not) and read as stored: no conversion, so no copy. An
        // unprotected value is safe to read so while no other thread uses its connection, which
        // GRDB's queue, inside which the statement is stepped, makes sure of.
        guard let first = sqlite3_column_value(left, column), let second = sqlite3_column_value(right, column) else { return false }
        let type = sqlite3_value_type(first)
        guard sqlite3_value_type(second) == type else { return false }
        switch type {
        case SQLITE_NULL: return true
        case SQLITE_INTEGER: return sqlite3_value_int64(first) == sqlite3_value_int64(second)
        case SQLITE_FLOAT: return sqlite3_value_double(first).bitPattern == sqlite3_value_double(second).bitPattern
        default:
            // The bytes first, then their length: the order SQLite documents for exact lengths.
            let (firstBytes, secondBytes) = (sqlite3_value_blob(first), sqlite3_value_blob(second))
            let count = sqlite3_value_bytes(first)
            guard sqlite3_value_bytes(second) == count else { return false }
            guard count > 0, let firstBytes, let secondBytes else { return count == 0 }
            return memcmp(firstBytes, secondBytes, Int(count)) == 0
        }
    }

    private static func argumentCountError(_ handle: SQLiteStatement, _ count: Int) -> DatabaseError {
        DatabaseError(
            resultCode: .SQLITE_MISUSE, message: "\(count) arguments for \(sqlite3_bind_parameter_count(handle)) placeholders",
            sql: String(cString: sqlite3_sql(handle)))
    }

    private static func error(_ code: Int32, _ handle: SQLiteStatement) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
            sql: String(cString: sqlite3_sql(handle)))
    }
}

/// A value `ExactSQL.execute(_:_:texts:)` binds: a TEXT as the range of its caller's buffer
/// that holds its bytes, which SQLite reads in place.
package enum ExactArgument: Sendable, Equatable {
    case null
    case integer(Int64)
    /// TEXT: these bytes of the buffer the statement is run with, NUL included.
    case text(Range<Int>)

    fileprivate func bind(to statement: SQLiteStatement, at index: Int32, texts: UnsafeBufferPointer<UInt8>) throws -> Int32 {
        switch self {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let number): return sqlite3_bind_int64(statement, index, number)
        case .text(let range):
            // A range past the buffer would have SQLite read memory that is not the text's.
            guard range.lowerBound >= 0, range.upperBound <= texts.count else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE, message: "text bytes \(range) of a buffer of \(texts.count)",
                    sql: String(cString: sqlite3_sql(statement)))
            }
            guard !range.isEmpty, let base = texts.baseAddress else { return bindText(statement, index, nil, count: 0) }
            return bindText(
                statement, index, UnsafeRawPointer(base + range.lowerBound).assumingMemoryBound(to: CChar.self), count: range.count)
        }
    }
}

/// A statement stepped one row at a time by its caller, values read exactly: for reading two
/// stores side by side (`StoreComparison`), which a callback per row cannot do.
final class ExactCursor {
    private let statement: Statement
    private let handle: SQLiteStatement

    init(_ db: Database, sql: String) throws {
        statement = try db.makeStatement(sql: sql)
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
    }

    deinit { sqlite3_reset(handle) }

    /// The next row, or nil after the last.
    func next() throws -> [StoredValue]? {
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
                sql: String(cString: sqlite3_sql(handle)))
        }
        return (0..<sqlite3_column_count(handle)).map { StoredValue(handle, column: $0) }
    }
}

/// The current result row of a statement being stepped by `ExactSQL.forEachRow`.
package struct ExactRow {
    fileprivate let handle: SQLiteStatement

    package var count: Int { Int(sqlite3_column_count(handle)) }

    package subscript(column: Int) -> StoredValue { StoredValue(handle, column: Int32(column)) }

    /// An INTEGER column (such as `Z_PK`); other storage classes give nil.
    package func integer(_ column: Int) -> Int64? {
        guard sqlite3_column_type(handle, Int32(column)) == SQLITE_INTEGER else { return nil }
        return sqlite3_column_int64(handle, Int32(column))
    }

    /// A TEXT column's every byte, lent to `body` in SQLite's own buffer (valid until the next
    /// step), for a pass that only looks at them: no `Data` made per row, as `self[column]`
    /// makes. Other storage classes give nil without calling `body`.
    package func withText<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard sqlite3_column_type(handle, Int32(column)) == SQLITE_TEXT else { return nil }
        // Text first, then its length: the order SQLite documents for exact lengths.
        let bytes = sqlite3_column_text(handle, Int32(column))
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return try body(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }

    /// A BLOB column's every byte, lent to `body` in SQLite's own buffer as `withText` lends
    /// text (an empty BLOB, whose pointer SQLite gives as NULL, as no bytes): the bytes
    /// `self[column]` would copy into a `Data`. Other storage classes give nil without calling `body`.
    package func withBlob<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard sqlite3_column_type(handle, Int32(column)) == SQLITE_BLOB else { return nil }
        // The bytes first, then their length: the order SQLite documents for exact lengths.
        let bytes = sqlite3_column_blob(handle, Int32(column))
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return try body(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }
}

/// Binds `count` bytes of UTF-8 text at `text`, which must stay as they are until the statement
/// is reset and its bindings cleared (SQLITE_STATIC: SQLite neither copies nor frees them). Empty
/// text (nil or a count of 0) is bound from "", a pointer that lives forever: a nil pointer would
/// bind NULL.
private func bindText(_ statement: SQLiteStatement, _ index: Int32, _ text: UnsafePointer<CChar>?, count: Int) -> Int32 {
    let unowned = unsafeBitCast(0, to: sqlite3_destructor_type.self)
    guard let text, count > 0 else { return sqlite3_bind_text(statement, index, "", 0, unowned) }
    return sqlite3_bind_text64(statement, index, text, UInt64(count), unowned, UInt8(SQLITE_UTF8))
}
