import QuestBakKit

/// The repair log as text for a terminal: one line an entry.
enum ReportText {
    static func lines(_ entries: [RepairLog.LoggedEntry]) -> [String] {
        entries.map { entry in
            let record = "\(entry.entity) _pk \(entry.primaryKey)" + (entry.cloudID.map { " (\($0))" } ?? "")
            let old = entry.old ?? "null"
            let new = entry.new ?? "null"
            let change: String
            switch entry.rule {
            case RepairEntry.Rule.dedup.rawValue: change = "dropped as a duplicate of _pk \(new)"
            case RepairEntry.Rule.insert.rawValue: change = "inserted (the archive's _pk \(new))"
            case RepairEntry.Rule.fill.rawValue: change = "\(entry.field ?? ""): filled with \(new.prefix(60))"
            // `new` is what the merged store holds, `old` the value that lost.
            case RepairEntry.Rule.conflict.rawValue: change = "\(entry.field ?? ""): kept \(new.prefix(60)), not \(old.prefix(60))"
            case RepairEntry.Rule.supersede.rawValue: change = "the archive's copy had cloudID \(old.prefix(60)), superseded"
            case RepairEntry.Rule.link.rawValue: change = "\(entry.field ?? ""): linked to _pk \(new)"
            case RepairEntry.Rule.dangling.rawValue:
                change = "\(entry.field ?? ""): the archive's reference to _pk \(old) names no record of the archive, left out"
            case RepairEntry.Rule.unknownProperty.rawValue: change = "\(entry.field ?? "record") not storable: \(old.prefix(120))"
            default: change = "\(entry.field ?? ""): \(old.prefix(60)) → \(new.prefix(60))"
            }
            return "\(entry.kind) \(entry.rule): \(record) \(change)"
        }
    }
}
