import CoreDataStore
import Crypto
import Foundation
import GRDB

/// Tables that belong to no entity, as archive members (`tables/<Table>.jsonl`): a header line
/// `{"table":…,"count":…}`, then one JSON object a row, columns in the table's order, rows in the
/// order of their columns. Values keep their SQLite storage class exactly: an integer, a number
/// (REAL; `{"real":"Infinity"}` for the infinities), a string (TEXT; `{"textBytes":…}` when not
/// UTF-8), `{"blob":…}` (base64) or null. docs/archive-format.md, "Other tables".
package enum TableMemberEncoding {
    static let blobKey = "blob"
    static let realKey = "real"

    /// Streams one table's member through `write`; returns the number of rows.
    package static func encode(_ db: Database, table: String, path: String, write: ([UInt8]) throws -> Void) throws -> Int {
        let quoted = table.quotedSQLIdentifier
        let columns = try db.columns(in: table).map(\.name)
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted)") ?? 0
        var header = JSONObjectWriter()
        header.add("table", .string(table))
        header.add("count", .integer(Int64(total)))
        try write(header.finished + [0x0A])
        let keys: [[UInt8]] = columns.enumerated().map { index, column in
            var key: [UInt8] = index == 0 ? [UInt8(ascii: "{")] : [UInt8(ascii: ",")]
            ValueJSON.appendString(column, to: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
        let order = columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
        var line: [UInt8] = []
        var done = 0
        try ExactSQL.forEachRow(db, sql: "SELECT \(order) FROM \(quoted) ORDER BY \(order)") { row in
            line.removeAll(keepingCapacity: true)
            for (index, key) in keys.enumerated() {
                line.append(contentsOf: key)
                append(row[index], to: &line)
            }
            line.append(contentsOf: columns.isEmpty ? "{}\n".utf8 : "}\n".utf8)
            guard line.count <= ArchiveManifest.maximumLineBytes else {
                throw StoreError.recordTooLarge(
                    path: path, entity: table, primaryKey: Int64(done + 1), lineBytes: line.count, limit: ArchiveManifest.maximumLineBytes)
            }
            try write(line)
            done += 1
        }
        return done
    }

    static func append(_ value: StoredValue, to output: inout [UInt8]) {
        func object(_ key: String, _ text: String) {
            var writer = JSONObjectWriter()
            writer.add(key, .string(text))
            output.append(contentsOf: writer.finished)
        }
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .integer(let number): output.append(contentsOf: String(number).utf8)
        case .real(let number) where number.isFinite: ValueJSON.appendDouble(number, to: &output)
        case .real(let number): object(realKey, number > 0 ? "Infinity" : "-Infinity")
        case .text(let bytes): ValueJSON.append(Value.text(bytes), to: &output)
        case .blob(let bytes): object(blobKey, bytes.base64EncodedString())
        }
    }

    package struct Mismatch: Error {
        package var found: String
    }

    /// The stored value a JSON value of a table row stands for, refused when a column of
    /// `affinity` would store another (`ColumnAffinity`).
    package static func value(_ json: JSONValue, affinity: ColumnAffinity, in db: Database) throws -> StoredValue {
        let value = try value(json)
        if let stored = try affinity.storedForm(of: value, in: db) {
            throw Mismatch(
                found: "\(value.summary), which its column (\(affinity.rawValue) affinity) would store as \(stored.summary)")
        }
        return value
    }

    /// The stored value a JSON value of a table row stands for.
    static func value(_ json: JSONValue) throws -> StoredValue {
        switch json {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .number(let number): return .real(number)
        case .string(let text): return .text(Data(text.utf8))
        case .object(let members) where members.count == 1:
            guard let (key, inner) = members.first.map({ ($0.key, $0.value) }) else { throw Mismatch(found: "an empty object") }
            switch (key, inner) {
            // Spelled as export writes them, since the restore proves itself against the member's
            // checksum: base64 as questbak writes it, textBytes only for text that is not UTF-8.
            case (blobKey, .string(let text)):
                guard let bytes = ValueJSON.base64(text, exactSpelling: true) else {
                    throw Mismatch(found: "a blob that is not base64 as questbak writes it")
                }
                return .blob(bytes)
            case (ValueJSON.textBytesKey, .string(let text)):
                guard let bytes = ValueJSON.base64(text, exactSpelling: true) else {
                    throw Mismatch(found: "textBytes that are not base64 as questbak writes it")
                }
                guard String(validating: bytes, as: UTF8.self) == nil else {
                    throw Mismatch(found: "textBytes of valid UTF-8 (written as a string)")
                }
                return .text(bytes)
            case (realKey, .string("Infinity")): return .real(.infinity)
            case (realKey, .string("-Infinity")): return .real(-.infinity)
            default: throw Mismatch(found: "an object other than {\"blob\"}, {\"textBytes\"} or {\"real\"}")
            }
        default: throw Mismatch(found: json.typeName)
        }
    }
}
