/// Deprecated: a view of one entity's table in `ModelTables`, the one layout, kept only while
/// code outside CoreDataStore still names it (the repair rules in `Rules/`, the TimeQuest
/// `Migrator`); new code asks `ModelTables(schema:)`. It holds no naming rule of its own.
package struct TableLayout: Sendable, Equatable {
    public struct Column: Sendable, Equatable {
        /// The schema property (attribute or to-one relationship) the column stores.
        public var property: String
        public var name: String
        public var declaredType: String
    }

    public var tableName: String
    /// Columns after `Z_PK, Z_ENT, Z_OPT`, in Core Data's creation order (`ModelTables`).
    public var columns: [Column]
    public var createTableSQL: String
    /// The foreign-key indexes of the entity's to-ones.
    private var indexStatements: [String]

    public init(entity: Entity) {
        tableName = entity.tableName
        guard let tables = try? ModelTables(entity: entity) else {
            // Not reached: a lone entity's attributes and to-ones always lay out.
            columns = []
            createTableSQL =
                ModelTables.Table(name: tableName, rootEntity: entity.name, entities: [], columns: [], indexStatements: [])
                .createStatement
            indexStatements = []
            return
        }
        columns = tables.propertyColumns(of: entity.name).map {
            Column(property: $0.property, name: $0.column.name, declaredType: $0.column.declaredType)
        }
        let table = tables.table(for: entity.name)
        createTableSQL = table?.createStatement ?? ""
        indexStatements = table?.indexStatements ?? []
    }

    public func column(for property: String) -> Column? {
        columns.first { $0.property == property }
    }

    /// One index per to-one foreign key, as Core Data creates them.
    public func createIndexSQL(for entity: Entity) -> [String] { indexStatements }
}
