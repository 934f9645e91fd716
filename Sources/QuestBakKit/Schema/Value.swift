import Foundation

/// One stored property value, independent of where it lives (a SQLite row or an archive line).
public enum Value: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case boolean(Bool)
    case double(Double)
    case string(String)
    /// Seconds since 2001-01-01T00:00:00Z, exactly as Core Data stores a `Date`.
    case date(Double)
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
        case .date(let v): return DateText.iso8601(secondsSinceReferenceDate: v) ?? String(v)
        case .uuid(let v): return v.uuidString
        case .binary(let v): return "<\(v.count) bytes>"
        case .integerArray(let v): return "[" + v.map(String.init).joined(separator: ",") + "]"
        case .stringArray(let v): return "[" + v.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        }
    }
}
