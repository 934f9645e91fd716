import Foundation
import GRDB

/// The mapping between schema values and SQLite storage, as Core Data does it (spec: "Entity
/// tables"): dates as seconds since 2001, booleans as 0/1, UUIDs as 16 raw bytes, top-level
/// arrays as keyed-archive BLOBs.
enum ValueCoding {
    struct Failure: Error {
        var reason: String
    }

    static func decode(_ stored: DatabaseValue, as kind: AttributeKind) throws -> Value {
        switch (kind, stored.storage) {
        case (_, .null):
            return .null
        case (.integer, .int64(let number)):
            return .integer(number)
        case (.boolean, .int64(let number)):
            guard number == 0 || number == 1 else { throw Failure(reason: "boolean stored as \(number), expected 0 or 1") }
            return .boolean(number == 1)
        case (.double, .double(let number)):
            return .double(number)
        case (.double, .int64(let number)):
            return .double(Double(number))
        case (.date, .double(let seconds)):
            return .date(seconds)
        case (.date, .int64(let seconds)):
            return .date(Double(seconds))
        case (.string, .string(let text)):
            return .string(text)
        case (.uuid, .blob(let bytes)):
            guard bytes.count == 16 else { throw Failure(reason: "UUID BLOB of \(bytes.count) bytes, expected 16") }
            return .uuid(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.binary, .blob(let bytes)):
            return .binary(bytes)
        case (.integerArray, .blob(let bytes)), (.stringArray, .blob(let bytes)):
            let elements: [PropertyListValue]
            do {
                elements = try TransformableArray.unarchive(bytes)
            } catch {
                throw Failure(reason: error.localizedDescription)
            }
            return try arrayValue(elements, as: kind)
        default:
            throw Failure(reason: "\(describe(stored.storage)) where \(kind.columnType) (\(kind.rawValue)) is expected")
        }
    }

    static func encode(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let number): return number.databaseValue
        case .boolean(let flag): return (flag ? 1 : 0).databaseValue
        case .double(let number), .date(let number): return number.databaseValue
        case .string(let text): return text.databaseValue
        case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .binary(let bytes): return bytes.databaseValue
        case .integerArray(let numbers): return TransformableArray.archive(numbers.map { .integer($0) }).databaseValue
        case .stringArray(let texts): return TransformableArray.archive(texts.map { .string($0) }).databaseValue
        }
    }

    private static func arrayValue(_ elements: [PropertyListValue], as kind: AttributeKind) throws -> Value {
        if kind == .integerArray {
            return .integerArray(try elements.map {
                if case .integer(let number) = $0 { return number }
                throw Failure(reason: "array element \($0) is not an integer")
            })
        }
        return .stringArray(try elements.map {
            if case .string(let text) = $0 { return text }
            throw Failure(reason: "array element \($0) is not a string")
        })
    }

    private static func describe(_ storage: DatabaseValue.Storage) -> String {
        switch storage {
        case .null: return "NULL"
        case .int64(let number): return "INTEGER \(number)"
        case .double(let number): return "REAL \(number)"
        case .string: return "TEXT"
        case .blob(let bytes): return "BLOB of \(bytes.count) bytes"
        }
    }
}
