import CoreDataStore
import Foundation
import QuestBakArchive

/// What a redaction did, table by table and property by property. Says nothing that would undo
/// it: not the key, not the date offset.
package struct RedactionReport: Codable, Sendable, Equatable {
    public struct Column: Codable, Sendable, Equatable {
        public var column: String
        /// The model's property (`Entity.property`); nil for a store described by its tables.
        public var property: String?
        /// The model's attribute kind, or the column's declared type.
        public var kind: String
        public var action: String
    }

    public struct Table: Codable, Sendable, Equatable {
        public var name: String
        public var rows: Int
        public var action: String
        public var columns: [Column]
    }

    /// How the store was read: by its own model, or by its tables and why.
    public var describedBy: String
    public var key: String
    public var numbersScrambled: Bool
    public var tables: [Table]
    /// External-storage files written, each with a new name and new bytes.
    public var externalFiles: Int
    /// Candidate replacements refused because another value had them (each then got another).
    public var collisionsAvoided: Int

    public func table(named name: String) -> Table? { tables.first { $0.name == name } }
}
