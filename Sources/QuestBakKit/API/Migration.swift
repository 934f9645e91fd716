import Foundation

extension QuestBak {
    /// How ``QuestBak/migrate(store:toModelOf:output:options:progress:)`` and
    /// ``QuestBak/migrate(store:toVersion:of:output:options:progress:)`` migrate.
    public struct MigrateOptions: Sendable {
        /// Stores of the app's models between the store's and the new one, oldest first: the
        /// migration goes through each in turn, as Core Data's staged migration would. Empty: one
        /// step.
        public var through: [URL] = []
        /// What `Date.now` defaults of new properties become. nil: now.
        public var now: Date?
        /// Repairs that make identifiers give random ones rather than ones derived from the record.
        public var randomIdentifiers = false
        /// Where to write every change the migration made, one JSON object a line.
        public var repairLog: URL?

        /// Options with every default: one step, now.
        public init() {}

        /// The engine's options for one migration: in place when there is no output.
        func engineOptions(inPlace: Bool, progress: ProgressHandler?, cancellation: Cancellation) -> Migrator.Options {
            var migrate = Migrator.Options(now: (now ?? Date()).timeIntervalSinceReferenceDate)
            migrate.randomIDs = randomIdentifiers
            migrate.inPlace = inPlace
            migrate.backupStamp = QuestBak.backupStamp(Date())
            migrate.progress = progress
            migrate.cancellation = cancellation
            return migrate
        }
    }

    /// How ``QuestBak/gateMigration(fixtures:toModelOf:options:report:)`` checks.
    public struct GateOptions: Sendable {
        /// Stores of the app's models between the fixtures' and the new one, oldest first. nil:
        /// the chain the fixtures folder's manifest names, if any.
        public var through: [URL]?
        /// Write each fixture's golden dump instead of comparing with it (never in CI).
        public var record = false

        /// Options with every default: the fixtures' own chain, comparing.
        public init() {}
    }

    /// What a migration gate found: one check per fixture and question.
    public struct GateResult: Sendable {
        /// Every check made, in order.
        public var checks: [GateCheck]
        /// Whether the gate passes: at least one check was made, and every one passed (a gate that
        /// checked nothing must not pass).
        public var passed: Bool { !checks.isEmpty && checks.allSatisfy(\.passed) }
    }

    /// Migrates the store at `store` to the model of `newStore` (a store the app's new build
    /// made), the lightweight migration Core Data makes when the new build opens an old store,
    /// then the fixes the app would need on first launch, each counted in the result.
    ///
    /// - Parameters:
    ///   - store: The store to migrate.
    ///   - newStore: A store the app's new build made, which carries the new model.
    ///   - output: Where the migrated store is written, atomically. nil: in place, the old store
    ///     kept beside it as `<store>.questbak-backup-<time>`.
    ///   - options: A chain of models between, what `Date.now` defaults become, the change log.
    ///   - progress: Told each entity's records once they are copied.
    /// - Throws: ``QuestBakError``: `.invalidInput` when the change is not lightweight or the new
    ///   model refuses records, `.outputExists` for an existing output, `.cancelled` when the task
    ///   is cancelled (and then no output and no temporary file is left).
    @discardableResult
    public static func migrate(
        store: URL, toModelOf newStore: URL, output: URL?, options: MigrateOptions = MigrateOptions(),
        progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> MigrateResult {
        try await perform { workDirectory, cancellation in
            let migrate = options.engineOptions(inPlace: output == nil, progress: progress, cancellation: cancellation)
            let repairLog = try RepairLogOutput.open(options.repairLog)
            let result = try ModelMigrator.migrate(
                storeAt: store, through: options.through, toModelOf: newStore, output: output, options: migrate,
                workDirectory: workDirectory)
            try repairLog?.write(result.earlierLogs + [result.log])
            return result
        }
    }

    /// Migrates the store at `store`, a store of a version of one of the app profiles in
    /// `schemas` (TimeQuest's), to that profile's version `version`: the migration of
    /// ``QuestBak/migrate(store:toModelOf:output:options:progress:)`` with the profile's model of
    /// that version as the target (new properties get the version's defaults, `Date.now` ones
    /// `options.now`), then the profile's repairs (every record its own cloud identifier, one
    /// record of a singleton, …), each counted in the result.
    ///
    /// - Parameters:
    ///   - store: The store to migrate.
    ///   - version: The profile's version to migrate to, such as `"2.0.0"`.
    ///   - schemas: The app profiles the store may be a version of (`.timeQuest`).
    ///   - output: Where the migrated store is written, atomically. nil: in place, the old store
    ///     kept beside it as `<store>.questbak-backup-<time>`.
    ///   - options: What `Date.now` defaults become, the change log (`through` is for a new
    ///     build's model: a profile's versions are one step apart).
    ///   - progress: Told each entity's records once they are copied, then the repairs.
    /// - Throws: ``QuestBakError``: `.usage` for a version none of the profiles has, `.invalidInput`
    ///   for a store of none of their versions or a change that is not lightweight,
    ///   `.outputExists` for an existing output, `.cancelled` when the task is cancelled;
    ///   `.usage` also for `options.through` given (a profile's versions are one step apart).
    @discardableResult
    public static func migrate(
        store: URL, toVersion version: String, of schemas: KnownSchemas, output: URL?, options: MigrateOptions = MigrateOptions(),
        progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> MigrateResult {
        guard options.through.isEmpty else {
            // A profile's versions are one step apart: a chain given here would be ignored.
            throw QuestBakError(
                .usage, message: "a migration to a profile's version is one step: MigrateOptions.through is for a new build's model",
                underlying: MigrationUsageError.chainToAVersion)
        }
        return try await perform { workDirectory, cancellation in
            guard let profile = schemas.profiles.first(where: { $0.version(version) != nil }), let target = profile.version(version)
            else {
                throw ImportError.unknownTargetVersion(version: version, supported: schemas.schemas.map(\.versionIdentifier))
            }
            let migrate = options.engineOptions(inPlace: output == nil, progress: progress, cancellation: cancellation)
            let repairLog = try RepairLogOutput.open(options.repairLog)
            let result = try ModelMigrator.migrate(
                storeAt: store, toVersion: target, candidates: profile.versions, output: output, options: migrate,
                workDirectory: workDirectory)
            try repairLog?.write([result.log])
            return result
        }
    }

    /// The migration gate for CI: every fixture store in `fixtures` (store files in it or one
    /// folder down) is migrated to the model of `newStore` and checked against its committed
    /// golden dump, against invariants that need no golden file, and through a backup → restore →
    /// backup round trip.
    ///
    /// Failing checks are a result, not an error: see ``GateResult/passed``.
    ///
    /// - Parameters:
    ///   - fixtures: The folder of fixture stores made by the app's earlier builds.
    ///   - newStore: A store the app's new build made, which carries the new model.
    ///   - options: A chain of models between, and whether to record golden dumps.
    ///   - report: Told each check as it is made.
    /// - Throws: ``QuestBakError``: `.missingInput` for a missing folder or store, `.cancelled`
    ///   when the task is cancelled before the gate starts.
    public static func gateMigration(
        fixtures: URL, toModelOf newStore: URL, options: GateOptions = GateOptions(),
        report: (@Sendable (GateCheck) -> Void)? = nil
    ) async throws(QuestBakError) -> GateResult {
        try await perform { workDirectory, _ in
            let target = ModelVersion(compiled: try CompiledModel.model(ofStoreAt: newStore))
            var verifier = MigrationVerifier(fixtures: fixtures, target: target, candidates: [target])
            verifier.modelStore = newStore
            verifier.modelChain = try options.through ?? FixtureSet(folder: fixtures).chain()
            verifier.record = options.record
            return GateResult(checks: try verifier.run(workDirectory: workDirectory) { report?($0) })
        }
    }
}

/// A call of the migration API that contradicts itself (the underlying error of a `.usage`
/// ``QuestBakError``).
enum MigrationUsageError: Error {
    /// A chain of models given for a migration to a profile's version.
    case chainToAVersion
}
