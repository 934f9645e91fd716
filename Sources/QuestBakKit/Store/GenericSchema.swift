import GRDB

/// A schema read off any Core Data store's tables, for stores of apps questbak has no schema
/// for. Properties are named after their columns (`ZNAME`), typed from the declared column
/// types, and all optional; `Z_ENT` is kept as a property so sub-entity rows sharing a table stay
/// distinguishable (`Z_OPT` travels as every record's `_opt`).
enum GenericSchema {
    static func derive(_ db: Database, metadata: StoreMetadata, path: String) throws -> Schema {
        var entities: [Entity] = []
        for (key, table) in try StoreReader.modelTables(db) {
            let attributes = try db.columns(in: table).filter { !["Z_PK", "Z_OPT"].contains($0.name.uppercased()) }.map { column in
                Attribute(column.name, kind(ofDeclaredType: column.type), optional: true, column: column.name)
            }
            entities.append(Entity(name: key.name, attributes: attributes))
        }
        // No identifier in the store means none in the archive: "" claims no version, where a
        // made-up label would be a value the store does not hold.
        let schema = Schema(versionIdentifier: metadata.versionIdentifiers.first ?? "", entities: entities)
        // Names from another app's store become file names and SQL: only plain identifiers pass.
        let problems = schema.nameProblems
        if !problems.isEmpty { throw StoreError.schemaMismatch(path: path, versionIdentifier: nil, differences: problems) }
        return schema
    }

    static func kind(ofDeclaredType declared: String) -> AttributeKind {
        let type = declared.uppercased()
        if type.hasPrefix("INTEGER") { return .integer }
        if type.hasPrefix("FLOAT") || type.hasPrefix("REAL") || type.hasPrefix("DOUBLE") || type.hasPrefix("DECIMAL") { return .double }
        if type.hasPrefix("TIMESTAMP") { return .date }
        if type.hasPrefix("BLOB") { return .binary }
        return .string
    }
}
