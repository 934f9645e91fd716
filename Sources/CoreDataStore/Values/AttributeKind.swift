import Foundation

/// The shape of a stored value, which fixes both its SQLite column type and its model hash code.
package enum AttributeKind: String, Sendable, Equatable, CaseIterable {
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
    // The kinds below come from stores described by their own model cache (model-cache.md).
    /// Int16 and Int32: integers, hashed with their own type codes.
    case integer16
    case integer32
    /// `Decimal`: declared DECIMAL, stored as SQLite's NUMERIC affinity makes it (an INTEGER or a
    /// REAL); carried as exact decimal text (`Value.decimal`).
    case decimal
    case float
    /// `URL`: text.
    case uri
    /// Any transformable (`NSValueTransformerName`): the BLOB its transformer produced, carried as
    /// the bytes, never decoded and re-encoded (an encoder would not give back Apple's bytes).
    case transformable
    /// A Codable struct stored inline (`NSCompositeAttributeDescription`): no column of its own,
    /// its elements (`Attribute.elements`) each have one.
    case composite
    /// `NSObjectIDAttributeType`: not seen in a store; kept as its bytes.
    case objectID

    /// The `NSAttributeType` raw value that enters the model version hash.
    public var hashTypeCode: Int32 {
        switch self {
        case .integer16: return 100
        case .integer32: return 200
        case .integer: return 300
        case .decimal: return 400
        case .float: return 600
        case .uri: return 1200
        case .transformable: return 1800
        case .composite: return 2100
        case .objectID: return 2000
        case .double: return 500
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .integerArray, .stringArray: return 1800
        }
    }

    /// The same code as a model cache's `NSAttributeType` holds it.
    public var typeCode: Int { Int(hashTypeCode) }

    /// The kind of a known `NSAttributeType` code; nil for a code no kind has (kept as the code by
    /// whoever holds it, never guessed). TimeQuest's typed arrays are transformables to a model:
    /// it names their transformer, not their element type (an app profile says that).
    package init?(typeCode code: Int) {
        guard let kind = AttributeKind.allCases.first(where: { $0.typeCode == code && ![.integerArray, .stringArray].contains($0) })
        else { return nil }
        self = kind
    }

    /// The declared column type Core Data uses in `CREATE TABLE`.
    public var columnType: String {
        switch self {
        case .integer, .integer16, .integer32, .boolean: return "INTEGER"
        case .double, .float: return "FLOAT"
        case .decimal: return "DECIMAL"
        case .date: return "TIMESTAMP"
        case .string, .uri: return "VARCHAR"
        case .uuid, .binary, .integerArray, .stringArray, .transformable, .objectID: return "BLOB"
        // Never a column: its elements are.
        case .composite: return "BLOB"
        }
    }
}
