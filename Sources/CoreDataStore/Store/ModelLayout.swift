import Foundation
import GRDB

/// Where each property of a store's own model (`Z_MODELCACHE`, decoded into a `CompiledModel`)
/// lives in its tables, following model-cache.md, "From model to tables": which table and `Z_ENT`
/// hold an entity's rows (sub-entities share their root's table), which column holds each
/// attribute (a composite's elements each have their own), which column holds a to-one, and where
/// a to-many without a foreign key keeps its links (a hidden column on the destination's table, or
/// a many-to-many join table).
///
/// The layout is computed from the model and then checked against the store: every column it
/// names must be there with the declared type, and every column and row of an entity table must
/// be explained by it. What is not explained is a `problem`: a backup then falls back to the
/// tables, so that nothing the model does not describe is ever left out.
package struct ModelLayout: Sendable {
    /// One stored attribute value: a top-level attribute, or an element of a composite (`path` then
    /// runs from the attribute through its elements).
    package struct Field: Sendable, Equatable {
        package var path: [String]
        package var column: String
        package var kind: AttributeKind
        /// A composite's elements are optional whatever the model says of them (a nil composite).
        package var isOptional: Bool = true
        /// The model's concrete default, as stored; nil when it has none (or one not storable).
        package var defaultValue: StoredValue?

        package init(path: [String], column: String, kind: AttributeKind, isOptional: Bool = true, defaultValue: StoredValue? = nil) {
            self.path = path
            self.column = column
            self.kind = kind
            self.isOptional = isOptional
            self.defaultValue = defaultValue
        }
    }

    package struct ToOne: Sendable, Equatable {
        package var name: String
        package var column: String
        package var destination: String = ""

        package init(name: String, column: String, destination: String = "") {
            self.name = name
            self.column = column
            self.destination = destination
        }
    }

    /// Where a to-many relationship that has no foreign key on the other side keeps its links.
    package enum LinkStorage: Sendable, Equatable {
        /// A column on the destination's table holding the source's `Z_PK` (a to-many without an
        /// inverse: `Cocktail.spec` → `ZINGREDIENT.Z1SPEC`).
        case destinationColumn(table: String, column: String)
        /// A many-to-many join table with one column for this side's `Z_PK` and one for the other's.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String)
    }

    package struct ToMany: Sendable, Equatable {
        package var name: String
        package var destination: String
        package var storage: LinkStorage
    }

    package struct EntityPlan: Sendable, Equatable {
        package var name: String
        package var number: Int64
        package var table: String
        /// In the record's key order: by attribute name, a composite's elements by name inside it.
        package var fields: [Field]
        package var toOne: [ToOne]
        /// Only the sides a record carries: a join table is written from one side, the other
        /// follows from the inverse.
        package var toMany: [ToMany]

        package init(name: String, number: Int64, table: String, fields: [Field], toOne: [ToOne], toMany: [ToMany]) {
            self.name = name
            self.number = number
            self.table = table
            self.fields = fields
            self.toOne = toOne
            self.toMany = toMany
        }
    }

    /// By entity name.
    package var entities: [EntityPlan]
    /// Join tables the model explains: their rows travel as relationship values, not as tables.
    package var joinTables: Set<String>
    /// What the model does not explain, one sentence each; empty when the layout is exact.
    package var problems: [String]
    /// What was inferred rather than read off a real store (spec: "inference").
    package var notes: [String]
    /// What is odd about the store's data though the model explains it (a join-table row that
    /// links no record), one sentence each: a backup says it.
    package var warnings: [String]
    /// Entity tables that hold one entity of the model and every row of which the row checks
    /// found to be its record: there, `SELECT count(*)` of the table is the entity's count, and
    /// its `Z_PK`s are the entity's keys (empty when the rows were not checked).
    package var tablesOfOneEntity: Set<String> = []

    /// The layout of `model` in the store open on `db`. `checkRows` also checks that every row
    /// and every link belongs to an entity and a record (off for a store that is being written).
    /// Join tables named in `carriedAsTables` are left as tables, their links untyped (an
    /// archive says which: those its export found holding rows that link no record).
    /// `entityNumbers` are the store's `Z_ENT`s when its `Z_PRIMARYKEY` does not hold them yet (a
    /// store being written); nil reads them from it.
    /// `readers`, other connections to the same unchanging file, run the row checks at once.
    package init(
        _ db: Database, model: CompiledModel, checkRows: Bool = true, carriedAsTables: Set<String> = [],
        entityNumbers: [String: Int64]? = nil, readers: KeyRangeReaders? = nil
    ) throws {
        var builder = try Builder(db, model: model, numbers: entityNumbers)
        builder.carriedAsTables = carriedAsTables
        builder.build()
        if checkRows, builder.problems.isEmpty { try builder.checkRows(readers: readers) }
        entities = builder.plans.sorted { $0.name < $1.name }
        joinTables = builder.joinTables
        problems = builder.problems
        notes = builder.notes
        warnings = builder.warnings
        tablesOfOneEntity = builder.tablesOfOneEntity
    }

    package func entity(named name: String) -> EntityPlan? { entities.first { $0.name == name } }

    /// The statement that counts the links of `plan`'s to-many kept in `storage` that name no
    /// record of it: a link value that is not an INTEGER (a join-table row counts when either of
    /// its values is not), or that is no `Z_PK` of the entity's rows (`S` below).
    ///
    /// Asked as a set, `value NOT IN (SELECT Z_PK ... WHERE Z_ENT = n)`, SQLite copies `S` into a
    /// B-tree of its own and searches it once per link (at 1M rows, 850,000 searches: a third of
    /// the row checks' time). Where the entity's table is keyed by its rowid
    /// (`KeyRangeReaders.isKeyedByRowid`), the same number is the links that are not NULL (every
    /// row of a join table) less the pairs of a record of `S` and a link of INTEGER value equal
    /// to its key, which SQLite counts by walking `S`'s rows and looking up each one's links in
    /// the link column's index. The two agree: a link counted by the first is one whose value is
    /// not NULL and (not an INTEGER or not in `S`); the links not NULL less those is exactly the
    /// links whose value is an INTEGER in `S`; and each of those pairs with one record of `S` and
    /// no other, since a rowid is unique and never NULL, so the pairs are as many as those links
    /// (a NULL in `S` would have made `NOT IN` count nothing for a value outside it: a rowid is
    /// never one). Values are compared as INTEGERs both ways (only INTEGER values pair). Another
    /// key (`INT PRIMARY KEY`, none, a composite) may repeat or be NULL: the set's form is kept.
    /// `ModelLayoutRowCheckTests` counts both forms on stores spoiled each way.
    package static func strayLinksSQL(of plan: EntityPlan, _ storage: LinkStorage, sourceKeyedByRowid: Bool) -> String {
        let key = CoreDataSQL.keyColumn
        let entity = CoreDataSQL.entityColumn
        let sources = "SELECT \(key) FROM \(plan.table) WHERE \(entity) = \(plan.number)"
        let pairs = "SELECT count(*) FROM \(plan.table) AS source"
        switch (storage, sourceKeyedByRowid) {
        case (.destinationColumn(let table, let column), false):
            return
                "SELECT count(*) FROM \(table) WHERE \(column) IS NOT NULL AND (typeof(\(column)) != 'integer' OR \(column) NOT IN (\(sources)))"
        case (.destinationColumn(let table, let column), true):
            return
                "SELECT (SELECT count(*) FROM \(table) WHERE \(column) IS NOT NULL) - (\(pairs), \(table) AS link WHERE source.\(entity) = \(plan.number) AND link.\(column) = source.\(key) AND typeof(link.\(column)) = 'integer')"
        case (.joinTable(let table, let sourceColumn, let destinationColumn), false):
            return
                "SELECT count(*) FROM \(table) WHERE typeof(\(sourceColumn)) != 'integer' OR typeof(\(destinationColumn)) != 'integer' OR \(sourceColumn) NOT IN (\(sources))"
        case (.joinTable(let table, let sourceColumn, let destinationColumn), true):
            return
                "SELECT (SELECT count(*) FROM \(table)) - (\(pairs), \(table) AS link WHERE source.\(entity) = \(plan.number) AND link.\(sourceColumn) = source.\(key) AND typeof(link.\(sourceColumn)) = 'integer' AND typeof(link.\(destinationColumn)) = 'integer')"
        }
    }

    private struct Builder {
        let db: Database
        let model: CompiledModel
        let numbers: [String: Int64]
        var plans: [EntityPlan] = []
        var joinTables: Set<String> = []
        var problems: [String] = []
        var notes: [String] = []
        var warnings: [String] = []
        /// Declared column types by table (upper-cased names), read once.
        var columns: [String: [String: String]] = [:]
        var carriedAsTables: Set<String> = []
        var tablesOfOneEntity: Set<String> = []

        init(_ db: Database, model: CompiledModel, numbers given: [String: Int64]?) throws {
            self.db = db
            self.model = model
            numbers =
                try given
                ?? Dictionary(StoreReader.entityKeys(db).map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        }

        mutating func declaredColumns(_ table: String) -> [String: String]? {
            if let known = columns[table] { return known }
            guard (try? db.tableExists(table)) == true, let list = try? db.columns(in: table) else { return nil }
            let found = Dictionary(list.map { ($0.name.uppercased(), $0.type.uppercased()) }, uniquingKeysWith: { first, _ in first })
            columns[table] = found
            return found
        }

        /// The kind a stored attribute has; nil for a type whose storage is not known.
        static func kind(of attribute: CompiledAttribute) -> AttributeKind? {
            guard let kind = AttributeKind(typeCode: attribute.typeCode), ![.composite, .objectID].contains(kind) else {
                return nil
            }
            return kind
        }

        /// The attribute at `path` (a composite's element below its attribute) of `entity`.
        func attribute(_ path: [String], of entity: String) -> CompiledAttribute? {
            guard let first = path.first, var current = model.entity(named: entity)?.attributes.first(where: { $0.name == first }) else {
                return nil
            }
            for name in path.dropFirst() {
                guard let element = current.elements.first(where: { $0.name == name }) else { return nil }
                current = element
            }
            return current
        }

        /// The store's tables laid out by `ModelTables` (the one home of Core Data's naming rules)
        /// with the store's own entity numbers, then checked column by column against the store.
        mutating func build() {
            for note in model.notes { notes.append("model cache: \(note)") }
            // Every name becomes a table or column name in SQL: only plain identifiers are used, so
            // no name from a store or an archive can change what a statement means.
            func checkName(_ name: String, _ what: String) {
                if !CompiledModel.isPlainIdentifier(name) {
                    problems.append("\(what) name \"\(name.prefix(80))\" is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
                }
            }
            func checkAttribute(_ attribute: CompiledAttribute, of entity: String) {
                checkName(attribute.name, "\(entity): property")
                for element in attribute.elements { checkAttribute(element, of: entity) }
            }
            for entity in model.entities {
                checkName(entity.name, "entity")
                for attribute in entity.attributes { checkAttribute(attribute, of: entity.name) }
                for relationship in entity.relationships {
                    checkName(relationship.name, "\(entity.name): property")
                    checkName(relationship.destination, "\(entity.name).\(relationship.name): destination")
                    if let inverse = relationship.inverse { checkName(inverse, "\(entity.name).\(relationship.name): inverse") }
                }
                for name in entity.uniqueTuples.joined() + entity.indexes.flatMap({ [$0.name] + $0.elements.map(\.propertyName) }) {
                    checkName(name, "\(entity.name): index or constraint")
                }
                if numbers[entity.name] == nil {
                    problems.append("entity \(entity.name) of the model has no row in \(CoreDataSQL.primaryKeyTable)")
                }
            }
            guard problems.isEmpty else { return }
            let tables: ModelTables
            do {
                tables = try ModelTables(model: model, numbers: numbers)
            } catch {
                problems.append((error as? LocalizedError)?.errorDescription ?? "\(error)")
                return
            }
            for table in tables.tables {
                guard let declared = declaredColumns(table.name) else {
                    problems.append("table \(table.name) of entity \(table.entities.joined(separator: ", ")) is missing")
                    continue
                }
                var explained = Set(CoreDataSQL.rowColumns)
                for column in table.columns {
                    explained.insert(column.name)
                    let holds = column.source.holds
                    guard let type = declared[column.name] else {
                        problems.append("\(table.name) has no column \(column.name) for \(holds)")
                        continue
                    }
                    // Declared types are compared by their first word (`VARCHAR` and `VARCHAR(255)` agree).
                    let word = type.split(separator: "(").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? type
                    if word != column.declaredType {
                        problems.append("\(table.name).\(column.name) is declared \(type), but \(holds) is \(column.declaredType)")
                    }
                    if case .attribute(_, let path) = column.source, let last = path.last, column.name != "Z" + last.uppercased() {
                        notes.append("\(table.name).\(column.name) holds \(holds): the suffix is inferred")
                    }
                }
                for column in declared.keys.sorted() where !explained.contains(column) {
                    problems.append("column \(table.name).\(column) is not explained by the store's model")
                }
            }
            for entity in tables.numberedEntities {
                guard let number = numbers[entity.name], let table = tables.table(for: entity.name) else { continue }
                let lineage = Set(tables.lineage(of: entity.name).map(\.name))
                var fields: [Field] = []
                var toOne: [ToOne] = []
                for column in table.columns {
                    switch column.source {
                    case .attribute(let owner, let path) where lineage.contains(owner):
                        guard let attribute = attribute(path, of: owner) else { continue }
                        guard let kind = Self.kind(of: attribute) else {
                            problems.append(
                                "\(owner).\(path.joined(separator: ".")) has attribute type \(attribute.typeCode), whose storage is not known"
                            )
                            continue
                        }
                        fields.append(
                            Field(
                                path: path, column: column.name, kind: kind, isOptional: path.count > 1 || attribute.isOptional,
                                defaultValue: attribute.defaultValue.flatMap { Self.stored($0, as: kind) }))
                    case .toOne(let owner, let name) where lineage.contains(owner):
                        let destination = tables.relationship(name, of: owner)?.relationship.destination ?? ""
                        toOne.append(ToOne(name: name, column: column.name, destination: destination))
                    default: break
                    }
                }
                // The record's key order: attributes by name, a composite's elements by name inside it.
                fields.sort { $0.path.lexicographicallyPrecedes($1.path) }
                toOne.sort { $0.name < $1.name }
                plans.append(
                    EntityPlan(
                        name: entity.name, number: number, table: table.name, fields: fields, toOne: toOne,
                        toMany: toManyLinks(of: entity.name, tables: tables)))
            }
        }

        /// The to-many relationships of `entity` whose links a record carries: those kept in a
        /// hidden column of the destination, and the many-to-many ones whose join table is named
        /// after this side (the lower entity number); the other side follows from the inverse.
        mutating func toManyLinks(of entity: String, tables: ModelTables) -> [ToMany] {
            var names: Set<String> = []
            for ancestor in tables.lineage(of: entity) {
                for relationship in ancestor.relationships where relationship.isToMany { names.insert(relationship.name) }
            }
            var links: [ToMany] = []
            for name in names.sorted() {
                guard let (_, relationship) = tables.relationship(name, of: entity) else { continue }
                let storage: ModelTables.RelationshipStorage
                do {
                    storage = try tables.storage(of: name, from: entity)
                } catch {
                    problems.append((error as? LocalizedError)?.errorDescription ?? "\(error)")
                    continue
                }
                switch storage {
                case .hiddenColumn(let table, let column):
                    links.append(
                        ToMany(name: name, destination: relationship.destination, storage: .destinationColumn(table: table, column: column))
                    )
                case .joinTable(let join, let sourceIsLower):
                    guard sourceIsLower else { continue }
                    guard let declared = declaredColumns(join.name) else {
                        problems.append("\(entity).\(name) is a many-to-many, but its join table \(join.name) is missing")
                        continue
                    }
                    guard Set(declared.keys) == [join.lower.column, join.higher.column] else {
                        problems.append(
                            "join table \(join.name) of \(entity).\(name) has columns \(declared.keys.sorted().joined(separator: ", ")), not \(join.lower.column), \(join.higher.column)"
                        )
                        continue
                    }
                    if carriedAsTables.contains(join.name) { continue }
                    joinTables.insert(join.name)
                    links.append(
                        ToMany(
                            name: name, destination: relationship.destination,
                            storage: .joinTable(table: join.name, sourceColumn: join.lower.column, destinationColumn: join.higher.column)))
                case .foreignKey, .inverseForeignKey:
                    continue
                }
            }
            return links
        }

        /// A concrete default (SwiftData archives the value its default expression had when the
        /// model was built) as the column stores it; nil for a form that has no column value.
        static func stored(_ value: CompiledDefaultValue, as kind: AttributeKind) -> StoredValue? {
            // The one conversion of an archived default (`CompiledDefaultValue.declared(as:)`), as the column stores it.
            guard case .value(let value)? = value.declared(as: kind) else { return nil }
            return ValueCoding.encode(value)
        }

        /// Every row of an entity table is a record of one of its entities, and every link points
        /// from a record that exists, as an integer: otherwise a record-by-record backup would
        /// leave something out.
        mutating func checkRows(readers: KeyRangeReaders?) throws {
            /// What one count says when it is not 0.
            enum Finding {
                case strayRows(table: String, entities: Int)
                case strayLinks(plan: String, link: String, table: String, column: String)
                case untypedJoinTable(plan: String, link: String, table: String)
            }
            var checks: [(finding: Finding, sql: String)] = []
            var numbersByTable: [String: [Int64]] = [:]
            for plan in plans { numbersByTable[plan.table, default: []].append(plan.number) }
            for (table, entityNumbers) in numbersByTable.sorted(by: { $0.key < $1.key }) {
                let list = entityNumbers.map(String.init).joined(separator: ", ")
                checks.append(
                    (
                        .strayRows(table: table, entities: entityNumbers.count),
                        "SELECT count(*) FROM \(table) WHERE \(CoreDataSQL.entityColumn) IS NULL OR \(CoreDataSQL.entityColumn) NOT IN (\(list))"
                    ))
            }
            for plan in plans where !plan.toMany.isEmpty {
                let keyedByRowid = try KeyRangeReaders.isKeyedByRowid(db, table: plan.table)
                for link in plan.toMany {
                    let sql = ModelLayout.strayLinksSQL(of: plan, link.storage, sourceKeyedByRowid: keyedByRowid)
                    switch link.storage {
                    case .destinationColumn(let table, let column):
                        checks.append((.strayLinks(plan: plan.name, link: link.name, table: table, column: column), sql))
                    case .joinTable(let table, _, _):
                        checks.append((.untypedJoinTable(plan: plan.name, link: link.name, table: table), sql))
                    }
                }
            }
            // Each count is a pass over a table: with other connections to the same unchanging
            // file they run at once, and are read back in the order above.
            var counts: [Int] = []
            if let readers, !readers.connections.isEmpty, checks.count > 1 {
                let queries = checks.map(\.sql)
                try readers.run(
                    count: queries.count, produce: { db, index in try Int.fetchOne(db, sql: queries[index]) ?? 0 },
                    consume: { counts.append($0) })
            } else {
                counts = try checks.map { try Int.fetchOne(db, sql: $0.sql) ?? 0 }
            }
            for (check, bad) in zip(checks, counts) where bad == 0 {
                if case .strayRows(let table, let entities) = check.finding, entities == 1 { tablesOfOneEntity.insert(table) }
            }
            for (check, bad) in zip(checks, counts) where bad > 0 {
                switch check.finding {
                case .strayRows(let table, _):
                    problems.append("\(table) has \(bad) row(s) whose \(CoreDataSQL.entityColumn) is no entity of the model")
                case .strayLinks(let plan, let link, let table, let column):
                    problems.append("\(table).\(column) (the links of \(plan).\(link)) has \(bad) value(s) that name no \(plan)")
                case .untypedJoinTable(let plan, let link, let table):
                    // The table is still carried row by row, exactly; only its links are not typed.
                    warnings.append(
                        "join table \(table) has \(bad) row(s) that link no \(plan): carried as a table, so \(plan).\(link) is not typed")
                    joinTables.remove(table)
                    if let index = plans.firstIndex(where: { $0.name == plan }) {
                        plans[index].toMany.removeAll { $0.name == link }
                    }
                }
            }
        }
    }
}
