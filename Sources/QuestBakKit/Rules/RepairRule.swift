import CoreDataStore
import QuestBakArchive

/// What one entry of a repair rule did to the record it names. The migration verifier reads
/// these to tell a reported repair from data loss, so a rule that declares its effects needs no
/// change anywhere else.
enum RepairEffect: String, Sendable, CaseIterable {
    /// Set the entry's `field` of a record that stays: an orphaned relationship cleared, a merged
    /// or default value, a cloudID carried over from a dropped duplicate.
    case changesField
    /// Removed the whole record; the entry names no field and holds the record as it was.
    case removesRecord
    /// Pointed the entry's to-one relationship `field` of a record that stays at another record
    /// (the keeper of the duplicate it pointed at).
    case repointsRelationship
    /// Gave the record a new cloudID (none, malformed or repeated before; `kind` says whether a
    /// repair or a migration). Not excused by the verifier: a cloudID the old store had must
    /// survive a migration unchanged, and one it lacked is not compared.
    case assignsCloudID

    /// Whether the verifier accepts a changed value of the entry's field as reported.
    var changesReportedField: Bool { self == .changesField || self == .repointsRelationship }
}

/// One kind of entry a rule writes to the log, and what such an entry did.
struct RepairRuleEffect: Hashable, Sendable {
    var logged: RepairEntry.Rule
    var effect: RepairEffect

    init(_ logged: RepairEntry.Rule, _ effect: RepairEffect) {
        self.logged = logged
        self.effect = effect
    }
}

/// When a rule runs in a restore.
enum RepairPhase: Sendable {
    /// As the records are restored, finished once they are all in: with or without `--validate`,
    /// because what it mends cannot be stored as it was (a duplicate a unique index refuses).
    case restoring
    /// A pass over the written store, only when a restore repairs (`--validate`), and in a migration.
    case repairing
}

/// A validation and repair pass over a store being written (`RepairContext`), driven by the
/// store's model (its one layout) and, where an app profile applies, the profile's identity data.
///
/// Adding a rule is a new type in its own file plus one line in `RepairPipeline.rules`: the
/// pipeline applies the list in order, and the migration verifier reads the effects from it.
protocol RepairRule: Sendable {
    /// Every kind of entry the rule logs, with what it did to the record it names.
    var effects: [RepairRuleEffect] { get }
    /// When it runs; `.repairing` unless the rule says otherwise.
    var phase: RepairPhase { get }
    /// The fields of `entity`'s records the rule may change: what its entries' `field` may be.
    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String>
    /// Applies the rule to the whole store, logging every change; returns notes on what it left
    /// alone (a value the model gives no default).
    @discardableResult
    func apply(in context: RepairContext) throws -> [String]
}

extension RepairRule {
    var phase: RepairPhase { .repairing }
}
