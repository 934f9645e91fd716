import Foundation

/// The shape of a stored value, which fixes both its SQLite column type and its model hash code.
public enum AttributeKind: String, Sendable, Equatable, CaseIterable {
    case integer
    case boolean
    case double
    case string
    case date
    case uuid
    case binary
    /// `[Int]` stored as a transformable (`NSSecureUnarchiveFromData`) keyed-archive plist.
    case integerArray
    /// `[String]` stored the same way.
    case stringArray

    /// The `NSAttributeType` raw value that enters the model version hash.
    public var hashTypeCode: Int32 {
        switch self {
        case .integer: return 300
        case .double: return 500
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .integerArray, .stringArray: return 1800
        }
    }

    /// The declared column type Core Data uses in `CREATE TABLE`.
    public var columnType: String {
        switch self {
        case .integer, .boolean: return "INTEGER"
        case .double: return "FLOAT"
        case .date: return "TIMESTAMP"
        case .string: return "VARCHAR"
        case .uuid, .binary, .integerArray, .stringArray: return "BLOB"
        }
    }
}
