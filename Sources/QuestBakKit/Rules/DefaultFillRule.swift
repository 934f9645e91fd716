import CoreDataStore
import GRDB
import QuestBakArchive

/// A missing non-optional value gets its property-level default: the target schema's, else the
/// defaults schema's; `Date.now` is the context's `now`. A missing value with no default
/// anywhere is an error, not a guess. cloudIDs are left to `CloudIDRule`.
struct DefaultFillRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.defaultFill, .changesField)] }

    func fields(of entity: Entity, in schema: Schema) -> Set<String> {
        Set(entity.attributes.filter { !$0.isOptional && $0.name != Entity.cloudIDAttribute }.map(\.name))
    }

    func apply(in context: RepairContext) throws {
        for entity in context.schema.entities {
            let layout = TableLayout(entity: entity)
            for attribute in entity.attributes where !attribute.isOptional && attribute.name != Entity.cloudIDAttribute {
                guard let column = layout.column(for: attribute.name)?.name else { continue }
                let missing = try Int64.fetchAll(
                    context.db, sql: "SELECT Z_PK FROM \(layout.tableName) WHERE \(column) IS NULL ORDER BY Z_PK")
                guard !missing.isEmpty, let value = try defaultValue(for: attribute, in: entity, context: context) else { continue }
                for primaryKey in missing {
                    try context.log.record(
                        RepairEntry(
                            rule: .defaultFill, kind: .repair, entity: entity.name, primaryKey: primaryKey, cloudID: nil,
                            field: attribute.name, old: .value(.null), new: .value(value)))
                }
                try ExactSQL.execute(
                    context.db, sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE \(column) IS NULL", [ValueCoding.encode(value)])
            }
        }
        FaultPoint.reached("defaults filled")
    }

    func defaultValue(for attribute: Attribute, in entity: Entity, context: RepairContext) throws -> Value? {
        let declared =
            attribute.defaultValue
            ?? context.defaultsSchema.entity(named: entity.name)?.attribute(named: attribute.name)?.defaultValue
        switch declared {
        case .value(let value)?: return value
        case .now?: return .date(context.now)
        case .newUUIDString?: return nil  // cloudIDs have a rule of their own
        case nil: throw RepairError.noDefault(entity: entity.name, property: attribute.name)
        }
    }
}
