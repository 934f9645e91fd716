import CoreDataStore
import GRDB
import QuestBakArchive

/// A singleton's extra records are merged into the lowest `Z_PK` by the schema's merge rules
/// (max XP and streak, latest play date, earliest creation), then removed, their children (if
/// any) re-pointed to the keeper.
struct SingletonMergeRule: RepairRule {
    var effects: [RepairRuleEffect] {
        [
            RepairRuleEffect(.merge, .changesField), RepairRuleEffect(.dedup, .removesRecord),
            RepairRuleEffect(.repoint, .repointsRelationship),
        ]
    }

    func fields(of entity: Entity, in schema: Schema) -> Set<String> {
        var fields = Set(
            entity.toOneRelationships.filter { schema.entity(named: $0.destination)?.identity.singletonCloudID != nil }.map(\.name))
        if entity.identity.singletonCloudID != nil {
            fields.formUnion(entity.identity.merge.keys.filter { entity.attribute(named: $0) != nil })
        }
        return fields
    }

    func apply(in context: RepairContext) throws {
        for entity in context.schema.entities where entity.identity.singletonCloudID != nil {
            try mergeSingleton(entity, in: context)
        }
    }

    func mergeSingleton(_ entity: Entity, in context: RepairContext) throws {
        let db = context.db
        let layout = TableLayout(entity: entity)
        let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(layout.tableName) ORDER BY Z_PK")
        guard let keeper = keys.first, keys.count > 1 else { return }
        for (property, rule) in entity.identity.merge.sorted(by: { $0.key < $1.key }) {
            guard let column = layout.column(for: property)?.name, let attribute = entity.attribute(named: property) else { continue }
            let aggregate = rule == .maximum ? "max" : "min"
            let merged = try context.storedValue(
                "SELECT \(aggregate)(\(column)) FROM \(layout.tableName)", [], entity: entity, primaryKey: keeper, property: property,
                kind: attribute.kind)
            let current = try context.storedValue(
                "SELECT \(column) FROM \(layout.tableName) WHERE Z_PK = ?", [.integer(keeper)], entity: entity, primaryKey: keeper,
                property: property,
                kind: attribute.kind)
            if merged != current {
                try context.log.record(
                    RepairEntry(
                        rule: .merge, kind: .repair, entity: entity.name, primaryKey: keeper, cloudID: nil,
                        field: property, old: .value(current), new: .value(merged)))
                try ExactSQL.execute(
                    db, sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE Z_PK = ?", [ValueCoding.encode(merged), .integer(keeper)])
            }
        }
        try context.resetPairs()
        for duplicate in keys.dropFirst() {
            try db.execute(sql: "INSERT INTO temp.questbak_pairs (duplicate, keeper) VALUES (?, ?)", arguments: [duplicate, keeper])
        }
        try context.applyDuplicatePairs(of: entity)
    }
}
