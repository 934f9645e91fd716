import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What every repair rule works on: a store being written (inside its transaction), the one
/// layout of its model (tables, entity numbers, columns, links), the app profile's identity data
/// where a profile applies, the inputs that make a repair reproducible, and the log every change
/// goes to. Rules run as SQL, so the work needs memory for one record or one duplicate group at a
/// time, not for the whole store.
struct RepairContext {
    let db: Database
    /// Where every entity's rows, columns and links are.
    let layout: ModelLayout
    let model: CompiledModel
    /// The app profile's version of the store, when one applies: its natural keys, singleton and
    /// merge rules (`ModelVersion.identities`), its symbolic defaults, the kinds a model does not
    /// say (`Routine.activeDays`), and the order entries are reported in. Nil for a store only its
    /// own model describes.
    let profile: ModelVersion?
    /// Where defaults the profile's version lacks come from (the newest version knows them all).
    let defaults: ModelVersion?
    /// What `Date.now` defaults resolve to, in seconds since 2001: the archive's creation time
    /// or `--now`, never the clock, so an import is reproducible.
    let now: Double
    let randomIDs: Bool
    /// `.migration` when the source had no cloudIDs of its own (V1 going to V2), or a migration
    /// left one shared value: then every cloudID given is part of the migration, not a repair.
    let cloudIDKind: RepairEntry.Kind
    let log: RepairLog
    /// The store or archive being repaired, for error messages.
    let path: String
    /// Names the store in cloudIDs made for an entity no profile describes, so one archive
    /// restored twice gets the same IDs.
    let storeUUID: String
    /// Records of one natural key whose cloudIDs differ stay distinct (the behaviour before the
    /// identity rule): off by default, since sync and reinstalls copy records under fresh UUIDs.
    var keepDistinctIDs = false
    /// cloudIDs a lightweight migration gave every record of an entity (Core Data binds one
    /// `UUID().uuidString` for all): they identify no record, so each record gets the cloudID made
    /// from its natural key, as a record without one does.
    var sharedCloudIDs: Set<String> = []
    /// What the restore saw of the values it inserted, when the store was just restored: a rule
    /// skips its check of an entity where these say it can find nothing. Nil: every check runs.
    var inserted: InsertedValues?
    /// The layout's entities in the order rules visit and report them: the profile's order where
    /// one applies (each entity's fields and to-ones too), else the layout's (by name).
    let entities: [ModelLayout.EntityPlan]

    init(
        db: Database, layout: ModelLayout, model: CompiledModel, profile: ModelVersion? = nil, defaults: ModelVersion? = nil,
        now: Double = 0,
        randomIDs: Bool = false, cloudIDKind: RepairEntry.Kind = .repair, log: RepairLog, path: String, storeUUID: String = "",
        keepDistinctIDs: Bool = false, sharedCloudIDs: Set<String> = []
    ) {
        self.db = db
        self.layout = layout
        self.model = model
        self.profile = profile
        self.defaults = defaults
        self.now = now
        self.randomIDs = randomIDs
        self.cloudIDKind = cloudIDKind
        self.log = log
        self.path = path
        self.storeUUID = storeUUID
        self.keepDistinctIDs = keepDistinctIDs
        self.sharedCloudIDs = sharedCloudIDs
        entities = Self.reportOrder(layout.entities, profile: profile)
    }

    /// The context of a store of an app profile's version (a restored format 1 or 2 archive, or
    /// a migrated copy): its layout is the version's model read against the store.
    /// `entityNumbers` number the entities of a store whose `Z_PRIMARYKEY` is not written yet (a
    /// fixture writer's, `StoreWriter.Sink.entityNumbers`); nil reads them from the store.
    init(
        db: Database, version: ModelVersion, entityNumbers: [String: Int64]? = nil, defaults: ModelVersion, now: Double,
        randomIDs: Bool, cloudIDKind: RepairEntry.Kind, log: RepairLog, path: String, keepDistinctIDs: Bool = false,
        sharedCloudIDs: Set<String> = []
    ) throws {
        let model = version.compiled
        let layout = try ModelLayout(db, model: model, checkRows: false, entityNumbers: entityNumbers)
        // The rules need every entity's plan; a column the version does not explain (another
        // tool's) is no reason to refuse the repair, as it was not before the rules read the layout.
        if let missing = version.entities.first(where: { layout.entity(named: $0.name) == nil }) {
            let reason = layout.problems.first ?? "entity \(missing.name) has no table"
            throw StoreError.noModel(path: path, reason: "its schema \(version.versionIdentifier) does not explain the store: \(reason)")
        }
        // Nor may a property of the version lack its column: a rule that cannot find a natural
        // key, a cloudID or a required value's column would skip it without a word.
        for entity in version.entities {
            guard let plan = layout.entity(named: entity.name) else { continue }
            // Placed: laid out, and the column is in the store (a layout unchecked against rows
            // names its columns whether or not the store has them).
            let present = Set(try db.columns(in: plan.table).map { $0.name.uppercased() })
            let placed = Set(
                plan.fields.filter { present.contains($0.column.uppercased()) }.compactMap(\.path.first)
                    + plan.toOne.filter { present.contains($0.column.uppercased()) }.map(\.name))
            let stored =
                entity.attributes.filter { !$0.isComposite || !$0.elements.isEmpty }.map(\.name)
                + entity.toOneRelationships.map(\.name)
            if let lost = stored.first(where: { !placed.contains($0) }) {
                let reason = layout.problems.first.map { " (\($0))" } ?? ""
                throw StoreError.noModel(
                    path: path,
                    reason:
                        "its schema \(version.versionIdentifier) does not explain the store: \(entity.name).\(lost) has no column\(reason)")
            }
        }
        self.init(
            db: db, layout: layout, model: model, profile: version, defaults: defaults, now: now, randomIDs: randomIDs,
            cloudIDKind: cloudIDKind, log: log, path: path, keepDistinctIDs: keepDistinctIDs, sharedCloudIDs: sharedCloudIDs)
    }

    /// The plans in the profile's entity order, each plan's fields and to-ones in the profile's
    /// property order (the order its repairs were always reported in); others keep the layout's.
    private static func reportOrder(_ plans: [ModelLayout.EntityPlan], profile: ModelVersion?) -> [ModelLayout.EntityPlan] {
        guard let profile else { return plans }
        return inOrder(plans, of: profile.entities.map(\.name), by: \.name).map { plan in
            guard let entity = profile.entity(named: plan.name) else { return plan }
            var plan = plan
            plan.fields = inOrder(plan.fields, of: entity.attributes.map(\.name)) { $0.path[0] }
            plan.toOne = inOrder(plan.toOne, of: entity.relationships.map(\.name), by: \.name)
            return plan
        }
    }

    /// `items` ordered as their names are in `names`; those not named keep their order, after.
    private static func inOrder<Item>(_ items: [Item], of names: [String], by name: (Item) -> String) -> [Item] {
        let rank = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return items.enumerated().sorted { lhs, rhs in
            (rank[name(lhs.element)] ?? names.count, lhs.offset) < (rank[name(rhs.element)] ?? names.count, rhs.offset)
        }.map(\.element)
    }
}

// MARK: Shared by the rules

extension RepairContext {
    /// The profile's description of `plan`'s entity, when a profile applies to it.
    func profileEntity(_ plan: ModelLayout.EntityPlan) -> CompiledEntity? { profile?.entity(named: plan.name) }

    /// The profile's identity of an entity (natural key, singleton, merge rules); none without a profile.
    func identity(of entity: String) -> Identity { profile?.identity(of: entity) ?? Identity() }

    func plan(named name: String) -> ModelLayout.EntityPlan? { entities.first { $0.name == name } }

    /// The column of a top-level attribute or to-one relationship of `plan`.
    func column(_ property: String, of plan: ModelLayout.EntityPlan) -> String? {
        plan.fields.first { $0.path == [property] }?.column ?? plan.toOne.first { $0.name == property }?.column
    }

    /// The rows of `plan`'s entity (sub-entities share their root's table), as a `FROM … WHERE …`.
    func rows(of plan: ModelLayout.EntityPlan) -> String { "FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)" }

    /// Entities with parents before children, so keys that mention a parent see its final state.
    var entitiesParentsFirst: [ModelLayout.EntityPlan] {
        var ordered: [ModelLayout.EntityPlan] = []
        var placed: Set<String> = []
        while ordered.count < entities.count {
            let before = ordered.count
            for plan in entities where !placed.contains(plan.name) {
                let parents = plan.toOne.map(\.destination).filter { $0 != plan.name }
                if parents.allSatisfy(placed.contains) {
                    ordered.append(plan)
                    placed.insert(plan.name)
                }
            }
            if ordered.count == before {  // a cycle: keep the remaining ones in their order
                ordered += entities.filter { !placed.contains($0.name) }
                break
            }
        }
        return ordered
    }

    /// The entity numbers of `entity` and its sub-entities: the rows a relationship to it may name.
    func numbers(ofSubtree entity: String) -> [Int64] {
        var names: Set<String> = [entity]
        var changed = true
        while changed {
            changed = false
            for candidate in model.entities where !names.contains(candidate.name) {
                if let parent = candidate.superentity, names.contains(parent) {
                    names.insert(candidate.name)
                    changed = true
                }
            }
        }
        return layout.entities.filter { names.contains($0.name) }.map(\.number).sorted()
    }

    /// SQL that is true when `expression` is the `Z_PK` of a record of `entity` (or a sub-entity).
    func existsSQL(_ expression: String, in entity: String) -> String? {
        guard let table = layout.entity(named: entity)?.table else { return nil }
        let numbers = numbers(ofSubtree: entity).map(String.init).joined(separator: ", ")
        return
            "EXISTS (SELECT 1 FROM \(table) t WHERE t.\(CoreDataSQL.keyColumn) = \(expression) AND t.\(CoreDataSQL.entityColumn) IN (\(numbers)))"
    }

    /// An empty scratch table of (duplicate, keeper, carried cloudID) pairs, in SQLite's temp schema.
    func resetPairs() throws {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_pairs (duplicate INTEGER PRIMARY KEY, keeper INTEGER, carried TEXT)")
        try db.execute(sql: "DELETE FROM temp.questbak_pairs")
    }

    /// Removes every duplicate in `temp.questbak_pairs` (reported in full, `dedup`), after
    /// pointing its children at its keeper (`repoint`) and giving the keeper the cloudID the
    /// duplicate carried over, if any (`merge`).
    func applyDuplicatePairs(of plan: ModelLayout.EntityPlan) throws {
        let pairs = try Row.fetchAll(db, sql: "SELECT duplicate, keeper, carried FROM temp.questbak_pairs ORDER BY duplicate")
        guard !pairs.isEmpty else { return }
        let children = entities.flatMap { child in
            child.toOne.filter { $0.destination == plan.name }.map { (plan: child, relationship: $0) }
        }
        for pair in pairs {
            let duplicate: Int64 = pair[0]
            let keeper: Int64 = pair[1]
            let dropped = try recordValues(plan, primaryKey: duplicate)
            var cloudID: String?
            if case .string(let text)? = dropped[CompiledEntity.cloudIDAttribute] { cloudID = text }
            try log.record(
                RepairEntry(
                    rule: .dedup, kind: .repair, entity: plan.name, primaryKey: duplicate, cloudID: cloudID,
                    field: nil, old: .record(dropped), new: .value(.integer(keeper))))
            for child in children {
                let column = child.relationship.column
                let moved = try Int64.fetchAll(
                    db, sql: "SELECT \(CoreDataSQL.keyColumn) \(rows(of: child.plan)) AND \(column) = ? ORDER BY \(CoreDataSQL.keyColumn)",
                    arguments: [duplicate])
                for childKey in moved {
                    try log.record(
                        RepairEntry(
                            rule: .repoint, kind: .repair, entity: child.plan.name, primaryKey: childKey, cloudID: nil,
                            field: child.relationship.name, old: .value(.integer(duplicate)), new: .value(.integer(keeper))))
                }
                try db.execute(
                    sql:
                        "UPDATE \(child.plan.table) SET \(column) = ? WHERE \(CoreDataSQL.entityColumn) = \(child.plan.number) AND \(column) = ?",
                    arguments: [keeper, duplicate])
            }
            try db.execute(sql: "DELETE FROM \(plan.table) WHERE \(CoreDataSQL.keyColumn) = ?", arguments: [duplicate])
            if let carried = pair[2] as String?, let column = column(CompiledEntity.cloudIDAttribute, of: plan) {
                let previous = try String.fetchOne(
                    db, sql: "SELECT \(column) FROM \(plan.table) WHERE \(CoreDataSQL.keyColumn) = ?", arguments: [keeper])
                try log.record(
                    RepairEntry(
                        rule: .merge, kind: .repair, entity: plan.name, primaryKey: keeper, cloudID: carried,
                        field: CompiledEntity.cloudIDAttribute, old: .value(previous.map { .string($0) } ?? .null),
                        new: .value(.string(carried))))
                try db.execute(
                    sql: "UPDATE \(plan.table) SET \(column) = ? WHERE \(CoreDataSQL.keyColumn) = ?", arguments: [carried, keeper])
            }
        }
    }

    /// The record's stored values by property, decoded by the profile's kinds (a typed array as
    /// its elements, which the layout of the model reads as bytes), for reporting a dropped
    /// duplicate in full.
    func recordValues(_ plan: ModelLayout.EntityPlan, primaryKey: Int64) throws -> [String: Value] {
        let typed = profile?.typed(plan) ?? plan
        var values: [String: Value] = [:]
        try StoreReader.forEachRecord(db, plan: typed, path: path, where: "\(CoreDataSQL.keyColumn) = ?", [.integer(primaryKey)]) {
            values = $0.values
        }
        values[RecordJSON.primaryKeyKey] = .integer(primaryKey)
        return values
    }

    /// The one value a query returns, decoded as `kind`.
    func storedValue(
        _ sql: String, _ arguments: [StoredValue], entity: String, primaryKey: Int64, property: String, kind: AttributeKind
    ) throws -> Value {
        let stored = try ExactSQL.fetchAll(db, sql: sql, arguments).first?.first ?? .null
        do {
            return try ValueCoding.decode(stored, as: kind)
        } catch let failure as ValueCoding.Failure {
            throw StoreError.undecodableValue(
                path: path, entity: entity, primaryKey: primaryKey, property: property, reason: failure.reason)
        }
    }

    /// Entries were logged before cloudIDs were final; give each surviving record of an entity the
    /// profile describes its final one. (A store only its own model describes is reported as it
    /// always was: its entries name the cloudID only where the cloudID rule gave one.)
    func finalizeLog() throws {
        for plan in entities where profileEntity(plan) != nil {
            guard let cloudColumn = column(CompiledEntity.cloudIDAttribute, of: plan) else { continue }
            let lookup = try db.makeStatement(sql: "SELECT \(cloudColumn) FROM \(plan.table) WHERE \(CoreDataSQL.keyColumn) = ?")
            try log.resolveCloudIDs(entity: plan.name) { try String.fetchOne(lookup, arguments: [$0]) }
        }
    }
}
