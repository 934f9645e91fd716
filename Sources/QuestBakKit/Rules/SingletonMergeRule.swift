import CoreDataStore
import GRDB
import QuestBakArchive

/// A singleton's extra records are merged into the lowest `Z_PK` by the profile's merge rules
/// (max XP and streak, latest play date, earliest creation), then removed, their children (if
/// any) re-pointed to the keeper. Singletons and merge rules are the app profile's.
struct SingletonMergeRule: RepairRule {
    var effects: [RepairRuleEffect] {
        [
            RepairRuleEffect(.merge, .changesField), RepairRuleEffect(.dedup, .removesRecord),
            RepairRuleEffect(.repoint, .repointsRelationship),
        ]
    }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        var fields = Set(
            entity.toOneRelationships.filter { version.identity(of: $0.destination).singletonCloudID != nil }.map(\.name))
        if version.identity(of: entity.name).singletonCloudID != nil {
            fields.formUnion(version.identity(of: entity.name).merge.keys.filter { entity.attribute(named: $0) != nil })
        }
        return fields
    }

    func apply(in context: RepairContext) throws -> [String] {
        for plan in context.entities {
            guard let entity = context.profileEntity(plan), context.identity(of: entity.name).singletonCloudID != nil else { continue }
            try mergeSingleton(entity, plan: plan, in: context)
        }
        return []
    }

    func mergeSingleton(_ entity: CompiledEntity, plan: ModelLayout.EntityPlan, in context: RepairContext) throws {
        let db = context.db
        let rows = context.rows(of: plan)
        let keys = try Int64.fetchAll(db, sql: "SELECT \(CoreDataSQL.keyColumn) \(rows) ORDER BY \(CoreDataSQL.keyColumn)")
        guard let keeper = keys.first, keys.count > 1 else { return }
        for (property, rule) in context.identity(of: entity.name).merge.sorted(by: { $0.key < $1.key }) {
            guard let column = context.column(property, of: plan), let attribute = entity.attribute(named: property),
                let kind = context.profile?.declaredKind(of: attribute, in: entity.name)
            else { continue }
            let aggregate = rule == .maximum ? "max" : "min"
            let merged = try context.storedValue(
                "SELECT \(aggregate)(\(column)) \(rows)", [], entity: entity.name, primaryKey: keeper, property: property,
                kind: kind)
            let current = try context.storedValue(
                "SELECT \(column) FROM \(plan.table) WHERE \(CoreDataSQL.keyColumn) = ?", [.integer(keeper)], entity: entity.name,
                primaryKey: keeper,
                property: property,
                kind: kind)
            if merged != current {
                try context.log.record(
                    RepairEntry(
                        rule: .merge, kind: .repair, entity: entity.name, primaryKey: keeper, cloudID: nil,
                        field: property, old: .value(current), new: .value(merged)))
                try ExactSQL.execute(
                    db, sql: "UPDATE \(plan.table) SET \(column) = ? WHERE \(CoreDataSQL.keyColumn) = ?",
                    [ValueCoding.encode(merged), .integer(keeper)])
            }
        }
        try context.resetPairs()
        for duplicate in keys.dropFirst() {
            try db.execute(sql: "INSERT INTO temp.questbak_pairs (duplicate, keeper) VALUES (?, ?)", arguments: [duplicate, keeper])
        }
        try context.applyDuplicatePairs(of: plan)
    }
}
