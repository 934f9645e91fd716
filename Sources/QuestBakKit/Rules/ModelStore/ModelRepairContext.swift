import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What the repairs of a store described by its own model work on (an archive of another app's
/// store restored with `--validate`): the store being written, inside its transaction, the layout
/// of its model, and the log every change goes to. The rules are driven by the model alone: its
/// relationships, uniqueness constraints, defaults and a `cloudID` attribute where an entity has
/// one, never by an app's name.
struct ModelRepairContext {
    let db: Database
    let layout: ModelLayout
    let model: CompiledModel
    let log: RepairLog
    /// Names the store in generated cloudIDs, so one archive restored twice gets the same IDs.
    let storeUUID: String
    /// `.migration` when the cloudIDs are given as part of a migration (a shared default value
    /// a lightweight migration left), `.repair` when they mend damage.
    var cloudIDKind: RepairEntry.Kind = .repair

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
        return "EXISTS (SELECT 1 FROM \(table) t WHERE t.Z_PK = \(expression) AND t.Z_ENT IN (\(numbers)))"
    }

    /// A record's values by property (`profile.name` for a composite's element), for reporting a
    /// dropped duplicate in full.
    static func reportable(_ row: ModelMemberEncoding.Row, plan: ModelLayout.EntityPlan) -> [String: Value] {
        var values: [String: Value] = [RecordJSON.primaryKeyKey: .integer(row.primaryKey)]
        for (field, stored) in zip(plan.fields, row.values) {
            values[field.path.joined(separator: ".")] = (try? ValueCoding.decode(stored, as: field.kind)) ?? stored.reportable
        }
        for (relationship, stored) in zip(plan.toOne, row.values.dropFirst(plan.fields.count)) {
            values[relationship.name] = stored.reportable
        }
        return values
    }
}
