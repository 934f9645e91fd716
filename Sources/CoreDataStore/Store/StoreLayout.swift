import Foundation

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
        if let known = Self.laidOut.layout(of: entity) {
            self = known
            return
        }
        self.init(layingOut: entity)
        Self.laidOut.remember(self, of: entity)
    }

    private init(layingOut entity: Entity) {
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

extension TableLayout {
    /// The entities laid out so far: the repair rules ask for the same entity's view once per
    /// record, and laying one out is planning a whole table.
    private static let laidOut = LaidOut()

    private final class LaidOut: @unchecked Sendable {
        private let lock = NSLock()
        /// By entity name, the last few distinct entities of that name (schema versions differ).
        private var byName: [String: [(entity: Entity, layout: TableLayout)]] = [:]

        func layout(of entity: Entity) -> TableLayout? {
            lock.lock()
            defer { lock.unlock() }
            return byName[entity.name]?.first { $0.entity == entity }?.layout
        }

        func remember(_ layout: TableLayout, of entity: Entity) {
            lock.lock()
            defer { lock.unlock() }
            var known = byName[entity.name, default: []]
            known.append((entity, layout))
            byName[entity.name] = Array(known.suffix(8))
        }
    }
}
