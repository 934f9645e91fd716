import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// `questbak migrate`, the one migrator: a store migrated to a target model, either that of a
/// store made by the app's new build (`--to NEW_MODEL_STORE`; an empty one is enough) or a version
/// of an app profile (`--to-version`, TimeQuest's; see `Target`), as Core Data's lightweight
/// migration would: the new build's tables, columns and indexes (its own statements), every record moved
/// by entity and property name (or the renaming identifier, `originalName`), new properties given
/// the new model's archived default (a profile version's: its schema's, `Date.now` the options' `now`), entities renumbered with their hidden columns and join
/// tables, the new model's metadata and model cache copied verbatim so the new build opens the
/// store without migrating again. What a lightweight migration leaves wrong is repaired and
/// reported: one shared default cloudID (SwiftData archives `UUID()` once) becomes one per record,
/// and a profile version gets the profile's repairs (those of `import --validate`).
package enum ModelMigrator {
    /// Migrates through a chain of models, as Core Data's staged migration does: `through` are
    /// stores of the app's earlier models, oldest first, then `modelStore`'s. The store's own
    /// model must be one of the chain (else it is an unknown model version); each step from there
    /// is checked and migrated in turn. Without `through`, one step to `modelStore`'s model.
    public static func migrate(
        storeAt source: URL, through chain: [URL], toModelOf modelStore: URL, output: URL?, options: Migrator.Options, workDirectory: URL
    ) throws -> Migrator.Result {
        guard !chain.isEmpty else {
            return try migrate(storeAt: source, toModelOf: modelStore, output: output, options: options, workDirectory: workDirectory)
        }
        guard !options.inPlace else {
            // The steps run on copies in the work folder; replacing the source from there is not
            // made safe yet (another file system, the source changing meanwhile).
            throw StoreError.io(path: source.path, reason: "a chain of models migrates into a new store, not in place")
        }
        let stores = chain + [modelStore]
        let models = try stores.map { ModelVersion(compiled: try CompiledModel.model(ofStoreAt: $0)) }
        // Oldest first: a chain out of order would drop what a later model has again.
        for (earlier, later) in zip(models, models.dropFirst())
        where !VersionIdentifier.isNewer(later.versionIdentifier, than: earlier.versionIdentifier) {
            throw MigrationError.downgrade(path: modelStore.path, from: earlier.versionIdentifier, to: later.versionIdentifier)
        }
        let own = ModelVersionHashes(model: try CompiledModel.model(ofStoreAt: source))
        guard let position = models.firstIndex(where: { ModelVersionHashes(model: $0.compiled) == own }) else {
            let version = try StoreSnapshot(storeAt: source).read { try StoreReader.metadata($0, path: source.path) }.versionIdentifiers
                .first
            throw MigrationError.unknownModelVersion(
                path: source.path, version: version ?? "",
                known: models.map { $0.versionIdentifier.isEmpty ? "(none)" : $0.versionIdentifier })
        }
        if position == stores.count - 1 {
            throw MigrationError.alreadyAtVersion(path: source.path, version: models[position].versionIdentifier)
        }
        // Every step is checked before any is made: a chain that breaks anywhere writes nothing.
        for step in (position + 1)..<stores.count {
            let problems = LightweightCheck.problems(from: models[step - 1], to: models[step], dropping: true)
            guard problems.isEmpty else {
                throw MigrationError.notLightweight(
                    from: models[step - 1].versionIdentifier, to: models[step].versionIdentifier, problems: problems)
            }
        }
        var current = source
        var logs: [RepairLog] = []
        var counts: [String: Int] = [:]
        for step in (position + 1)..<(stores.count - 1) {
            try options.cancellation?.check()
            let work = workDirectory.appendingPathComponent("step-\(step)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            var stepOptions = options
            stepOptions.inPlace = false
            let result = try migrate(
                storeAt: current, toModelOf: stores[step], output: work.appendingPathComponent("default.store"), options: stepOptions,
                workDirectory: work, stepOfChain: true)
            logs.append(result.log)
            counts.merge(result.counts, uniquingKeysWith: +)
            current = result.output
        }
        let last = workDirectory.appendingPathComponent("step-last")
        try FileManager.default.createDirectory(at: last, withIntermediateDirectories: true)
        var result = try migrate(
            storeAt: current, toModelOf: modelStore, output: output, options: options, workDirectory: last, stepOfChain: current != source)
        result.store = source
        result.counts.merge(counts, uniquingKeysWith: +)
        result.earlierLogs = logs
        result.sourceSchemaVersion = models[position].versionIdentifier
        return result
    }

    /// Migrates the store at `source`, which is one of `candidates` (an app profile's versions),
    /// to the profile's version `target`: `questbak migrate --to-version`, and the gate over an
    /// app's own fixtures. The same migration as to a new build's store, with the target's model
    /// given as the profile's version (see `Target.profileVersion`).
    package static func migrate(
        storeAt source: URL, toVersion target: ModelVersion, candidates: [ModelVersion], output: URL?, options: Migrator.Options,
        workDirectory: URL
    ) throws -> Migrator.Result {
        try migrate(
            storeAt: source, to: .profileVersion(target, candidates: candidates), output: output, options: options,
            workDirectory: workDirectory, stepOfChain: false)
    }

    /// What a store is migrated to.
    enum Target {
        /// The model of a store the app's new build made: its statements, metadata and model cache
        /// are the migrated store's.
        case modelOf(store: URL)
        /// A version of an app profile (the store is one of `candidates`): the store's
        /// own tables made over as Core Data's lightweight migration alters them in place (columns
        /// renamed, new ones added last, new entities' tables created), its persistent history
        /// kept, new properties given the version's defaults (`Date.now` is `Options.now`; a
        /// `UUID().uuidString` is one value for every record, as Core Data evaluates it once), the
        /// version's metadata, no model cache (questbak synthesizes none for a user's store, so it
        /// is left without one, as every store Core Data wrote before about 2015 is), and the
        /// profile's repairs (every record its own cloudID, one record per singleton, …).
        case profileVersion(ModelVersion, candidates: [ModelVersion])
    }

    /// Migrates the store at `source` to the model of the store `modelStore` made by the app's new
    /// build. `stepOfChain`: a step whose model hashes like the previous one (only defaults or
    /// indexes changed) is still made, so the chain ends with the last build's statements and metadata.
    public static func migrate(
        storeAt source: URL, toModelOf modelStore: URL, output: URL?, options: Migrator.Options, workDirectory: URL,
        stepOfChain: Bool = false
    ) throws -> Migrator.Result {
        try migrate(
            storeAt: source, to: .modelOf(store: modelStore), output: output, options: options, workDirectory: workDirectory,
            stepOfChain: stepOfChain)
    }

    static func migrate(
        storeAt source: URL, to target: Target, output: URL?, options: Migrator.Options, workDirectory: URL, stepOfChain: Bool
    ) throws -> Migrator.Result {
        let destination = options.inPlace ? source : (output ?? source)
        // Before any refusal, as an import does (Importer.run).
        StorePlacement.removeStaleTemporaries(besides: destination)
        try StorePlacement.checkTarget(destination, replace: options.inPlace)
        let sourceFiles = [source, CoreDataSQL.sidecar(of: source, "-wal")]
        let fingerprint = try FileFingerprint.of(sourceFiles)
        let old: Side
        let new: Side
        let targetPath: String
        switch target {
        case .modelOf(let modelStore):
            old = try Side(storeAt: source, describedExactly: true)
            new = try Side(storeAt: modelStore, describedExactly: false)
            targetPath = modelStore.path
            if !stepOfChain, ModelVersionHashes(model: old.model) == ModelVersionHashes(model: new.model) {
                throw MigrationError.alreadyAtVersion(path: source.path, version: old.version)
            }
        case .profileVersion(let version, let candidates):
            old = try Side(storeAt: source, among: candidates)
            new = Side(profileVersion: version, from: old, options: options)
            targetPath = source.path
            // A profile names its versions: the store is the version its metadata names.
            if old.version == new.version { throw MigrationError.alreadyAtVersion(path: source.path, version: new.version) }
        }
        // Core Data's older build cannot open a newer store: a migration only goes forward.
        if VersionIdentifier.isNewer(old.version, than: new.version) {
            throw MigrationError.downgrade(path: source.path, from: old.version, to: new.version)
        }
        // Removals are inferred as Core Data infers them for a new build's model, every value they
        // drop in the report; a profile's version keeps every property of the one before.
        let problems = LightweightCheck.problems(from: old.modelVersion, to: new.modelVersion, dropping: !new.isProfileVersion)
        guard problems.isEmpty else { throw MigrationError.notLightweight(from: old.version, to: new.version, problems: problems) }

        let working = StorePlacement.temporaryStoreURL(besides: destination)
        TemporaryFiles.createdStore(working)
        defer { TemporaryFiles.removeStore(working) }
        let log = try RepairLog(directory: workDirectory)
        var counts: [String: Int] = [:]
        try StoreWriter.writeDatabase(to: working, settings: new.settings) { db in
            // Unique indexes come after the records: a constraint the old records break is then
            // named record by record, as Core Data's migration would refuse it, not as SQLite's
            // first failed insert.
            let uniqueIndexes = new.statements.filter { $0.uppercased().hasPrefix("CREATE UNIQUE INDEX ") }
            for sql in new.statements where !StatementRestore.isLater(sql) && !uniqueIndexes.contains(sql) {
                if let reason = CarriedTables.execute(
                    sql, prefixes: StatementRestore.tablePrefixes + StatementRestore.laterPrefixes, in: db)
                {
                    throw StoreError.noModel(path: targetPath, reason: "its statement cannot be made again: \(reason)")
                }
            }
            if new.isProfileVersion { try alterTables(db, from: old.modelVersion, to: new.modelVersion) }
            let largestKeys = try old.snapshot.read { source in try largestPrimaryKeys(source, old: old) }
            try copyEntityKeys(db, old: old, new: new, largestKeys: largestKeys)
            let layout = try ModelLayout(db, model: new.model, checkRows: false)
            if let problem = layout.problems.first {
                throw StoreError.noModel(path: targetPath, reason: "its model does not explain its own tables: \(problem)")
            }
            try old.snapshot.read { source in
                var copiedForeignKeys: [String: String] = [:]
                counts = try copyRecords(
                    from: source, old: old, into: db, layout: layout, new: new, log: log, progress: options.progress,
                    cancellation: options.cancellation, copiedForeignKeys: &copiedForeignKeys)
                try reportDropped(from: source, old: old, layout: layout, new: new, log: log)
                try copyLinks(from: source, old: old, into: db, new: new, log: log, copiedForeignKeys: copiedForeignKeys)
                try copyOtherTables(from: source, old: old, into: db)
                if new.isProfileVersion { try copyHistory(from: source, into: db) }
            }
            try options.cancellation?.check()
            let violations = try LaunchValidity.problems(db, model: new.modelVersion, layout: layout, uniquenessOnly: true)
            guard violations.isEmpty else {
                throw MigrationError.invalidRecords(from: old.version, to: new.version, problems: violations)
            }
            for sql in uniqueIndexes {
                if let reason = CarriedTables.execute(sql, prefixes: StatementRestore.tablePrefixes, in: db) {
                    throw StoreError.noModel(path: targetPath, reason: "its statement cannot be made again: \(reason)")
                }
            }
            try CoreDataSQL.insertMetadata(db, uuid: old.metadata.uuid, plist: new.metadata.withUUID(old.metadata.uuid).encodedPlist)
            if let cache = new.cache { try CoreDataSQL.insertModelCache(db, cache) }
            // What the repairs remove (a singleton's extra copies, duplicates) is reported; the
            // store then holds what was copied less that.
            let before = try recordCounts(db, layout: layout)
            try repair(db, layout: layout, old: old, new: new, log: log, options: options)
            for (entity, count) in try recordCounts(db, layout: layout) where count < before[entity] ?? 0 {
                counts[entity, default: 0] -= (before[entity] ?? 0) - count
            }
            for sql in new.statements where StatementRestore.isLater(sql) {
                if let reason = CarriedTables.execute(sql, prefixes: StatementRestore.laterPrefixes, in: db) {
                    throw StoreError.noModel(path: targetPath, reason: "its statement cannot be made again: \(reason)")
                }
            }
        }
        try verify(working, new: new, expected: counts)
        // The files external-storage records point at stay with the store (in place they are already there).
        let external = try ExternalStorage.files(forStore: source)
        let installed =
            destination == source
            ? [] : try ExternalStorage.install(external.files.map { ($0.name, $0.url) }, forStore: destination)
        if options.inPlace, try FileFingerprint.of(sourceFiles) != fingerprint {
            throw StoreError.sqlite(
                path: source.path, code: 5, message: "the store changed while it was being migrated; close the app and retry")
        }
        let backup: URL?
        do {
            // The last point where a cancelled migration leaves nothing behind.
            try options.cancellation?.check()
            backup = try StorePlacement.place(working, at: destination, replace: options.inPlace, backupStamp: options.backupStamp)
        } catch {
            ExternalStorage.remove(installed)
            throw error
        }
        var result = Migrator.Result(
            store: source, output: destination, sourceSchemaVersion: old.version, targetSchemaVersion: new.version,
            counts: log.counts, backup: backup, backupFiles: backup.map { StorePlacement.backupFiles($0) } ?? [],
            log: log)
        // The new build's store starts its persistent history and CloudKit mirroring anew, and has
        // its own triggers and views: the source's others are said, not dropped without a word.
        var notes: [String] = []
        let history = try old.snapshot.read { try StoreReader.bookkeepingRowCounts($0) }.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        if !history.isEmpty, !new.isProfileVersion {
            notes.append(
                "persistent history and CloudKit mirroring start empty in the migrated store (the source had "
                    + history.map { "\($0.value) rows in \($0.key)" }.joined(separator: ", ") + ")")
        }
        for statement in old.statements where StatementRestore.isLater(statement) && !new.statements.contains(statement) {
            notes.append("the source's \(statement.prefix(60))… is not in the new build's store and is not carried")
        }
        // What is in the support folder and not carried (a link is not followed), as export says it.
        if destination != source { notes += external.notCarried }
        result.notes = notes.isEmpty ? nil : notes
        return result
    }

    /// What a lightweight migration leaves wrong, repaired and reported: the migration's one call
    /// of the repair rules. A new build's model gets every record its own cloudID where one default
    /// was shared; a profile's version gets the profile's repairs, those of `import --validate`.
    static func repair(_ db: Database, layout: ModelLayout, old: Side, new: Side, log: RepairLog, options: Migrator.Options) throws {
        let records = options.progress == nil ? 0 : try recordCounts(db, layout: layout).values.reduce(0, +)
        options.progress?(RecordProgress(step: "repair", entity: "all entities", rowsDone: 0, rowsTotal: records))
        if new.isProfileVersion {
            // The one cloudID the migration gave every record identifies none of them, even where
            // an entity has one record: each gets the cloudID an import of the store's backup to
            // this version gives it.
            _ = try RepairPipeline.run(
                in: RepairContext(
                    db: db, version: new.modelVersion, defaults: new.modelVersion, now: options.now, randomIDs: options.randomIDs,
                    cloudIDKind: old.modelVersion.entities.contains { $0.cloudID != nil } ? .repair : .migration, log: log,
                    path: old.snapshot.path, sharedCloudIDs: new.sharedCloudIDs))
        } else {
            // A new build's model: only the one cloudID a lightweight migration gave every record.
            let context = RepairContext(
                db: db, layout: layout, model: new.model, cloudIDKind: .migration, log: log, path: old.snapshot.path,
                storeUUID: old.metadata.uuid)
            _ = try RepairPipeline.run(in: context, rules: [CloudIDRule()])
        }
        options.progress?(RecordProgress(step: "repair", entity: "all entities", rowsDone: records, rowsTotal: records))
    }

    /// Each entity's records in the store being written, by entity name.
    static func recordCounts(_ db: Database, layout: ModelLayout) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for plan in layout.entities {
            counts[plan.name] =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)") ?? 0
        }
        return counts
    }

    /// What Core Data's lightweight migration does to a store's tables in place, made on the
    /// source's own tables (already created from its statements): new tables for new entities,
    /// renamed columns renamed, `ALTER TABLE … ADD COLUMN` (no DEFAULT clause) for new
    /// properties, which therefore come last. The values come with the records.
    static func alterTables(_ db: Database, from old: ModelVersion, to new: ModelVersion) throws {
        // Both versions laid out whole, as Core Data lays them out: a sub-entity's properties are
        // columns of its root's table, so an entity alone would make a table of its own that no
        // layout of the model reads.
        let newTables = try ModelTables(model: new.compiled)
        let oldTables = try ModelTables(model: old.compiled)
        var created: Set<String> = []
        for entity in new.entities {
            guard let table = newTables.table(for: entity.name) else { continue }
            if created.contains(table.name) { continue }
            guard try db.tableExists(table.name) else {
                // A new root's table holds its sub-entities' columns from the start.
                try db.execute(sql: table.createStatement)
                for sql in table.indexStatements { try db.execute(sql: sql) }
                created.insert(table.name)
                continue
            }
            let oldColumns = Dictionary(
                (old.entity(named: entity.name).map { oldTables.propertyColumns(of: $0.name) } ?? []).map { ($0.property, $0.column.name) },
                uniquingKeysWith: { first, _ in first })
            // A sub-entity's layout lists its parent's columns too: the parent adds or renames
            // those itself (whichever of the two comes first by name), so only its own are done here.
            let declared = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
            var existing = Set(try db.columns(in: table.name).map { $0.name.uppercased() })
            for (property, column) in newTables.propertyColumns(of: entity.name)
            where declared.contains(String(property.prefix { $0 != "." })) {
                if let renamed = entity.attribute(named: property)?.originalName, let oldColumn = oldColumns[renamed] {
                    try db.execute(sql: "ALTER TABLE \(table.name) RENAME COLUMN \(oldColumn) TO \(column.name)")
                    continue
                }
                if oldColumns[property] != nil || !existing.insert(column.name.uppercased()).inserted { continue }
                try db.execute(sql: "ALTER TABLE \(table.name) ADD COLUMN \(column.name) \(column.declaredType)")
                FaultPoint.reached("added \(table.name).\(column.name)")
            }
        }
    }

    /// A store migrated in place keeps its persistent history and CloudKit mirroring rows, as the
    /// copy of its tables does.
    static func copyHistory(from source: Database, into db: Database) throws {
        for (table, count) in try StoreReader.bookkeepingRowCounts(source).sorted(by: { $0.key < $1.key }) where count > 0 {
            guard try db.tableExists(table) else { continue }
            let columns = try source.columns(in: table).map(\.name.quotedSQLIdentifier)
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO \(table.quotedSQLIdentifier) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            try ExactSQL.forEachRow(source, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table.quotedSQLIdentifier)") {
                row in
                try ExactSQL.execute(insert, (0..<row.count).map { row[$0] })
            }
        }
    }

    /// One entity key of a side: `Z_PRIMARYKEY`'s row.
    struct Key {
        var number: Int64
        var name: String
        var superNumber: Int64
        var maximumPrimaryKey: Int64
    }

    /// One side of the migration, read once through a snapshot.
    struct Side {
        let snapshot: StoreSnapshot
        let metadata: StoreMetadata
        let model: CompiledModel
        /// The model with what no model holds: a store's own model as it is, a profile's version
        /// with its typed arrays, array defaults and identities.
        let modelVersion: ModelVersion
        let cache: Data?
        let statements: [String]
        let settings: StoreFileSettings
        let keys: [Key]
        let version: String
        /// A profile's version: see `Target.profileVersion`.
        var isProfileVersion = false
        /// What new properties get, by entity and attribute, as stored: nil to take the model's
        /// archived default.
        var defaults: [String: [String: StoredValue]]?
        /// The values a new cloudID property got: one for all the records of its entity.
        var sharedCloudIDs: Set<String> = []

        /// `describedExactly`: the source, whose every table, column and row its model must
        /// explain (else a record-by-record migration would leave something behind).
        init(storeAt url: URL, describedExactly: Bool) throws {
            snapshot = try StoreSnapshot(storeAt: url)
            let path = snapshot.path
            (metadata, model, cache, statements, settings, keys) = try snapshot.read { db in
                let model = try CompiledModel.model(of: db, path: path)
                let cache = try StoreReader.modelCache(db)
                if describedExactly, case .tables(let reason) = try StoreDescription.ownDescription(db, path: path) {
                    throw StoreError.noModel(path: path, reason: "its model does not describe it exactly (\(reason))")
                }
                return (
                    try StoreReader.metadata(db, path: path), model, cache, try CoreDataSQL.schemaStatements(db),
                    // The new build's page layout; the migrated store's header is not the new build's.
                    try StoreFileSettings.of(db).pageLayout,
                    try Self.keys(db)
                )
            }
            modelVersion = ModelVersion(compiled: model)
            version = metadata.versionIdentifiers.first ?? ""
        }

        /// A store of one of an app profile's versions (`candidates`), read by that version.
        init(storeAt url: URL, among candidates: [ModelVersion]) throws {
            snapshot = try StoreSnapshot(storeAt: url)
            let path = snapshot.path
            (modelVersion, metadata, statements, settings, keys) = try snapshot.read { db in
                // Another app's store is no version of these, whatever version its metadata names
                // (a store with no entity at all is left to the version check, which names what
                // it lacks).
                try StoreReader.requireCoreDataSQL(db, path: path)
                let entities = try StoreReader.modelTables(db).map(\.entity.name)
                guard entities.isEmpty || candidates.contains(where: { SameApp.check($0.entities.map(\.name), entities) }) else {
                    throw MigrationError.anotherAppsStore(path: path, entities: entities, versions: candidates.map(\.versionIdentifier))
                }
                // The version's tables exactly, every row of one of its entities (records are
                // copied by entity: no row is left behind without a word).
                return (
                    try StoreReader.detectVersion(db, path: path, candidates: candidates), try StoreReader.metadata(db, path: path),
                    try CoreDataSQL.schemaStatements(db),
                    // Migrated in place: the store's own file settings, its journal mode too.
                    try StoreFileSettings.of(db), try Self.keys(db)
                )
            }
            model = modelVersion.compiled
            cache = nil
            version = modelVersion.versionIdentifier
        }

        /// The profile's version `target` that the store of `old` migrates to: its tables are the
        /// old ones, altered (`alterTables`); see `Target.profileVersion` for the rest.
        init(profileVersion target: ModelVersion, from old: Side, options: Migrator.Options) {
            snapshot = old.snapshot
            modelVersion = target
            model = modelVersion.compiled
            metadata = StoreMetadata(
                model: model, uuid: old.metadata.uuid,
                frameworkVersion: old.metadata.frameworkVersion ?? StoreMetadata.defaultFrameworkVersion, carryingOver: old.metadata)
            cache = nil
            statements = old.statements
            settings = old.settings
            // The version's entity numbers (Core Data's order: alphabetical, a sub-entity after
            // its parent) and parents; Core Data's own entities (persistent history) keep theirs.
            keys =
                target.entities.compactMap { entity in
                    target.entityNumber(of: entity.name).map {
                        Key(
                            number: Int64($0), name: entity.name,
                            superNumber: Int64(entity.superentity.flatMap { target.entityNumber(of: $0) } ?? 0), maximumPrimaryKey: 0)
                    }
                } + old.keys.filter { $0.number >= 16000 }
            version = target.versionIdentifier
            isProfileVersion = true
            var defaults: [String: [String: StoredValue]] = [:]
            for entity in target.entities {
                for attribute in entity.attributes {
                    guard
                        let value = Self.lightweightDefault(
                            target.defaultValue(of: attribute, in: entity.name), of: attribute.name, entity: entity.name,
                            storeUUID: old.metadata.uuid, options: options)
                    else { continue }
                    defaults[entity.name, default: [:]][attribute.name] = ValueCoding.encode(value)
                    // Only a cloudID property the store did not have is given the one shared value.
                    if attribute.name == CompiledEntity.cloudIDAttribute, case .string(let id) = value,
                        old.modelVersion.entity(named: entity.originalName ?? entity.name)?.cloudID == nil
                    {
                        sharedCloudIDs.insert(id)
                    }
                }
            }
            self.defaults = defaults
        }

        /// The single value Core Data binds for a new property. `UUID().uuidString` is evaluated
        /// once, as in SwiftData; here it is derived from the store so that runs are reproducible.
        static func lightweightDefault(
            _ defaultValue: DefaultValue?, of attribute: String, entity: String, storeUUID: String, options: Migrator.Options
        ) -> Value? {
            switch defaultValue {
            case .value(let value)?: return value
            case .now?: return .date(options.now)
            case .newUUIDString?:
                return .string(
                    options.randomIDs
                        ? UUID().uuidString
                        : DeterministicID.uuid(name: "\(storeUUID)|\(entity).\(attribute)|lightweight default").uuidString)
            case nil: return nil
            }
        }

        static func keys(_ db: Database) throws -> [Key] {
            try StoreReader.entityKeys(db).map {
                Key(number: $0.number, name: $0.name, superNumber: $0.superNumber, maximumPrimaryKey: $0.maximumPrimaryKey)
            }
        }

        /// What a new property of `entity` gets, as stored; nil for none.
        func defaultValue(of field: ModelLayout.Field, entity: String) -> StoredValue? {
            guard let defaults else { return field.defaultValue }
            return field.path.count == 1 ? defaults[entity]?[field.path[0]] : nil
        }

        /// The entity of this side that `entity` of the other side is (same name, or renamed).
        func counterpart(of entity: CompiledEntity) -> CompiledEntity? {
            model.entity(named: entity.name) ?? entity.renamingIdentifier.flatMap { model.entity(named: $0) }
        }
    }

    /// The new build's entity numbers and parents; each entity's `Z_MAX` carried from the old
    /// store (or the new store's, for a new entity), so no key is handed out twice.
    static func copyEntityKeys(_ db: Database, old: Side, new: Side, largestKeys: [String: Int64]) throws {
        // Z_MAX never below a key in use, even where the old store's was (Core Data would hand it out again).
        let oldMaxima = Dictionary(old.keys.map { ($0.name, max($0.maximumPrimaryKey, largestKeys[$0.name] ?? 0)) }, uniquingKeysWith: max)
        for key in new.keys {
            let previous = new.model.entity(named: key.name).flatMap { old.counterpart(of: $0) }.flatMap { oldMaxima[$0.name] }
            try db.execute(
                sql:
                    "INSERT INTO \(CoreDataSQL.primaryKeyTable) (\(CoreDataSQL.entityColumn), \(CoreDataSQL.nameColumn), \(CoreDataSQL.superColumn), \(CoreDataSQL.maxColumn)) VALUES (?, ?, ?, ?)",
                arguments: [key.number, key.name, key.superNumber, max(previous ?? 0, key.maximumPrimaryKey)])
        }
    }

    /// The largest `Z_PK` of each old entity's rows.
    static func largestPrimaryKeys(_ source: Database, old: Side) throws -> [String: Int64] {
        var largest: [String: Int64] = [:]
        for plan in try ModelLayout(source, model: old.model).entities {
            largest[plan.name] = try Int64.fetchOne(
                source, sql: "SELECT max(\(CoreDataSQL.keyColumn)) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)")
        }
        return largest
    }

    /// The attribute `name` of `entity` or of an ancestor (sub-entities list only their own).
    static func attribute(_ name: String, of entity: String, in model: CompiledModel) -> CompiledAttribute? {
        model.lineage(of: entity).lazy.compactMap { $0.attributes.first { $0.name == name } }.first
    }

    /// Every record of every old entity into its new entity, value by value; returns the
    /// records written by new entity. `copiedForeignKeys`: each new to-one column
    /// (`TABLE.COLUMN`) and the old one its values came from ("" where entities sharing the table
    /// took them from different ones).
    static func copyRecords(
        from source: Database, old: Side, into db: Database, layout: ModelLayout, new: Side, log: RepairLog,
        progress report: ((RecordProgress) -> Void)? = nil, cancellation: Cancellation? = nil,
        copiedForeignKeys: inout [String: String]
    ) throws -> [String: Int] {
        let oldLayout = try ModelLayout(source, model: old.model)
        var counts: [String: Int] = [:]
        // Each new entity's records, counted first only when someone is told how far the copy is.
        var totals: [String: Int] = [:]
        for plan in report == nil ? [] : layout.entities {
            guard let entity = new.model.entity(named: plan.name), let previous = old.counterpart(of: entity),
                let oldPlan = oldLayout.entity(named: previous.name)
            else { continue }
            totals[plan.name] =
                try Int.fetchOne(source, sql: "SELECT count(*) FROM \(oldPlan.table) WHERE \(CoreDataSQL.entityColumn) = \(oldPlan.number)")
                ?? 0
        }
        let progress = RecordProgressCounter(report: report, totals: totals, step: "migrate", cancellation: cancellation)
        for plan in layout.entities {
            guard let entity = new.model.entity(named: plan.name), let previous = old.counterpart(of: entity),
                let oldPlan = oldLayout.entity(named: previous.name)
            else { continue }
            // Each new column's source: the old column of the same property (a renamed
            // attribute's by its original name), or its default.
            var selected = [CoreDataSQL.keyColumn, CoreDataSQL.optColumn]
            var sources: [Int?] = []
            // Where a NULL of a now required property gets its default in the copy: a new build's
            // model fills every one; a profile's version (as Core Data's `UPDATE … WHERE … IS NULL`)
            // only those of a property that was optional, the others being its repairs' to fill.
            var fillsNull: [Bool] = []
            for field in plan.fields {
                let top = attribute(field.path[0], of: entity.name, in: new.model)
                let originalPath = [top?.renamingIdentifier ?? field.path[0]] + field.path.dropFirst()
                if let match = oldPlan.fields.first(where: { $0.path == field.path || $0.path == originalPath }) {
                    selected.append(match.column)
                    sources.append(selected.count - 1)
                    fillsNull.append(!new.isProfileVersion || match.isOptional)
                } else {
                    sources.append(nil)
                    fillsNull.append(false)
                }
            }
            for relationship in plan.toOne {
                let renamed = Self.relationship(relationship.name, of: entity.name, in: new.model)?.renamingIdentifier
                if let match = oldPlan.toOne.first(where: { $0.name == relationship.name || $0.name == renamed }) {
                    selected.append(match.column)
                    sources.append(selected.count - 1)
                    let from = "\(oldPlan.table).\(match.column)"
                    let key = "\(plan.table).\(relationship.column)"
                    copiedForeignKeys[key] = copiedForeignKeys[key].map { $0 == from ? from : "" } ?? from
                } else {
                    sources.append(nil)
                }
            }
            let columns = CoreDataSQL.rowColumns + plan.fields.map(\.column) + plan.toOne.map(\.column)
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO \(plan.table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            let defaults: [StoredValue] =
                plan.fields.map { new.defaultValue(of: $0, entity: plan.name) ?? .null } + plan.toOne.map { _ in .null }
            var written = 0
            try ExactSQL.forEachRow(
                source,
                sql:
                    "SELECT \(selected.joined(separator: ", ")) FROM \(oldPlan.table) WHERE \(CoreDataSQL.entityColumn) = \(oldPlan.number) ORDER BY \(CoreDataSQL.keyColumn)"
            ) { row in
                var values: [StoredValue] = [row[0], .integer(plan.number), row[1]]
                for (index, column) in sources.enumerated() {
                    let value = column.map { row[$0] } ?? defaults[index]
                    // A value the old store lacks (NULL) in a property that is now required gets its default, as Core
                    // Data's migration fills it: reported, since the record changes.
                    if column != nil, value == .null, index < plan.fields.count, fillsNull[index], !plan.fields[index].isOptional,
                        defaults[index] != .null,
                        case .integer(let primaryKey) = row[0]
                    {
                        let field = plan.fields[index]
                        try log.record(
                            RepairEntry(
                                rule: .defaultFill, kind: .migration, entity: plan.name, primaryKey: primaryKey, cloudID: nil,
                                field: field.path.joined(separator: "."), old: .value(.null),
                                new: .value((try? ValueCoding.decode(defaults[index], as: field.kind)) ?? defaults[index].reportable)))
                        values.append(defaults[index])
                    } else {
                        values.append(value)
                    }
                }
                try ExactSQL.execute(insert, values)
                written += 1
                try progress.count(plan.name)
            }
            counts[plan.name, default: 0] += written
        }
        progress.finishEntity()
        return counts
    }

    /// What the new model has no place for (a removed attribute or entity, or one renamed without
    /// `originalName`, which looks the same) is dropped, as Core Data drops it: each value, each
    /// record, goes into the report (`unstorable`), never away without a word.
    static func reportDropped(from source: Database, old: Side, layout: ModelLayout, new: Side, log: RepairLog) throws {
        let oldLayout = try ModelLayout(source, model: old.model)
        for oldPlan in oldLayout.entities {
            let plan = new.model.entities.first { $0.name == oldPlan.name || $0.renamingIdentifier == oldPlan.name }
                .flatMap { layout.entity(named: $0.name) }
            let kept = Set(
                (plan?.fields ?? []).map { field in
                    [attribute(field.path[0], of: plan?.name ?? "", in: new.model)?.renamingIdentifier ?? field.path[0]]
                        + field.path.dropFirst()
                } + (plan?.fields ?? []).map(\.path))
            let keptRelationships = Set(
                (plan?.toOne ?? []).flatMap { toOne in
                    [toOne.name] + [relationship(toOne.name, of: plan?.name ?? "", in: new.model)?.renamingIdentifier].compactMap { $0 }
                })
            let dropped = oldPlan.fields.filter { !kept.contains($0.path) }
            let droppedToOne = oldPlan.toOne.filter { !keptRelationships.contains($0.name) }
            guard plan == nil || !dropped.isEmpty || !droppedToOne.isEmpty else { continue }
            let columns = [CoreDataSQL.keyColumn] + oldPlan.fields.map(\.column) + oldPlan.toOne.map(\.column)
            try ExactSQL.forEachRow(
                source,
                sql:
                    "SELECT \(columns.joined(separator: ", ")) FROM \(oldPlan.table) WHERE \(CoreDataSQL.entityColumn) = \(oldPlan.number) ORDER BY \(CoreDataSQL.keyColumn)"
            ) { row in
                guard case .integer(let primaryKey) = row[0] else { return }
                var values: [String: Value] = [:]
                for (index, field) in oldPlan.fields.enumerated() {
                    values[field.path.joined(separator: ".")] =
                        (try? ValueCoding.decode(row[1 + index], as: field.kind)) ?? row[1 + index].reportable
                }
                for (index, relationship) in oldPlan.toOne.enumerated() {
                    values[relationship.name] = row[1 + oldPlan.fields.count + index].reportable
                }
                if plan == nil {
                    try log.record(
                        RepairEntry(
                            rule: .unknownProperty, kind: .unstorable, entity: oldPlan.name, primaryKey: primaryKey, cloudID: nil,
                            field: nil,
                            old: .record(values), new: nil))
                    return
                }
                for name in dropped.map({ $0.path.joined(separator: ".") }) + droppedToOne.map(\.name) {
                    guard let value = values[name], value != .null else { continue }
                    try log.record(
                        RepairEntry(
                            rule: .unknownProperty, kind: .unstorable, entity: oldPlan.name, primaryKey: primaryKey, cloudID: nil,
                            field: name,
                            old: .value(value), new: nil))
                }
            }
        }
    }

    /// The foreign-key column (`TABLE.COLUMN`) that holds a relationship's links, for a to-one
    /// and for the to-many whose inverse it is; nil for another storage.
    static func foreignKeyColumn(_ storage: ModelTables.RelationshipStorage) -> String? {
        switch storage {
        case .foreignKey(let table, let column), .inverseForeignKey(let table, let column): return "\(table).\(column)"
        case .hiddenColumn, .joinTable: return nil
        }
    }

    /// The (source, destination) record pairs a relationship's storage holds, whatever it is: a
    /// foreign key on the source or the destination, a hidden column, a join table.
    static func pairsSQL(_ storage: ModelTables.RelationshipStorage) -> String {
        switch storage {
        case .foreignKey(let table, let column):
            return "SELECT \(CoreDataSQL.keyColumn), \(column) FROM \(table) WHERE \(column) IS NOT NULL"
        case .inverseForeignKey(let table, let column), .hiddenColumn(let table, let column):
            return "SELECT \(column), \(CoreDataSQL.keyColumn) FROM \(table) WHERE \(column) IS NOT NULL"
        case .joinTable(let join, let sourceIsLower):
            let (mine, theirs) = sourceIsLower ? (join.lower.column, join.higher.column) : (join.higher.column, join.lower.column)
            return "SELECT \(mine), \(theirs) FROM \(join.name)"
        }
    }

    /// The relationship `name` of `entity` or of an ancestor.
    static func relationship(_ name: String, of entity: String, in model: CompiledModel) -> CompiledRelationship? {
        model.lineage(of: entity).lazy.compactMap { $0.relationships.first { $0.name == name } }.first
    }

    /// Every link of every relationship moved from the old model's storage to the new model's,
    /// whichever each is (a storage may change: a to-many gaining an inverse moves its links from
    /// a hidden column to a foreign key), each relationship's links counted on both sides. A
    /// relationship the new model lacks drops its links: each is reported.
    static func copyLinks(
        from source: Database, old: Side, into db: Database, new: Side, log: RepairLog, copiedForeignKeys: [String: String]
    ) throws {
        let oldTables = try ModelTables(
            model: old.model, numbers: Dictionary(old.keys.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a }))
        let newTables = try ModelTables(
            model: new.model, numbers: Dictionary(new.keys.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a }))
        var moved: Set<String> = []  // old "Entity.relationship" whose links found a new home
        var lost: [String] = []
        for entity in new.model.entities {
            guard let previous = old.counterpart(of: entity) else { continue }
            for relationship in entity.relationships {
                let oldName =
                    Self.relationship(relationship.name, of: previous.name, in: old.model) != nil
                    ? relationship.name : (relationship.renamingIdentifier ?? relationship.name)
                guard Self.relationship(oldName, of: previous.name, in: old.model) != nil,
                    let newStorage = try? newTables.storage(of: relationship.name, from: entity.name),
                    let oldStorage = try? oldTables.storage(of: oldName, from: previous.name)
                else { continue }
                moved.insert("\(previous.name).\(oldName)")
                // A many-to-many pair is written once, from the side its join table is named after.
                if case .joinTable(_, false) = newStorage { continue }
                // A foreign key the records brought with them from the same old one holds these
                // links already (both sides of a to-one and its to-many): they are counted, not
                // written again.
                if let copied = foreignKeyColumn(newStorage).flatMap({ copiedForeignKeys[$0] }), !copied.isEmpty,
                    copied == foreignKeyColumn(oldStorage)
                {
                    let count = try Int.fetchOne(source, sql: "SELECT count(*) FROM (\(pairsSQL(oldStorage)))") ?? 0
                    let written = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(pairsSQL(newStorage)))") ?? 0
                    if written != count {
                        lost.append("\(entity.name).\(relationship.name): \(count) links, \(written) after the migration")
                    }
                    continue
                }
                let write: Statement
                var reversed = false
                switch newStorage {
                case .foreignKey(let table, let column):
                    write = try db.makeStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE \(CoreDataSQL.keyColumn) = ?")
                    reversed = true
                case .inverseForeignKey(let table, let column), .hiddenColumn(let table, let column):
                    write = try db.makeStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE \(CoreDataSQL.keyColumn) = ?")
                case .joinTable(let join, _):
                    write = try db.makeStatement(
                        sql: "INSERT OR IGNORE INTO \(join.name) (\(join.lower.column), \(join.higher.column)) VALUES (?, ?)")
                }
                var count = 0
                try ExactSQL.forEachRow(source, sql: pairsSQL(oldStorage)) { row in
                    try ExactSQL.execute(write, reversed ? [row[1], row[0]] : [row[0], row[1]])
                    count += 1
                }
                let written = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(pairsSQL(newStorage)))") ?? 0
                if written != count { lost.append("\(entity.name).\(relationship.name): \(count) links, \(written) after the migration") }
            }
        }
        if !lost.isEmpty {
            throw StoreError.schemaMismatch(path: old.snapshot.path, versionIdentifier: new.version, differences: lost)
        }
        // The links of a to-many the new model lacks (and whose inverse does not keep them) are dropped: reported.
        for entity in old.model.entities {
            for relationship in entity.relationships where relationship.isToMany && !moved.contains("\(entity.name).\(relationship.name)") {
                guard let storage = try? oldTables.storage(of: relationship.name, from: entity.name) else { continue }
                switch storage {
                case .hiddenColumn, .joinTable:
                    if case .joinTable(let join, _) = storage,
                        moved.contains("\(join.higher.entity).\(join.higher.relationship)")
                            || moved.contains("\(join.lower.entity).\(join.lower.relationship)")
                    {
                        continue
                    }
                    try ExactSQL.forEachRow(source, sql: pairsSQL(storage)) { row in
                        guard case .integer(let from) = row[0] else { return }
                        try log.record(
                            RepairEntry(
                                rule: .unknownProperty, kind: .unstorable, entity: entity.name, primaryKey: from, cloudID: nil,
                                field: relationship.name, old: .value(row[1].reportable), new: nil))
                    }
                case .foreignKey, .inverseForeignKey: continue
                }
            }
        }
    }

    /// Tables that belong to no entity and are no join table of the old model (another tool's
    /// table) come along as they are, with their statements.
    static func copyOtherTables(from source: Database, old: Side, into db: Database) throws {
        let joinTables = Set(
            (try? ModelTables(model: old.model, numbers: Dictionary(old.keys.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })))?
                .joinTables.map(\.name) ?? [])
        for (name, sql, indexes) in try StoreReader.otherTables(source) where !joinTables.contains(name) {
            if try db.tableExists(name) {
                // The new build made it too: its rows still come along, into the same columns.
                guard try db.columns(in: name).map(\.name) == source.columns(in: name).map(\.name) else {
                    throw StoreError.schemaMismatch(
                        path: old.snapshot.path, versionIdentifier: nil,
                        differences: ["table \(name) is in the new build's store with other columns: its rows cannot be carried"])
                }
            } else {
                for statement in [sql] + indexes {
                    if let reason = CarriedTables.execute(statement, prefixes: StatementRestore.tablePrefixes, in: db) {
                        throw StoreError.schemaMismatch(
                            path: old.snapshot.path, versionIdentifier: nil, differences: ["table \(name): \(reason)"])
                    }
                }
            }
            let columns = try source.columns(in: name).map(\.name.quotedSQLIdentifier)
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO \(name.quotedSQLIdentifier) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            try ExactSQL.forEachRow(source, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(name.quotedSQLIdentifier)") { row in
                try ExactSQL.execute(insert, (0..<row.count).map { row[$0] })
            }
        }
    }

    /// The migrated store read back: intact, described exactly by the new model (every link
    /// naming a record), with every record of the old store.
    static func verify(_ url: URL, new: Side, expected: [String: Int]) throws {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        defer { try? queue.close() }
        try queue.read { db in
            guard try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok" else {
                throw StoreError.schemaMismatch(path: url.path, versionIdentifier: new.version, differences: ["integrity_check fails"])
            }
            let layout = try ModelLayout(db, model: new.model)
            var differences = layout.problems
            let counts = try recordCounts(db, layout: layout)
            for plan in layout.entities {
                let found = counts[plan.name] ?? 0
                if found != expected[plan.name] ?? 0 {
                    differences.append("\(plan.name): \(found) records, expected \(expected[plan.name] ?? 0)")
                }
            }
            if !differences.isEmpty {
                throw StoreError.schemaMismatch(path: url.path, versionIdentifier: new.version, differences: differences)
            }
        }
    }
}
