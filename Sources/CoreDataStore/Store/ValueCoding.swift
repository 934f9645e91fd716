import Foundation

/// The mapping between schema values and SQLite storage, as Core Data does it (spec: "Entity
/// tables"): dates as seconds since 2001, booleans as 0/1, UUIDs as 16 raw bytes, top-level
/// arrays as keyed-archive BLOBs. Every value is kept exactly or refused with the reason.
package enum ValueCoding {
    package struct Failure: Error {
        package var reason: String
    }

    package static func decode(_ stored: StoredValue, as kind: AttributeKind) throws -> Value {
        switch (kind, stored) {
        case (_, .null):
            return .null
        case (.integer, .integer(let number)):
            return .integer(number)
        // A value its attribute's type cannot hold is no value of that type: a backup by the
        // model would carry what the app can never read back, and a restore refuses it.
        case (.integer16, .integer(let number)):
            guard Int16(exactly: number) != nil else { throw Failure(reason: "INTEGER \(number) is outside Int16's range") }
            return .integer(number)
        case (.integer32, .integer(let number)):
            guard Int32(exactly: number) != nil else { throw Failure(reason: "INTEGER \(number) is outside Int32's range") }
            return .integer(number)
        case (.float, .real(let number)):
            guard Value.isExactFloat(number) else { throw Failure(reason: "REAL \(number) is not a number a Float holds") }
            return .double(number)
        case (.float, .integer(let number)):
            guard Value.isExactDouble(number), Value.isExactFloat(Double(number)) else {
                throw Failure(reason: "INTEGER \(number) in a Float column: a Float cannot hold it exactly")
            }
            return .double(Double(number))
        case (.decimal, .integer), (.decimal, .real):
            guard let text = decimalText(stored) else { throw Failure(reason: "\(stored.summary) is not a decimal") }
            return .decimal(text)
        case (.boolean, .integer(let number)):
            guard number == 0 || number == 1 else { throw Failure(reason: "boolean stored as \(number), expected 0 or 1") }
            return .boolean(number == 1)
        case (.double, .real(let number)):
            return .double(number)
        case (.double, .integer(let number)):
            guard Value.isExactDouble(number) else {
                throw Failure(reason: "INTEGER \(number) in a FLOAT column: a Double cannot hold it exactly")
            }
            return .double(Double(number))
        case (.date, .real(let seconds)):
            return .date(seconds)
        case (.date, .integer(let seconds)):
            return Value.date(integer: seconds)
        case (.string, .text(let bytes)), (.uri, .text(let bytes)):
            return Value.text(bytes)
        case (.uuid, .blob(let bytes)):
            guard bytes.count == 16 else { throw Failure(reason: "UUID BLOB of \(bytes.count) bytes, expected 16") }
            return .uuid(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.binary, .blob(let bytes)), (.transformable, .blob(let bytes)):
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
            throw Failure(reason: "\(stored.summary) where \(kind.columnType) (\(kind.rawValue)) is expected")
        }
    }

    package static func encode(_ value: Value) -> StoredValue {
        switch value {
        case .null: return .null
        case .integer(let number), .integerDate(let number): return .integer(number)
        case .boolean(let flag): return .integer(flag ? 1 : 0)
        case .double(let number), .date(let number): return .real(number)
        case .string(var text): return text.withUTF8(storedText)
        case .textBytes(let bytes): return .text(bytes)
        case .uuid(let uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .binary(let bytes): return .blob(bytes)
        // Only canonical text is made (decoding writes it; archive readers refuse any other).
        case .decimal(let text): return storedDecimal(text) ?? .text(Data(text.utf8))
        case .integerArray(let numbers): return .blob(TransformableArray.archive(numbers.map { .integer($0) }))
        case .stringArray(let texts): return .blob(TransformableArray.archive(texts.map { .string($0) }))
        }
    }

    /// A string's UTF-8 bytes as stored TEXT: what `encode` stores of `.string`, and a line reader
    /// of the bytes it has, without a `String` made of them. The same bytes as `Data(text.utf8)`,
    /// copied from the storage: the generic `Data(_: Sequence)` first tries dynamic casts of its
    /// argument, a tenth of an import's reading thread.
    package static func storedText(_ bytes: UnsafeBufferPointer<UInt8>) -> StoredValue { .text(Data(buffer: bytes)) }

    /// The canonical text of a stored decimal: an INTEGER's digits, a REAL's shortest round-trip
    /// form, the infinities by name; nil for NaN (SQLite stores NaN as NULL, so none is stored).
    static func decimalText(_ stored: StoredValue) -> String? {
        switch stored {
        case .integer(let number): return String(number)
        case .real(let number) where number.isFinite: return "\(number)"
        case .real(let number) where number.isInfinite: return number > 0 ? "Infinity" : "-Infinity"
        default: return nil
        }
    }

    /// The stored form of canonical decimal text (`Value.decimalNumber`).
    static func storedDecimal(_ text: String) -> StoredValue? {
        switch Value.decimalNumber(text) {
        case .integer(let number)?: return .integer(number)
        case .real(let number)?: return .real(number)
        case nil: return nil
        }
    }

    private static func arrayValue(_ elements: [PropertyListValue], as kind: AttributeKind) throws -> Value {
        if kind == .integerArray {
            return .integerArray(
                try elements.map {
                    if case .integer(let number) = $0 { return number }
                    throw Failure(reason: "array element \($0) is not an integer")
                })
        }
        return .stringArray(
            try elements.map {
                if case .string(let text) = $0 { return text }
                throw Failure(reason: "array element \($0) is not a string")
            })
    }
}
