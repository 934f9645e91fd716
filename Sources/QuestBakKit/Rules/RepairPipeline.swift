import CoreDataStore
import QuestBakArchive

/// The repair rules in the order they run, and the one place that runs them. The migration
/// verifier reads the same list to tell reported repairs from data loss, so a new rule is a new
/// `RepairRule` type plus one line here.
enum RepairPipeline {
    /// Orphans first (a dangling key must not join a duplicate group), then duplicates entity by
    /// entity with parents first, then singleton merges, then defaults (a kept record's missing
    /// value), then cloudIDs (a child's ID names its parent's final one).
    static let rules: [any RepairRule] = [
        OrphanRule(),
        DuplicateRule(),
        SingletonMergeRule(),
        DefaultFillRule(),
        CloudIDRule(),
    ]

    /// Applies `rules` in order, then gives every log entry its record's final cloudID.
    static func run(in context: RepairContext, rules: [any RepairRule] = rules) throws {
        for rule in rules { try rule.apply(in: context) }
        try context.finalizeLog()
    }
}
