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
        var defaultValue: StoredValue?
    }

    package struct ToOne: Sendable, Equatable {
        package var name: String
        package var column: String
        package var destination: String = ""
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

    /// The layout of `model` in the store open on `db`. `checkRows` also checks that every row
    /// and every link belongs to an entity and a record (off for a store that is being written).
    /// Join tables named in `carriedAsTables` are left as tables, their links untyped (an
    /// archive says which: those its export found holding rows that link no record).
    package init(_ db: Database, model: CompiledModel, checkRows: Bool = true, carriedAsTables: Set<String> = []) throws {
        var builder = try Builder(db, model: model)
        builder.carriedAsTables = carriedAsTables
        builder.build()
        if checkRows, builder.problems.isEmpty { try builder.checkRows() }
        entities = builder.plans.sorted { $0.name < $1.name }
        joinTables = builder.joinTables
        problems = builder.problems
        notes = builder.notes
        warnings = builder.warnings
    }

    package func entity(named name: String) -> EntityPlan? { entities.first { $0.name == name } }

    private struct Builder {
        let db: Database
        let model: CompiledModel
        let byName: [String: CompiledEntity]
        let numbers: [String: Int64]
        var plans: [EntityPlan] = []
        var joinTables: Set<String> = []
        var problems: [String] = []
        var notes: [String] = []
        var warnings: [String] = []
        /// Declared column types by table (upper-cased names), read once.
        var columns: [String: [String: String]] = [:]
        /// Columns each table's plan accounts for.
        var explained: [String: Set<String>] = [:]
        var carriedAsTables: Set<String> = []

        init(_ db: Database, model: CompiledModel) throws {
            self.db = db
            self.model = model
            byName = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            numbers = Dictionary(try StoreReader.entityKeys(db).map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        }

        /// The entity and its ancestors, nearest first (a loop in a damaged cache is cut).
        func chain(_ entity: CompiledEntity) -> [CompiledEntity] {
            var result = [entity]
            var seen: Set<String> = [entity.name]
            while let parent = result.last?.superentity.flatMap({ byName[$0] }), seen.insert(parent.name).inserted {
                result.append(parent)
            }
            return result
        }

        func root(_ entity: CompiledEntity) -> CompiledEntity { chain(entity).last ?? entity }

        func table(of entity: CompiledEntity) -> String { "Z" + root(entity).name.uppercased() }

        /// Each property by name, an ancestor's where it defines one (sub-entities may or may not
        /// repeat inherited properties in the cache: spec, inference), with the entity defining it.
        func properties(
            _ entity: CompiledEntity
        ) -> (
            attributes: [(owner: String, attribute: CompiledAttribute)],
            relationships: [(owner: String, relationship: CompiledRelationship)]
        ) {
            var attributes: [String: (String, CompiledAttribute)] = [:]
            var relationships: [String: (String, CompiledRelationship)] = [:]
            for ancestor in chain(entity) {
                for attribute in ancestor.attributes { attributes[attribute.name] = (ancestor.name, attribute) }
                for relationship in ancestor.relationships { relationships[relationship.name] = (ancestor.name, relationship) }
            }
            return (
                attributes.values.sorted { $0.1.name < $1.1.name }.map { (owner: $0.0, attribute: $0.1) },
                relationships.values.sorted { $0.1.name < $1.1.name }.map { (owner: $0.0, relationship: $0.1) }
            )
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
            guard let kind = Attribute.knownKind(ofTypeCode: attribute.typeCode), ![.composite, .objectID].contains(kind) else {
                return nil
            }
            return kind
        }

        /// A column to be named: `base` plus a numeric suffix when an earlier column took it.
        struct Planned {
            var key: String
            var base: String
            var declaredType: String
            /// Core Data's creation order: integers, to-one keys, FLOAT/TIMESTAMP/DECIMAL, VARCHAR, BLOB.
            var group: Int
            var sortName: String
        }

        static func group(ofDeclaredType type: String) -> Int {
            switch type {
            case "INTEGER": return 0
            case "FLOAT", "TIMESTAMP", "DECIMAL": return 2
            case "VARCHAR": return 3
            default: return 4
            }
        }

        mutating func build() {
            for note in model.notes { notes.append("model cache: \(note)") }
            // Every entity of a table, so the columns of one hierarchy are named together.
            var byTable: [String: [CompiledEntity]] = [:]
            for entity in model.entities {
                guard numbers[entity.name] != nil else {
                    problems.append("entity \(entity.name) of the model has no row in Z_PRIMARYKEY")
                    continue
                }
                byTable[table(of: entity), default: []].append(entity)
            }
            var plannedColumns: [String: [String: String]] = [:]  // table → key → column
            var fieldsByEntity: [String: [Field]] = [:]
            var toOneByEntity: [String: [ToOne]] = [:]
            for (table, members) in byTable.sorted(by: { $0.key < $1.key }) {
                guard declaredColumns(table) != nil else {
                    problems.append("table \(table) of entity \(members.map(\.name).sorted().joined(separator: ", ")) is missing")
                    continue
                }
                var planned: [Planned] = []
                var seenKeys: Set<String> = []
                var leavesByEntity: [String: [(path: [String], key: String, kind: AttributeKind, attribute: CompiledAttribute)]] = [:]
                var toOneKeys: [String: [(name: String, key: String, destination: String)]] = [:]
                for entity in members.sorted(by: { $0.name < $1.name }) {
                    let (attributes, relationships) = properties(entity)
                    for (owner, attribute) in attributes {
                        for leaf in leaves(of: attribute, path: [attribute.name], entity: entity.name) {
                            let key = owner + "." + leaf.path.joined(separator: ".")
                            leavesByEntity[entity.name, default: []].append((leaf.path, key, leaf.kind, leaf.attribute))
                            if seenKeys.insert(key).inserted {
                                let type = leaf.kind.columnType
                                planned.append(
                                    Planned(
                                        key: key, base: "Z" + (leaf.path.last ?? "").uppercased(), declaredType: type,
                                        group: Self.group(ofDeclaredType: type), sortName: leaf.path.joined(separator: ".")))
                            }
                        }
                    }
                    for (owner, relationship) in relationships where !relationship.isToMany {
                        let key = owner + "." + relationship.name
                        toOneKeys[entity.name, default: []].append((relationship.name, key, relationship.destination))
                        if seenKeys.insert(key).inserted {
                            planned.append(
                                Planned(
                                    key: key, base: "Z" + relationship.name.uppercased(), declaredType: "INTEGER", group: 1,
                                    sortName: relationship.name))
                        }
                    }
                }
                // On a clash the later column gets a numeric suffix, as Core Data does; which one is
                // later when two clash is inferred from the creation order (spec: `ZID`, `ZID1`).
                var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
                var names: [String: String] = [:]
                for column in planned.sorted(by: { ($0.group, $0.sortName) < ($1.group, $1.sortName) }) {
                    var name = column.base
                    var suffix = 1
                    while taken.contains(name) {
                        name = column.base + String(suffix)
                        suffix += 1
                    }
                    if name != column.base { notes.append("\(table).\(name) holds \(column.sortName): the suffix is inferred") }
                    taken.insert(name)
                    names[column.key] = name
                    check(table: table, column: name, declaredType: column.declaredType, holds: column.sortName)
                }
                plannedColumns[table] = names
                for entity in members {
                    fieldsByEntity[entity.name] = (leavesByEntity[entity.name] ?? []).compactMap { leaf in
                        names[leaf.key].map {
                            Field(
                                path: leaf.path, column: $0, kind: leaf.kind, isOptional: leaf.path.count > 1 || leaf.attribute.isOptional,
                                defaultValue: leaf.attribute.defaultValue.flatMap { Self.stored($0, as: leaf.kind) })
                        }
                    }
                    toOneByEntity[entity.name] = (toOneKeys[entity.name] ?? []).compactMap { item in
                        names[item.key].map { ToOne(name: item.name, column: $0, destination: item.destination) }
                    }
                }
            }
            for entity in model.entities {
                guard let number = numbers[entity.name] else { continue }
                plans.append(
                    EntityPlan(
                        name: entity.name, number: number, table: table(of: entity), fields: fieldsByEntity[entity.name] ?? [],
                        toOne: toOneByEntity[entity.name] ?? [], toMany: toManyLinks(of: entity)))
            }
            // Every column of every entity table is one the model explains.
            for (table, declared) in columns.sorted(by: { $0.key < $1.key }) where byTable[table] != nil {
                let known = (explained[table] ?? []).union(["Z_PK", "Z_ENT", "Z_OPT"])
                for column in declared.keys.sorted() where !known.contains(column) {
                    problems.append("column \(table).\(column) is not explained by the store's model")
                }
            }
        }

        mutating func check(table: String, column: String, declaredType: String, holds: String) {
            guard let declared = declaredColumns(table)?[column] else {
                problems.append("\(table) has no column \(column) for \(holds)")
                return
            }
            explained[table, default: []].insert(column)
            // Declared types are compared by their first word (`VARCHAR` and `VARCHAR(255)` agree).
            let word = declared.split(separator: "(").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? declared
            if word != declaredType {
                problems.append("\(table).\(column) is declared \(declared), but \(holds) is \(declaredType)")
            }
        }

        /// An attribute's stored leaves: itself, or a composite's elements, nested ones flattened.
        /// A concrete default (SwiftData archives the value its default expression had when the
        /// model was built) as the column stores it; nil for a form that has no column value.
        static func stored(_ value: CompiledDefaultValue, as kind: AttributeKind) -> StoredValue? {
            switch (value, kind) {
            case (.integer(let number), .double), (.integer(let number), .float), (.integer(let number), .date):
                return .real(Double(number))
            case (.integer(let number), _): return .integer(number)
            case (.real(let number), .integer), (.real(let number), .integer16), (.real(let number), .integer32):
                return Int64(exactly: number).map { .integer($0) }
            case (.real(let number), .decimal): return ValueCoding.decimalText(.real(number)).flatMap(ValueCoding.storedDecimal)
            case (.real(let number), _): return .real(number)
            case (.boolean(let flag), _): return .integer(flag ? 1 : 0)
            case (.string(let text), _): return .text(Data(text.utf8))
            case (.date(let seconds), _): return .real(seconds)
            case (.uuid(let bytes), .string):
                return .text(Data(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString.utf8))
            case (.uuid(let bytes), _): return .blob(bytes)
            case (.data(let bytes), _): return .blob(bytes)
            case (.decimal(let mantissa, let exponent, let negative), _):
                return DecimalDefault.text(mantissa: mantissa, exponent: exponent, isNegative: negative).flatMap(ValueCoding.storedDecimal)
            case (.dictionary, _), (.other, _): return nil
            }
        }

        mutating func leaves(
            of attribute: CompiledAttribute, path: [String], entity: String
        ) -> [(
            path: [String], kind: AttributeKind, attribute: CompiledAttribute
        )] {
            if attribute.isComposite {
                if attribute.elements.isEmpty { notes.append("\(entity).\(path.joined(separator: ".")) is a composite with no elements") }
                return attribute.elements.sorted { $0.name < $1.name }.flatMap { leaves(of: $0, path: path + [$0.name], entity: entity) }
            }
            guard let kind = Self.kind(of: attribute) else {
                problems.append(
                    "\(entity).\(path.joined(separator: ".")) has attribute type \(attribute.typeCode), whose storage is not known")
                return []
            }
            return [(path, kind, attribute)]
        }

        /// The to-many relationships of `entity` whose links a record carries.
        mutating func toManyLinks(of entity: CompiledEntity) -> [ToMany] {
            var links: [ToMany] = []
            for (owner, relationship) in properties(entity).relationships where relationship.isToMany {
                guard let destination = byName[relationship.destination], let ownerNumber = numbers[owner] else {
                    problems.append("\(entity.name).\(relationship.name) points at \(relationship.destination), which the model lacks")
                    continue
                }
                let inverse = relationship.inverse.flatMap { name in
                    properties(destination).relationships.first { $0.relationship.name == name }
                }
                if relationship.inverse != nil, inverse == nil {
                    problems.append("\(entity.name).\(relationship.name) names an inverse \(destination.name) does not have")
                    continue
                }
                guard let inverse else {
                    // No inverse: Core Data keeps the link on the destination's row.
                    let table = table(of: destination)
                    let column = "Z\(ownerNumber)\(relationship.name.uppercased())"
                    check(table: table, column: column, declaredType: "INTEGER", holds: "the links of \(entity.name).\(relationship.name)")
                    links.append(
                        ToMany(
                            name: relationship.name, destination: destination.name,
                            storage: .destinationColumn(table: table, column: column)))
                    continue
                }
                guard inverse.relationship.isToMany else { continue }  // the other side's foreign key holds it
                guard let otherNumber = numbers[inverse.owner] else { continue }
                if let storage = joinTable(
                    owner: (ownerNumber, relationship.name), other: (otherNumber, inverse.relationship.name),
                    describing: "\(entity.name).\(relationship.name)")
                {
                    links.append(ToMany(name: relationship.name, destination: destination.name, storage: storage))
                }
            }
            return links
        }

        /// The join table of a many-to-many, when this side is the one it is named after: the side
        /// of the lower entity number (spec: `Z_1EXPENSES (Z_1CATEGORIES, Z_2EXPENSES)`). A
        /// self-referential one was not seen: both spellings are tried and the choice noted.
        mutating func joinTable(
            owner: (number: Int64, name: String), other: (number: Int64, name: String), describing: String
        )
            -> LinkStorage?
        {
            if owner.number > other.number { return nil }
            let table = "Z_\(owner.number)\(owner.name.uppercased())"
            let sourceColumn = "Z_\(owner.number)\(other.name.uppercased())"
            var destinationColumn = "Z_\(other.number)\(owner.name.uppercased())"
            if owner.number == other.number {
                // The other name's table is the same join table seen from the other relationship.
                if owner.name > other.name, declaredColumns("Z_\(other.number)\(other.name.uppercased())") != nil { return nil }
                if destinationColumn == sourceColumn { destinationColumn += "1" }
                notes.append(
                    "\(describing) is a self-referential many-to-many: join table \(table) (\(sourceColumn), \(destinationColumn)) is inferred"
                )
            }
            guard let declared = declaredColumns(table) else {
                problems.append("\(describing) is a many-to-many, but its join table \(table) is missing")
                return nil
            }
            if carriedAsTables.contains(table) { return nil }
            guard Set(declared.keys) == [sourceColumn, destinationColumn] else {
                problems.append(
                    "join table \(table) of \(describing) has columns \(declared.keys.sorted().joined(separator: ", ")), not \(sourceColumn), \(destinationColumn)"
                )
                return nil
            }
            joinTables.insert(table)
            return .joinTable(table: table, sourceColumn: sourceColumn, destinationColumn: destinationColumn)
        }

        /// Every row of an entity table is a record of one of its entities, and every link points
        /// from a record that exists, as an integer: otherwise a record-by-record backup would
        /// leave something out.
        mutating func checkRows() throws {
            var numbersByTable: [String: [Int64]] = [:]
            for plan in plans { numbersByTable[plan.table, default: []].append(plan.number) }
            for (table, entityNumbers) in numbersByTable.sorted(by: { $0.key < $1.key }) {
                let list = entityNumbers.map(String.init).joined(separator: ", ")
                let stray = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE Z_ENT IS NULL OR Z_ENT NOT IN (\(list))") ?? 0
                if stray > 0 { problems.append("\(table) has \(stray) row(s) whose Z_ENT is no entity of the model") }
            }
            for plan in plans {
                let sources = "SELECT Z_PK FROM \(plan.table) WHERE Z_ENT = \(plan.number)"
                for link in plan.toMany {
                    switch link.storage {
                    case .destinationColumn(let table, let column):
                        let bad =
                            try Int.fetchOne(
                                db,
                                sql:
                                    "SELECT count(*) FROM \(table) WHERE \(column) IS NOT NULL AND (typeof(\(column)) != 'integer' OR \(column) NOT IN (\(sources)))"
                            ) ?? 0
                        if bad > 0 {
                            problems.append(
                                "\(table).\(column) (the links of \(plan.name).\(link.name)) has \(bad) value(s) that name no \(plan.name)")
                        }
                    case .joinTable(let table, let sourceColumn, let destinationColumn):
                        let bad =
                            try Int.fetchOne(
                                db,
                                sql:
                                    "SELECT count(*) FROM \(table) WHERE typeof(\(sourceColumn)) != 'integer' OR typeof(\(destinationColumn)) != 'integer' OR \(sourceColumn) NOT IN (\(sources))"
                            ) ?? 0
                        if bad > 0 {
                            // The table is still carried row by row, exactly; only its links are not typed.
                            warnings.append(
                                "join table \(table) has \(bad) row(s) that link no \(plan.name): carried as a table, so \(plan.name).\(link.name) is not typed"
                            )
                            joinTables.remove(table)
                            if let index = plans.firstIndex(where: { $0.name == plan.name }) {
                                plans[index].toMany.removeAll { $0.name == link.name }
                            }
                        }
                    }
                }
            }
        }
    }
}
