import Foundation

/// One stored property value, independent of where it lives (a SQLite row or an archive line).
package enum Value: Sendable, Equatable, Hashable {
    /// No value (SQL NULL).
    case null
    /// An integer of any width, or a to-one key.
    case integer(Int64)
    /// A Boolean, stored as 0 or 1.
    case boolean(Bool)
    /// A floating-point number.
    case double(Double)
    /// Text that is valid UTF-8 (NUL characters included).
    case string(String)
    /// A TEXT column whose bytes are not valid UTF-8: kept as the bytes, never repaired with
    /// U+FFFD, so a backup gives back what the store held.
    case textBytes(Data)
    /// Seconds since 2001-01-01T00:00:00Z, exactly as Core Data stores a `Date`.
    case date(Double)
    /// A date stored as an INTEGER of at least 2^51 seconds in magnitude. SQLite keeps such an
    /// integer as INTEGER, and beyond 2^53 no Double holds it exactly, so it is kept as the integer.
    case integerDate(Int64)
    /// A UUID, stored as its 16 bytes.
    case uuid(UUID)
    /// Bytes: binary data, or a transformable's encoded value.
    case binary(Data)
    /// An array of integers, stored as a transformable.
    case integerArray([Int64])
    /// An array of strings, stored as a transformable.
    case stringArray([String])
    /// A `Decimal` exactly as the store holds it, as canonical decimal text: the INTEGER's digits
    /// (`"100"`), or the REAL's shortest round-trip form (`"12.5"`, `"1e-07"`), or `"Infinity"` /
    /// `"-Infinity"`. `ValueCoding` stores it back as the same INTEGER or REAL.
    case decimal(String)

    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }
}

extension Value: CustomStringConvertible {
    /// A short human-readable rendering for reports and error messages.
    public var description: String {
        switch self {
        case .null: return "null"
        case .integer(let v): return String(v)
        case .boolean(let v): return v ? "true" : "false"
        case .double(let v): return String(v)
        case .string(let v): return "\"\(v)\""
        case .textBytes(let v): return "<TEXT of \(v.count) bytes, not UTF-8>"
        case .integerDate(let v): return String(v)
        case .date(let v): return DateText.iso8601(secondsSinceReferenceDate: v) ?? String(v)
        case .uuid(let v): return v.uuidString
        case .binary(let v): return "<\(v.count) bytes>"
        case .integerArray(let v): return "[" + v.map(String.init).joined(separator: ",") + "]"
        case .stringArray(let v): return "[" + v.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        case .decimal(let v): return v
        }
    }
}

extension Value {
    /// Integers of at least this magnitude in a TIMESTAMP column stay integers (`integerDate`).
    /// Below it, every SQLite version turns an integral REAL bound into a NUMERIC column back into
    /// the same INTEGER, so a `Double` restores the identical storage; at or above it, versions differ
    /// and from 2^53 on a Double cannot even hold the value.
    static let exactIntegerDateMagnitude: Int64 = 1 << 51

    /// A date given as a whole number of seconds, from a store or an archive.
    static func date(integer seconds: Int64) -> Value {
        seconds.magnitude < exactIntegerDateMagnitude.magnitude ? .date(Double(seconds)) : .integerDate(seconds)
    }

    /// Text as `.string` when it is valid UTF-8, else as its bytes.
    package static func text(_ bytes: Data) -> Value {
        String(validUTF8: bytes).map { .string($0) } ?? .textBytes(bytes)
    }

    /// The number canonical decimal text stands for, or nil when the text is not canonical (the
    /// form `ValueCoding` writes when reading a DECIMAL column): only canonical text is certain to
    /// be stored back as what was read.
    enum DecimalNumber: Equatable {
        case integer(Int64)
        case real(Double)
    }

    static func decimalNumber(_ text: String) -> DecimalNumber? {
        if let number = Int64(text), String(number) == text { return .integer(number) }
        if text == "Infinity" { return .real(.infinity) }
        if text == "-Infinity" { return .real(-.infinity) }
        // A whole REAL within Int64's range is stored by NUMERIC affinity as an INTEGER, so its
        // text is the INTEGER's; SQLite keeps no −0.0. Either spelled as a REAL is not canonical.
        guard let number = Double(text), number.isFinite, "\(number)" == text, Int64(exactly: number) == nil else { return nil }
        return .real(number)
    }

    /// Whether a Float holds the number exactly (the infinities included), as a Float attribute's
    /// value always is.
    static func isExactFloat(_ number: Double) -> Bool { number.isNaN || Double(Float(number)) == number }

    /// Whether a Double holds the integer exactly (up to 2^53 in magnitude).
    static func isExactDouble(_ number: Int64) -> Bool { number.magnitude <= 1 << 53 }
}

extension String {
    /// `String(validating: bytes, as: UTF8.self)`: the text when the bytes are valid UTF-8 (NUL
    /// allowed), else nil. Bytes that are all ASCII are valid UTF-8 as they are, and are decoded
    /// without the standard library's generic validation, which looks up type metadata at each
    /// call: a merge into a second device made a cloudID's text, and two report values, for
    /// each of half a million entries, and that lookup was half their cost.
    package init?(validUTF8 bytes: Data) {
        guard let text = bytes.withUnsafeBytes({ String(validUTF8: $0.assumingMemoryBound(to: UInt8.self)) }) else { return nil }
        self = text
    }

    /// The same of bytes lent in place (a JSON line's string between its quotes).
    package init?(validUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            self = String(decoding: bytes, as: UTF8.self)
            return
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}
