import Foundation

/// One stored property value, independent of where it lives (a SQLite row or an archive line).
public enum Value: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case boolean(Bool)
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
    case uuid(UUID)
    case binary(Data)
    case integerArray([Int64])
    case stringArray([String])

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
        }
    }
}
