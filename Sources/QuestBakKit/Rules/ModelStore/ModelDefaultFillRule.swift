import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// A non-optional attribute with no value gets the model's default: the concrete value SwiftData
/// archived when the model was built. Where the model has none, nothing is guessed: the value
/// stays empty and a note says where. A `cloudID` is left to `ModelCloudIDRule`.
struct ModelDefaultFillRule: ModelRepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.defaultFill, .changesField)] }
    var phase: ModelRepairPhase { .repairing }

    func apply(in context: ModelRepairContext) throws -> [String] {
        var notes: [String] = []
        for plan in context.layout.entities {
            for field in plan.fields where !field.isOptional && field.path != [Entity.cloudIDAttribute] {
                let condition = "Z_ENT = \(plan.number) AND \(field.column) IS NULL"
                let missing = try Int64.fetchAll(context.db, sql: "SELECT Z_PK FROM \(plan.table) WHERE \(condition) ORDER BY Z_PK")
                guard !missing.isEmpty else { continue }
                let name = field.path.joined(separator: ".")
                guard let stored = field.defaultValue else {
                    notes.append(
                        "\(plan.name).\(name) is empty in \(missing.count) record(s) and the model gives it no default: left empty")
                    continue
                }
                let value = (try? ValueCoding.decode(stored, as: field.kind)) ?? stored.reportable
                for primaryKey in missing {
                    try context.log.record(
                        RepairEntry(
                            rule: .defaultFill, kind: .repair, entity: plan.name, primaryKey: primaryKey, cloudID: nil, field: name,
                            old: .value(.null), new: .value(value)))
                }
                try ExactSQL.execute(context.db, sql: "UPDATE \(plan.table) SET \(field.column) = ? WHERE \(condition)", [stored])
            }
        }
        return notes
    }
}
