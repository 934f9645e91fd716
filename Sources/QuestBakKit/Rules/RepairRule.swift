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

/// A validation and repair pass, run on a store being written, driven by the schema alone.
///
/// Adding a rule is a new type in its own file plus one line in `RepairPipeline.rules`: the
/// pipeline applies the list in order, and the migration verifier reads the effects from it.
protocol RepairRule: Sendable {
    /// Every kind of entry the rule logs, with what it did to the record it names.
    var effects: [RepairRuleEffect] { get }
    /// The fields of `entity`'s records the rule may change: what its entries' `field` may be.
    func fields(of entity: Entity, in schema: Schema) -> Set<String>
    /// Applies the rule to the whole store, logging every change.
    func apply(in context: RepairContext) throws
}

/// When a rule over a store its own model describes runs in a restore.
enum ModelRepairPhase: Sendable {
    /// As the records are restored, finished once they are all in: with or without `--validate`,
    /// because what it mends cannot be stored as it was (a duplicate a unique index refuses).
    case restoring
    /// A pass over the restored store, only when a restore repairs (`--validate`).
    case repairing
}

/// A validation and repair pass over a store its own model describes (`ModelRepairContext`),
/// driven by the model alone. The twin of `RepairRule` while a store of an app profile's schema is
/// still written by its own path (`Importer.Plan`, `StoreWriter`); a new rule is a new type in its
/// own file plus one line in `RepairPipeline.modelRules`.
protocol ModelRepairRule: Sendable {
    /// Every kind of entry the rule logs, with what it did to the record it names.
    var effects: [RepairRuleEffect] { get }
    var phase: ModelRepairPhase { get }
    /// Applies the rule to the whole store, logging every change; returns notes on what it left
    /// alone (a value the model gives no default).
    func apply(in context: ModelRepairContext) throws -> [String]
}
