import CoreDataStore
import QuestBakArchive

/// Every repair rule, registered here and nowhere else, in the order it runs. The migration
/// verifier reads the same list to tell reported repairs from data loss, so a new rule is a new
/// type in its own file plus one line here (a test fails for a rule type left out).
package enum RepairPipeline {
    /// Duplicates a uniqueness constraint refuses, as records are restored; then orphans first (a
    /// dangling key must not join a duplicate group), then natural-key duplicates entity by entity
    /// with parents first, then singleton merges, then defaults (a kept record's missing value),
    /// then cloudIDs (a child's ID names its parent's final one).
    static let rules: [any RepairRule] = [
        UniqueConstraintRule(),
        OrphanRule(),
        DuplicateRule(),
        SingletonMergeRule(),
        DefaultFillRule(),
        CloudIDRule(),
    ]

    /// The type name of every registered rule, for the test that finds every rule type declared
    /// under `Rules/` registered here.
    package static var registeredRuleNames: [String] {
        rules.map { String(describing: type(of: $0)) }
    }

    /// The one entry point of every repair: applies the rules of `phase` in order, then gives every
    /// log entry of an entity the profile describes its record's final cloudID. Returns the
    /// rules' notes on what they left alone.
    @discardableResult
    static func run(in context: RepairContext, phase: RepairPhase = .repairing, rules: [any RepairRule] = rules) throws -> [String] {
        var notes: [String] = []
        for rule in rules where rule.phase == phase { notes += try rule.apply(in: context) }
        try context.finalizeLog()
        return notes
    }
}
