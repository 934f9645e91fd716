import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// A store's records as a merge sees them, for an app profile's versions (TimeQuest's) and for any store its own
/// model describes alike: where each entity's rows are, which columns hold values and which hold
/// another record's `Z_PK` (those are translated from the archive's keys to the store's), which
/// links live in join tables, and how a record is recognised in another copy of the store.
///
/// Identity never uses `Z_PK`, which differs between devices. It is, in this order: the same
/// well-formed `cloudID` (one that no other record of its side shares: a shared value is a default
/// a migration left, not an identity); a uniqueness constraint of the model; the app profile's
/// natural key; for a singleton, the one record. An entity with none of these is matched by
/// content: every value and to-one equal (said in the merge's notes).
struct MergeLayout {
    struct Field {
        /// The property (`profile.name` for a composite's element; `Source.relationship` for the
        /// hidden column of a to-many without an inverse).
        var name: String
        var column: String
        /// The attribute's kind, to show values in the report; nil for a reference.
        var kind: AttributeKind?
        /// For a column holding a `Z_PK`: the table of the records it names.
        var reference: String?
    }

    /// One way to recognise a record: the store's and the archive's records with equal values in
    /// `columns` are one record.
    struct IdentityKey {
        enum Kind: String {
            case cloudID
            case uniqueness = "uniqueness constraint"
            case naturalKey = "natural key"
            /// A one-to-one's foreign key: the record whose partner is matched is the partner's.
            case oneToOne = "one-to-one partner"
            case content
        }

        var kind: Kind
        /// Field names, for notes.
        var properties: [String]
        var fields: [Field]
    }

    struct EntityPlan {
        var name: String
        var table: String
        /// The `Z_ENT` of this entity's own rows; nil when the table holds no other entity's.
        var number: Int64?
        /// Whether the entity is its table's root, whose `Z_PRIMARYKEY` row keeps the table's
        /// `Z_MAX` (a sub-entity's row keeps 0: keys are unique per table).
        var isRoot: Bool
        var fields: [Field]
        var keys: [IdentityKey]
        var isSingleton: Bool
        /// The app profile's rules for properties where the larger or smaller value wins.
        var rules: [String: MergeRule]
        var cloudIDColumn: String?

        /// SQL restricting `alias`'s rows to this entity's own.
        func rows(_ alias: String) -> String {
            number.map { "\(alias).\(CoreDataSQL.entityColumn) = \($0)" } ?? "1"
        }

        func field(named name: String) -> Field? { fields.first { $0.name == name } }
    }

    struct JoinTable: Equatable {
        var name: String
        /// The entity and relationship whose links these are (the side a record carries).
        var entity: String
        var relationship: String
        var sourceColumn: String
        var sourceTable: String
        var destinationColumn: String
        var destinationTable: String
    }

    /// Parents before the children whose keys name them.
    var entities: [EntityPlan]
    var joinTables: [JoinTable]
    /// What the layout could not use, one sentence each (a constraint on a composite, say).
    var notes: [String] = []

    func entity(named name: String) -> EntityPlan? { entities.first { $0.name == name } }

    var tables: [String] { Array(Set(entities.map(\.table))).sorted() }

    /// Every table the merge's map may be asked about (`RecordMerge.mapName`): the entities'
    /// tables, the tables their references name, and the tables a join table's links name.
    var mappedTables: [String] {
        let named = entities.flatMap { $0.fields.compactMap(\.reference) } + joinTables.flatMap { [$0.sourceTable, $0.destinationTable] }
        return Array(Set(entities.map(\.table) + named)).sorted()
    }

    /// Every column that holds a `Z_PK`, by table: the destination's table.
    func references(in table: String) -> [String: String] {
        var found: [String: String] = [:]
        for entity in entities where entity.table == table {
            for field in entity.fields { if let reference = field.reference { found[field.column] = reference } }
        }
        return found
    }
}

// MARK: Built from a store's description

extension MergeLayout {
    /// The layout of a store of an app profile's version (TimeQuest's): one table per entity,
    /// identity from what the profile gave the version (natural keys, a singleton and its merge
    /// rules: `AppProfile.identities`).
    init(version: ModelVersion) throws {
        let tables = try ModelTables(model: version.compiled)
        var plans: [EntityPlan] = []
        for entity in version.entities {
            guard let tableName = tables.table(for: entity.name)?.name else { continue }
            var fields: [Field] = []
            for (property, column) in tables.propertyColumns(of: entity.name) {
                if let attribute = entity.attribute(named: property) {
                    fields.append(Field(name: property, column: column.name, kind: version.declaredKind(of: attribute, in: entity.name)))
                } else if let relationship = entity.relationship(named: property),
                    let destination = tables.table(for: relationship.destination)
                {
                    fields.append(Field(name: property, column: column.name, reference: destination.name))
                }
            }
            let cloudID = entity.cloudID.flatMap {
                version.declaredKind(of: $0, in: entity.name) == .string ? tables.column(for: [$0.name], of: entity.name)?.name : nil
            }
            var keys: [IdentityKey] = []
            if let cloudID {
                keys.append(
                    IdentityKey(
                        kind: .cloudID, properties: [CompiledEntity.cloudIDAttribute], fields: fields.filter { $0.column == cloudID }))
            }
            let identity = version.identity(of: entity.name)
            let natural = identity.naturalKey.compactMap { name in fields.first { $0.name == name } }
            if !natural.isEmpty, natural.count == identity.naturalKey.count {
                keys.append(IdentityKey(kind: .naturalKey, properties: identity.naturalKey, fields: natural))
            }
            plans.append(
                EntityPlan(
                    name: entity.name, table: tableName, number: nil, isRoot: true, fields: fields, keys: keys,
                    isSingleton: identity.singletonCloudID != nil, rules: identity.merge, cloudIDColumn: cloudID))
        }
        self.init(entities: plans, joinTables: [])
        addContentKeys()
        orderParentsFirst()
    }

    /// The layout of a store its own model describes: sub-entities share their root's table (told
    /// apart by `Z_ENT`), many-to-many links live in join tables, a to-many without an inverse in
    /// a hidden column on the destination's rows; identity from `cloudID` and the model's
    /// uniqueness constraints.
    init(model: CompiledModel, layout: ModelLayout) {
        var plans: [EntityPlan] = []
        var joins: [JoinTable] = []
        var notes: [String] = []
        let tableOf = Dictionary(layout.entities.map { ($0.name, $0.table) }, uniquingKeysWith: { first, _ in first })
        func isKind(_ name: String, of ancestor: String) -> Bool { model.lineage(of: name).contains { $0.name == ancestor } }
        for plan in layout.entities {
            var fields = plan.fields.map { Field(name: $0.path.joined(separator: "."), column: $0.column, kind: $0.kind) }
            fields += plan.toOne.map { Field(name: $0.name, column: $0.column, reference: tableOf[$0.destination]) }
            // The hidden column a to-many without an inverse keeps on this entity's rows.
            for source in layout.entities {
                for link in source.toMany where isKind(plan.name, of: link.destination) {
                    if case .destinationColumn(let table, let column) = link.storage, table == plan.table {
                        fields.append(Field(name: "\(source.name).\(link.name)", column: column, reference: source.table))
                    }
                }
            }
            for link in plan.toMany {
                if case .joinTable(let table, let sourceColumn, let destinationColumn) = link.storage,
                    let destinationTable = tableOf[link.destination], !joins.contains(where: { $0.name == table })
                {
                    joins.append(
                        JoinTable(
                            name: table, entity: plan.name, relationship: link.name, sourceColumn: sourceColumn, sourceTable: plan.table,
                            destinationColumn: destinationColumn, destinationTable: destinationTable))
                }
            }
            let cloudID = plan.fields.first { $0.path == [CompiledEntity.cloudIDAttribute] && $0.kind == .string }?.column
            var keys: [IdentityKey] = []
            if let cloudID {
                keys.append(
                    IdentityKey(
                        kind: .cloudID, properties: [CompiledEntity.cloudIDAttribute], fields: fields.filter { $0.column == cloudID }))
            }
            for tuple in model.lineage(of: plan.name).flatMap(\.uniqueTuples) {
                let parts = tuple.compactMap { name in fields.first { $0.name == name } }
                if parts.count == tuple.count {
                    keys.append(IdentityKey(kind: .uniqueness, properties: tuple, fields: parts))
                } else {
                    notes.append(
                        "\(plan.name)'s uniqueness constraint (\(tuple.joined(separator: ", "))) names a property without a column of its own: not used to match records"
                    )
                }
            }
            // A one-to-one names one record on each side: the partner of a matched record is matched.
            let relationships = model.lineage(of: plan.name).flatMap(\.relationships)
            for toOne in plan.toOne {
                guard let relationship = relationships.first(where: { $0.name == toOne.name }), let inverse = relationship.inverse,
                    model.lineage(of: relationship.destination).flatMap(\.relationships).contains(where: {
                        $0.name == inverse && !$0.isToMany
                    }),
                    let field = fields.first(where: { $0.column == toOne.column })
                else { continue }
                keys.append(IdentityKey(kind: .oneToOne, properties: [toOne.name], fields: [field]))
            }
            plans.append(
                EntityPlan(
                    name: plan.name, table: plan.table, number: plan.number,
                    isRoot: model.entity(named: plan.name)?.superentity == nil, fields: fields, keys: keys,
                    isSingleton: false, rules: [:], cloudIDColumn: cloudID))
        }
        self.init(entities: plans, joinTables: joins.sorted { $0.name < $1.name }, notes: notes)
        addContentKeys()
        orderParentsFirst()
    }

    /// An entity nothing identifies is matched by content: every value, and every to-one whose
    /// destination is matched before it. So are, last, the records no other key matched (a NULL
    /// in a key's column identifies nothing, yet the record may be the store's own).
    private mutating func addContentKeys() {
        var byContent: [String] = []
        for index in entities.indices where !entities[index].isSingleton {
            let entity = entities[index]
            let parts = entity.fields.filter { $0.reference == nil || $0.reference != entity.table }
            if entity.keys.isEmpty { byContent.append(entity.name) }
            entities[index].keys.append(IdentityKey(kind: .content, properties: parts.map(\.name), fields: parts))
        }
        if !byContent.isEmpty {
            notes.append(
                "no cloudID, uniqueness constraint or natural key identifies \(byContent.sorted().joined(separator: ", ")): their records are matched when every value and to-one is equal"
            )
        }
    }

    /// Entities whose records are named by others' keys first, so a key that names a parent
    /// compares the parent's record in the store. In a cycle (a one-to-one keeps a foreign key on
    /// both sides) the first entity left, alphabetically, goes next, its content key without the
    /// references that cannot be compared yet.
    private mutating func orderParentsFirst() {
        var ordered: [EntityPlan] = []
        var remaining = entities.sorted { $0.name < $1.name }
        while !remaining.isEmpty {
            func comparable(_ field: Field, of entity: EntityPlan) -> Bool {
                guard let reference = field.reference, reference != entity.table else { return true }
                return !remaining.contains { $0.table == reference && $0.name != entity.name }
            }
            if let ready = remaining.firstIndex(where: { entity in entity.keys.flatMap(\.fields).allSatisfy { comparable($0, of: entity) } }
            ) {
                ordered.append(remaining.remove(at: ready))
                continue
            }
            var next = remaining.removeFirst()
            for index in next.keys.indices where next.keys[index].kind == .content {
                next.keys[index].fields = next.keys[index].fields.filter { comparable($0, of: next) }
                next.keys[index].properties = next.keys[index].fields.map(\.name)
            }
            ordered.append(next)
        }
        entities = ordered
    }
}
