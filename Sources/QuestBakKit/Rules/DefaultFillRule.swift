import CoreDataStore
import GRDB
import QuestBakArchive

/// A missing non-optional value gets its property's default: first the app profile's symbolic
/// one (the profile's version, else the defaults version; `Date.now` is the context's `now`), then
/// the model's concrete one (the value SwiftData archived when the model was built). cloudIDs are
/// left to `CloudIDRule`.
///
/// Where neither gives a default, what happens depends on who describes the entity: an entity of
/// an app profile's schema is an error (`RepairError.noDefault`), not a guess, because the profile
/// states every default its app has; an entity only its own model describes keeps the value empty
/// and a note says where, because a model need not give one and its app opened the store so.
struct DefaultFillRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.defaultFill, .changesField)] }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        Set(entity.attributes.filter { !$0.isOptional && $0.name != CompiledEntity.cloudIDAttribute }.map(\.name))
    }

    func apply(in context: RepairContext) throws -> [String] {
        var notes: [String] = []
        for plan in context.entities {
            let described = context.profileEntity(plan)
            for field in plan.fields where !field.isOptional && field.path != [CompiledEntity.cloudIDAttribute] {
                // A column the restore bound no null to (nor anything SQLite stores as one) has
                // none: no rule before this one leaves a required attribute empty.
                if let inserted = context.inserted, !inserted.mayHaveNull(in: field.column, of: plan, log: context.log) { continue }
                let condition = "\(CoreDataSQL.entityColumn) = \(plan.number) AND \(field.column) IS NULL"
                // Counted here and read one by one below, never held: after a migration every
                // record can miss a value, millions of them.
                let missing = try Int.fetchOne(context.db, sql: "SELECT count(*) FROM \(plan.table) WHERE \(condition)") ?? 0
                guard missing > 0 else { continue }
                let name = field.path.joined(separator: ".")
                let fill: (value: Value, stored: StoredValue)
                switch profileDefault(for: field, of: plan, described: described, context: context) {
                case .value(let value)?:
                    fill = (value, ValueCoding.encode(value))
                case .newUUIDString?:
                    continue  // a generated UUID is a cloudID's, and cloudIDs have a rule of their own
                case .now?:
                    let value = Value.date(context.now)
                    fill = (value, ValueCoding.encode(value))
                case nil:
                    if let stored = field.defaultValue {
                        fill = ((try? ValueCoding.decode(stored, as: field.kind)) ?? stored.reportable, stored)
                    } else if described?.attribute(named: name) != nil {
                        throw RepairError.noDefault(entity: plan.name, property: name)
                    } else {
                        notes.append(
                            "\(plan.name).\(name) is empty in \(missing) record(s) and the model gives it no default: left empty")
                        continue
                    }
                }
                let key = CoreDataSQL.keyColumn
                let keys = try Int64.fetchCursor(context.db, sql: "SELECT \(key) FROM \(plan.table) WHERE \(condition) ORDER BY \(key)")
                while let primaryKey = try keys.next() {
                    try context.log.record(
                        RepairEntry(
                            rule: .defaultFill, kind: .repair, entity: plan.name, primaryKey: primaryKey, cloudID: nil, field: name,
                            old: .value(.null), new: .value(fill.value)))
                }
                try ExactSQL.execute(context.db, sql: "UPDATE \(plan.table) SET \(field.column) = ? WHERE \(condition)", [fill.stored])
            }
        }
        FaultPoint.reached("defaults filled")
        return notes
    }

    /// The profile's default of the field's attribute: its version's, else the defaults version's.
    func profileDefault(
        for field: ModelLayout.Field, of plan: ModelLayout.EntityPlan, described: CompiledEntity?, context: RepairContext
    ) -> DefaultValue? {
        guard let described, field.path.count == 1, let attribute = described.attribute(named: field.path[0]) else { return nil }
        if let declared = context.profile?.defaultValue(of: attribute, in: plan.name) { return declared }
        guard let defaults = context.defaults, let fallback = defaults.entity(named: plan.name)?.attribute(named: attribute.name) else {
            return nil
        }
        return defaults.defaultValue(of: fallback, in: plan.name)
    }
}
