import Foundation

/// The tables Core Data makes for a compiled model, derived from the model alone (spec:
/// model-cache.md "From model to tables", store-format.md "Entity tables"): the one home of those
/// rules. Fixtures and restored stores are written from it, and `ModelLayout` checks every store
/// against it, by the store's own model or by an app profile's version of it.
///
/// Where the spec says nothing, the choice made here is marked "inferred" and listed in
/// `Fixtures/AnyApp/README.md`.
package struct ModelTables: Sendable, Equatable {
    package struct LayoutError: Error, LocalizedError, Equatable {
        package var reason: String
        package var errorDescription: String? { "cannot lay out the model: \(reason)" }
    }

    /// What a column stores.
    package enum ColumnSource: Sendable, Hashable {
        /// An attribute, or a composite's leaf element: the path from the attribute down
        /// (`["profile", "origin", "name"]`).
        case attribute(entity: String, path: [String])
        /// A to-one relationship's foreign key: the destination's `Z_PK`.
        case toOne(entity: String, relationship: String)
        /// The column a to-many without an inverse adds to its destination's table: the source's `Z_PK`.
        case hiddenInverse(source: String, relationship: String)

        /// What the column holds, for a message: `Entity.property` (`Entity.composite.element`).
        package var holds: String {
            switch self {
            case .attribute(let entity, let path): return "\(entity).\(path.joined(separator: "."))"
            case .toOne(let entity, let relationship): return "\(entity).\(relationship)"
            case .hiddenInverse(let source, let relationship): return "the links of \(source).\(relationship)"
            }
        }
    }

    package struct Column: Sendable, Equatable {
        package var name: String
        package var declaredType: String
        package var source: ColumnSource
    }

    /// One entity table: a root entity and its sub-entities, told apart by `Z_ENT`.
    package struct Table: Sendable, Equatable {
        package var name: String
        package var rootEntity: String
        /// The root and its sub-entities, in entity-number order.
        package var entities: [String]
        /// After `Z_PK, Z_ENT, Z_OPT`, in creation order.
        package var columns: [Column]
        package var indexStatements: [String]

        package var createStatement: String {
            let definitions = [CoreDataSQL.rowColumnDefinitions] + columns.map { "\($0.name) \($0.declaredType)" }
            return "CREATE TABLE \(name) ( \(definitions.joined(separator: ", ")) )"
        }

        package func column(_ source: ColumnSource) -> Column? { columns.first { $0.source == source } }
    }

    /// One side of a many-to-many join table.
    package struct JoinSide: Sendable, Equatable {
        package var entity: String
        /// This side's relationship (the one pointing at the other side).
        package var relationship: String
        /// The column holding this side's `Z_PK`: named after the relationship pointing at this side.
        package var column: String
    }

    /// A many-to-many join table; `lower` is the side with the lower entity number.
    package struct JoinTable: Sendable, Equatable {
        package var name: String
        package var lower: JoinSide
        package var higher: JoinSide

        package var createStatement: String {
            "CREATE TABLE \(name) ( \(lower.column) INTEGER, \(higher.column) INTEGER, PRIMARY KEY (\(lower.column), \(higher.column)) )"
        }

        package var indexStatement: String {
            "CREATE INDEX \(name)_\(higher.column)_INDEX ON \(name) (\(higher.column), \(lower.column))"
        }
    }

    /// Where a relationship's links are kept.
    package enum RelationshipStorage: Sendable, Equatable {
        /// A to-one: a column of the source's table.
        case foreignKey(table: String, column: String)
        /// A to-many whose inverse is a to-one: the inverse's column on the destination's table.
        case inverseForeignKey(table: String, column: String)
        /// A to-many without an inverse: the hidden column on the destination's table.
        case hiddenColumn(table: String, column: String)
        /// A many-to-many: a join table; `sourceIsLower` says which of its columns holds the source.
        case joinTable(JoinTable, sourceIsLower: Bool)
    }

    package var model: CompiledModel
    /// Entities in `Z_ENT` order: alphabetical, sub-entities following their parent depth first.
    package var numberedEntities: [CompiledEntity]
    /// `Z_ENT` numbers a store already gave the entities (its `Z_PRIMARYKEY`), which name hidden
    /// columns and join tables; nil: numbered by the rule, as for a new store.
    package var storedNumbers: [String: Int64]?
    package var tables: [Table]
    package var joinTables: [JoinTable]

    package init(model: CompiledModel, numbers storedNumbers: [String: Int64]? = nil) throws {
        self.model = model
        self.storedNumbers = storedNumbers
        numberedEntities = try Self.number(model)
        tables = []
        joinTables = []
        for root in numberedEntities where root.superentity == nil {
            tables.append(try table(root: root))
        }
        joinTables = try planJoinTables()
    }

    // MARK: Lookups

    package func entity(named name: String) -> CompiledEntity? { numberedEntities.first { $0.name == name } }

    package func number(of entity: String) -> Int? {
        if let storedNumbers { return storedNumbers[entity].flatMap { Int(exactly: $0) } }
        return numberedEntities.firstIndex { $0.name == entity }.map { $0 + 1 }
    }

    /// The entity and its ancestors, nearest first.
    package func lineage(of name: String) -> [CompiledEntity] { model.lineage(of: name) }

    /// The entity and every sub-entity below it.
    package func descendants(of name: String) -> [String] {
        var result = [name]
        for child in numberedEntities where child.superentity == name { result += descendants(of: child.name) }
        return result
    }

    package func table(for entity: String) -> Table? { tables.first { $0.entities.contains(entity) } }

    /// The relationship `name` of `entity` or of an ancestor, with the entity that declares it.
    package func relationship(_ name: String, of entity: String) -> (owner: String, relationship: CompiledRelationship)? {
        for candidate in lineage(of: entity) {
            if let found = candidate.relationships.first(where: { $0.name == name }) { return (candidate.name, found) }
        }
        return nil
    }

    /// The column for a row value of `entity`: an attribute path (a composite's leaf given as
    /// `attribute.element…`) or a to-one relationship, declared by the entity or an ancestor.
    package func column(for path: [String], of entity: String) -> Column? {
        guard let table = table(for: entity) else { return nil }
        return column(for: path, of: entity, in: table)
    }

    private func column(for path: [String], of entity: String, in table: Table) -> Column? {
        guard let first = path.first else { return nil }
        for candidate in lineage(of: entity) {
            if path.count == 1, candidate.relationships.contains(where: { $0.name == first && !$0.isToMany }) {
                return table.column(.toOne(entity: candidate.name, relationship: first))
            }
            if candidate.attributes.contains(where: { $0.name == first }) {
                return table.column(.attribute(entity: candidate.name, path: path))
            }
        }
        return nil
    }

    package func storage(of relationshipName: String, from entity: String) throws -> RelationshipStorage {
        guard let (owner, relationship) = relationship(relationshipName, of: entity) else {
            throw LayoutError(reason: "\(entity) has no relationship \(relationshipName)")
        }
        guard let destinationTable = table(for: relationship.destination) else {
            throw LayoutError(reason: "\(owner).\(relationshipName) points at no entity \(relationship.destination)")
        }
        if !relationship.isToMany {
            guard let table = table(for: owner), let column = table.column(.toOne(entity: owner, relationship: relationshipName)) else {
                throw LayoutError(reason: "\(owner).\(relationshipName) has no column")
            }
            return .foreignKey(table: table.name, column: column.name)
        }
        guard let inverseName = relationship.inverse else {
            guard let column = destinationTable.column(.hiddenInverse(source: owner, relationship: relationshipName)) else {
                throw LayoutError(reason: "\(owner).\(relationshipName) has no hidden column")
            }
            return .hiddenColumn(table: destinationTable.name, column: column.name)
        }
        guard let (inverseOwner, inverse) = self.relationship(inverseName, of: relationship.destination) else {
            throw LayoutError(reason: "\(owner).\(relationshipName) has no inverse \(relationship.destination).\(inverseName)")
        }
        if !inverse.isToMany {
            guard let column = destinationTable.column(.toOne(entity: inverseOwner, relationship: inverseName)) else {
                throw LayoutError(reason: "\(inverseOwner).\(inverseName) has no column")
            }
            return .inverseForeignKey(table: destinationTable.name, column: column.name)
        }
        for join in joinTables {
            if join.lower.entity == owner, join.lower.relationship == relationshipName { return .joinTable(join, sourceIsLower: true) }
            if join.higher.entity == owner, join.higher.relationship == relationshipName { return .joinTable(join, sourceIsLower: false) }
        }
        throw LayoutError(reason: "\(owner).\(relationshipName) has no join table")
    }

    /// The columns of what a record of `entity` carries by property name, in creation order: its
    /// top-level attributes and its to-ones, declared by it or an ancestor. A composite's elements,
    /// hidden inverse columns and join tables are not properties of one record: they are left out.
    package func propertyColumns(of entity: String) -> [(property: String, column: Column)] {
        guard let table = table(for: entity) else { return [] }
        let lineage = Set(lineage(of: entity).map(\.name))
        return table.columns.compactMap { column in
            switch column.source {
            case .attribute(let owner, let path) where path.count == 1 && lineage.contains(owner): return (path[0], column)
            case .toOne(let owner, let name) where lineage.contains(owner): return (name, column)
            default: return nil
            }
        }
    }

    // MARK: Planning

    /// Alphabetical, each entity followed by its sub-entities (alphabetical, depth first).
    static func number(_ model: CompiledModel) throws -> [CompiledEntity] {
        let names = model.entities.map(\.name)
        guard Set(names).count == names.count else { throw LayoutError(reason: "two entities share a name") }
        for entity in model.entities {
            if let parent = entity.superentity, !names.contains(parent) {
                throw LayoutError(reason: "\(entity.name) has no superentity \(parent)")
            }
        }
        let ordered = model.entitiesInNumberOrder
        guard ordered.count == model.entities.count else { throw LayoutError(reason: "the superentities form a cycle") }
        return ordered
    }

    /// Declared type and column group: integers, to-one keys, hidden keys, FLOAT/TIMESTAMP/DECIMAL,
    /// VARCHAR, BLOB (store-format.md "Entity tables").
    static func declaredType(of code: Int) throws -> (type: String, group: Int) {
        // The declared type is the kind's (AttributeKind, the one NSAttributeType table); the
        // group only orders columns.
        // An object ID (not seen in a store) is kept as its bytes, a BLOB, as a schema declares it.
        guard let kind = AttributeKind(typeCode: code), kind != .composite else {
            throw LayoutError(reason: "no column type for NSAttributeType \(code)")
        }
        let groups = ["INTEGER": 0, "DECIMAL": 3, "FLOAT": 3, "TIMESTAMP": 3, "VARCHAR": 4, "BLOB": 5]
        return (kind.columnType, groups[kind.columnType] ?? 5)
    }

    private struct Planned {
        var base: String
        var type: String
        var group: Int
        /// The property or element name the column is ordered by.
        var sortKey: String
        /// Discovery order: breaks ties between equal names, so the later one gets the suffix.
        var sequence: Int
        var source: ColumnSource
    }

    private func table(root: CompiledEntity) throws -> Table {
        let members = descendants(of: root.name)
        let tableName = CompiledEntity.tableName(root.name)
        var planned: [Planned] = []
        func plan(_ base: String, _ type: String, _ group: Int, _ key: String, _ source: ColumnSource) {
            planned.append(Planned(base: base, type: type, group: group, sortKey: key, sequence: planned.count, source: source))
        }
        // A composite has no column of its own: each leaf element gets one, named after the element.
        func expand(_ attribute: CompiledAttribute, path: [String], entity: String) throws {
            if attribute.isComposite {
                guard !attribute.elements.isEmpty else { throw LayoutError(reason: "composite \(path.joined(separator: ".")) is empty") }
                for element in attribute.elements { try expand(element, path: path + [element.name], entity: entity) }
                return
            }
            let (type, group) = try Self.declaredType(of: attribute.typeCode)
            plan("Z" + attribute.name.uppercased(), type, group, attribute.name, .attribute(entity: entity, path: path))
        }
        for name in members {
            guard let entity = entity(named: name) else { continue }
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
                try expand(attribute, path: [attribute.name], entity: name)
            }
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isToMany {
                plan(
                    "Z" + relationship.name.uppercased(), "INTEGER", 1, relationship.name,
                    .toOne(entity: name, relationship: relationship.name))
            }
        }
        // Hidden inverse columns: any entity's to-many without an inverse whose destination lives
        // in this table. Placed with the foreign keys, after the to-ones (inferred).
        for source in numberedEntities {
            for relationship in source.relationships.sorted(by: { $0.name < $1.name })
            where relationship.isToMany && relationship.inverse == nil && members.contains(relationship.destination) {
                guard let number = number(of: source.name) else { continue }
                let column = "Z\(number)\(relationship.name.uppercased())"
                plan(column, "INTEGER", 2, column, .hiddenInverse(source: source.name, relationship: relationship.name))
            }
        }
        planned.sort { ($0.group, $0.sortKey, $0.sequence) < ($1.group, $1.sortKey, $1.sequence) }
        var taken = Set(CoreDataSQL.rowColumns)
        var columns: [Column] = []
        for column in planned {
            var name = column.base
            var suffix = 1
            while taken.contains(name) {
                name = column.base + String(suffix)
                suffix += 1
            }
            taken.insert(name)
            columns.append(Column(name: name, declaredType: column.type, source: column.source))
        }
        var table = Table(name: tableName, rootEntity: root.name, entities: members, columns: columns, indexStatements: [])
        table.indexStatements = try indexes(of: table)
        return table
    }

    /// Foreign-key indexes (`<TABLE>_<COLUMN>_INDEX`), then per entity its unique constraints
    /// (`Z_<Entity>_UNIQUE_<prop>`) and fetch indexes (`Z_<Entity>_<index name>`).
    private func indexes(of table: Table) throws -> [String] {
        var statements: [String] = []
        for column in table.columns where column.declaredType == "INTEGER" {
            switch column.source {
            case .toOne, .hiddenInverse:
                statements.append("CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
            case .attribute: break
            }
        }
        func columnName(_ property: String, of entity: String) throws -> String {
            guard let column = column(for: [property], of: entity, in: table) else {
                throw LayoutError(reason: "\(entity) has no stored property \(property) to index")
            }
            return column.name
        }
        for name in table.entities {
            guard let entity = entity(named: name) else { continue }
            for tuple in entity.uniqueTuples {
                let columns = try tuple.map { "\(try columnName($0, of: name)) COLLATE BINARY ASC" }
                statements.append(
                    "CREATE UNIQUE INDEX Z_\(name)_UNIQUE_\(tuple.joined(separator: "_")) ON \(table.name) (\(columns.joined(separator: ", ")))"
                )
            }
            for index in entity.indexes {
                let columns = try index.elements.map { element in
                    "\(try columnName(element.propertyName, of: name)) COLLATE BINARY \(element.ascending == false ? "DESC" : "ASC")"
                }
                statements.append("CREATE INDEX Z_\(name)_\(index.name) ON \(table.name) (\(columns.joined(separator: ", ")))")
            }
        }
        return statements
    }

    /// One join table per many-to-many pair, named after the lower-numbered side's relationship.
    private func planJoinTables() throws -> [JoinTable] {
        var joins: [JoinTable] = []
        for entity in numberedEntities {
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where relationship.isToMany {
                guard let inverseName = relationship.inverse else { continue }
                guard let (inverseOwner, inverse) = self.relationship(inverseName, of: relationship.destination) else {
                    throw LayoutError(
                        reason: "\(entity.name).\(relationship.name) has no inverse \(relationship.destination).\(inverseName)")
                }
                guard inverse.isToMany else { continue }
                guard inverseOwner != entity.name else {
                    // Not seen in a real store (spec): refused rather than guessed.
                    throw LayoutError(reason: "self-referential many-to-many \(entity.name).\(relationship.name) is not laid out")
                }
                guard let number = self.number(of: entity.name), let inverseNumber = self.number(of: inverseOwner) else { continue }
                // Each pair once: from its lower-numbered side.
                guard number < inverseNumber else { continue }
                joins.append(
                    JoinTable(
                        name: "Z_\(number)\(relationship.name.uppercased())",
                        lower: JoinSide(
                            entity: entity.name, relationship: relationship.name, column: "Z_\(number)\(inverseName.uppercased())"),
                        higher: JoinSide(
                            entity: inverseOwner, relationship: inverseName, column: "Z_\(inverseNumber)\(relationship.name.uppercased())"))
                )
            }
        }
        return joins
    }
}
