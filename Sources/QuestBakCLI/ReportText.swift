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
            case RepairEntry.Rule.unknownProperty.rawValue: change = "\(entry.field ?? "record") not storable: \(old.prefix(120))"
            default: change = "\(entry.field ?? ""): \(old.prefix(60)) → \(new.prefix(60))"
            }
            return "\(entry.kind) \(entry.rule): \(record) \(change)"
        }
    }
}
