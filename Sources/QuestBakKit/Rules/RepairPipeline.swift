import CoreDataStore
import QuestBakArchive

/// Every repair rule, registered here and nowhere else, in the order it runs. The migration
/// verifier reads the same lists to tell reported repairs from data loss, so a new rule is a new
/// type in its own file plus one line here (a test fails for a rule type left out).
package enum RepairPipeline {
    /// The rules over a store of an app profile's schema. Orphans first (a dangling key must not
    /// join a duplicate group), then duplicates entity by entity with parents first, then
    /// singleton merges, then defaults (a kept record's missing value), then cloudIDs (a child's
    /// ID names its parent's final one).
    static let rules: [any RepairRule] = [
        OrphanRule(),
        DuplicateRule(),
        SingletonMergeRule(),
        DefaultFillRule(),
        CloudIDRule(),
    ]

    /// The rules over a store its own model describes, in the same order: duplicates as records
    /// are restored (the unique index refuses the later copy), then, with `--validate`, orphans,
    /// defaults and cloudIDs.
    static let modelRules: [any ModelRepairRule] = [
        ModelDuplicateRule(),
        ModelOrphanRule(),
        ModelDefaultFillRule(),
        ModelCloudIDRule(),
    ]

    /// The type name of every registered rule, for the test that finds every rule type declared
    /// under `Rules/` registered here.
    package static var registeredRuleNames: [String] {
        rules.map { String(describing: type(of: $0)) } + modelRules.map { String(describing: type(of: $0)) }
    }

    /// Applies `rules` in order, then gives every log entry its record's final cloudID.
    static func run(in context: RepairContext, rules: [any RepairRule] = rules) throws {
        for rule in rules { try rule.apply(in: context) }
        try context.finalizeLog()
    }
}
