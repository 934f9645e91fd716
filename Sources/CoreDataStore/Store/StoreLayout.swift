/// How an entity maps onto its SQLite table in the Core Data layout.
package struct TableLayout: Sendable, Equatable {
    public struct Column: Sendable, Equatable {
        /// The schema property (attribute or to-one relationship) the column stores.
        public var property: String
        public var name: String
        public var declaredType: String
    }

    public var tableName: String
    /// Columns after `Z_PK, Z_ENT, Z_OPT`, in Core Data's creation order: integer attributes by
    /// name, then to-one foreign keys; FLOAT and TIMESTAMP by name; VARCHAR; then BLOB.
    public var columns: [Column]

    public init(entity: Entity) {
        tableName = entity.tableName
        func group(_ types: Set<String>) -> [Attribute] {
            entity.attributes.filter { types.contains($0.kind.columnType) }.sorted { $0.name < $1.name }
        }
        typealias Planned = (property: String, type: String, column: String?)
        var ordered: [Planned] = group(["INTEGER"]).map { ($0.name, "INTEGER", $0.storedColumnName) }
        ordered += entity.toOneRelationships.sorted { $0.name < $1.name }.map { ($0.name, "INTEGER", nil) }
        ordered += group(["FLOAT", "TIMESTAMP"]).map { ($0.name, $0.kind.columnType, $0.storedColumnName) }
        ordered += group(["VARCHAR"]).map { ($0.name, "VARCHAR", $0.storedColumnName) }
        ordered += group(["BLOB"]).map { ($0.name, "BLOB", $0.storedColumnName) }
        // On a name clash (`id` and `ID`) the later column gets a numeric suffix, as Core Data does.
        var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        columns = ordered.map { property, type, storedColumn in
            if let storedColumn { return Column(property: property, name: storedColumn, declaredType: type) }
            let base = "Z" + property.uppercased()
            var name = base
            var suffix = 1
            while taken.contains(name) {
                name = base + String(suffix)
                suffix += 1
            }
            taken.insert(name)
            return Column(property: property, name: name, declaredType: type)
        }
    }

    public func column(for property: String) -> Column? {
        columns.first { $0.property == property }
    }

    public var createTableSQL: String {
        let definitions = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + columns.map { "\($0.name) \($0.declaredType)" }
        return "CREATE TABLE \(tableName) ( \(definitions.joined(separator: ", ")) )"
    }

    /// One index per to-one foreign key, as Core Data creates them.
    public func createIndexSQL(for entity: Entity) -> [String] {
        entity.toOneRelationships.sorted { $0.name < $1.name }.compactMap { relationship in
            guard let column = column(for: relationship.name)?.name else { return nil }
            return "CREATE INDEX \(tableName)_\(column)_INDEX ON \(tableName) (\(column))"
        }
    }
}
