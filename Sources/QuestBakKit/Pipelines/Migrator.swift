import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Why a store cannot be migrated to a model.
package enum MigrationError: Error, Equatable, LocalizedError {
    /// The change between the models is not one Core Data's lightweight migration makes.
    case notLightweight(from: String, to: String, problems: [String])
    /// The store already has the target model.
    case alreadyAtVersion(path: String, version: String)
    /// The target model is older than the store's.
    case downgrade(path: String, from: String, to: String)
    /// The store's model is none of the models of the chain it was given (Core Data's staged
    /// migration fails the same way: "Cannot use staged migration with an unknown model version").
    case unknownModelVersion(path: String, version: String, known: [String])
    /// Records the new model does not accept, which Core Data's migration would refuse at
    /// launch (134110): one sentence each, naming the entity, `_pk`s and property.
    case invalidRecords(from: String, to: String, problems: [String])

    /// The sentence that says why, naming the store and versions.
    public var errorDescription: String? {
        switch self {
        case .notLightweight(let from, let to, let problems):
            return "schema \(from) → \(to) is not a lightweight migration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
        case .alreadyAtVersion(let path, let version):
            return "\(path): the store is already schema \(version)"
        case .downgrade(let path, let from, let to):
            return "\(path): cannot migrate schema \(from) back to \(to)"
        case .invalidRecords(let from, let to, let problems):
            return
                "schema \(from) → \(to): the new model refuses records of the store, so the new build could not open it (Core Data 134110):\n"
                + problems.map { "  - \($0)" }.joined(separator: "\n")
        case .unknownModelVersion(let path, let version, let known):
            return
                "\(path): unknown model version: its model (\(version.isEmpty ? "no version identifier" : version)) is none of the given models (\(known.joined(separator: ", "))), so Core Data's staged migration could not start from it either"
        }
    }
}

/// `questbak migrate`: the lightweight migration Core Data performs when the app opens an old
/// store (spec: "Lightweight migration"), then the fixes the app would otherwise need on first
/// launch: every record its own cloudID, where Core Data gives all rows the single value
/// `UUID().uuidString` evaluated once, one record per singleton, and the other repairs of
/// `import --validate`, each reported.
package enum Migrator {
    package struct Options {
        /// What `Date.now` defaults of new properties become (seconds since 2001).
        public var now: Double
        public var randomIDs = false
        /// Swap the source store, keeping a backup, instead of writing a new one.
        public var inPlace = false
        public var backupStamp = "backup"
        /// Told how far the migration is: each entity's records as it migrates them (step
        /// "migrate"), then the repairs (step "repair").
        package var progress: ((RecordProgress) -> Void)?
        /// Checked between the steps of a chain (a migration to a new build's model) and before
        /// the migrated store is put in place.
        package var cancellation: Cancellation?

        public init(now: Double) {
            self.now = now
        }
    }

    /// What a migration did (the API's name for it is public).
    package typealias Result = QuestBak.MigrateResult

    /// Migrates the store at `source` to `target`, writing `output` (or, in place, replacing the
    /// source and keeping it as a backup). `candidates` are the schemas the source may be.
    package static func migrate(
        storeAt source: URL, to target: Schema, output: URL?, options: Options, workDirectory: URL,
        candidates: [Schema]
    ) throws -> Result {
        let destination = options.inPlace ? source : (output ?? source)
        // Before any refusal, as an import does (Importer.run).
        StorePlacement.removeStaleTemporaries(besides: destination)
        try StorePlacement.checkTarget(destination, replace: options.inPlace)
        let sourceFiles = [source, CoreDataSQL.sidecar(of: source, "-wal")]
        let fingerprint = try FileFingerprint.of(sourceFiles)
        let snapshot = try StoreSnapshot(storeAt: source)
        let (sourceSchema, metadata) = try snapshot.read { db in
            (try StoreReader.detectSchema(db, path: source.path, candidates: candidates), try StoreReader.metadata(db, path: source.path))
        }
        if sourceSchema.versionIdentifier == target.versionIdentifier {
            throw MigrationError.alreadyAtVersion(path: source.path, version: target.versionIdentifier)
        }
        if VersionIdentifier.isNewer(sourceSchema.versionIdentifier, than: target.versionIdentifier) {
            throw MigrationError.downgrade(path: source.path, from: sourceSchema.versionIdentifier, to: target.versionIdentifier)
        }
        let problems = LightweightCheck.problems(from: sourceSchema, to: target)
        guard problems.isEmpty else {
            throw MigrationError.notLightweight(from: sourceSchema.versionIdentifier, to: target.versionIdentifier, problems: problems)
        }

        // The migration runs on a copy beside the destination, so the final step is a rename.
        let working = StorePlacement.temporaryStoreURL(besides: destination)
        TemporaryFiles.createdStore(working)
        defer { TemporaryFiles.removeStore(working) }
        try snapshot.copyFiles(to: working)
        let log = try RepairLog(directory: workDirectory)
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            let queue = try DatabaseQueue(path: working.path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.inTransaction {
                    let sharedCloudIDs = try applyLightweight(
                        db, from: sourceSchema, to: target, storeUUID: metadata.uuid, options: options)
                    // The same validation as an import: a migrated store is a valid store of the new
                    // version, with every change reported. The one cloudID the migration gave every
                    // record identifies none of them, even where an entity has one record: each gets
                    // the cloudID an import of the store's backup to this version gives it.
                    let records = try recordCount(db, options.progress == nil ? [] : target.entities)
                    options.progress?(RecordProgress(step: "repair", entity: "all entities", rowsDone: 0, rowsTotal: records))
                    try Repairer(
                        db: db, schema: target, defaultsSchema: target, now: options.now, randomIDs: options.randomIDs,
                        cloudIDKind: sourceSchema.entities.contains { $0.cloudID != nil } ? .repair : .migration,
                        log: log, path: source.path, sharedCloudIDs: sharedCloudIDs
                    ).run()
                    options.progress?(RecordProgress(step: "repair", entity: "all entities", rowsDone: records, rowsTotal: records))
                    let migrated = StoreMetadata(
                        schema: target, uuid: metadata.uuid,
                        frameworkVersion: metadata.frameworkVersion ?? StoreMetadata.defaultFrameworkVersion,
                        carryingOver: metadata)
                    try CoreDataSQL.updateMetadataPlist(db, plist: migrated.encodedPlist)
                    // The compiled model of the old version no longer describes the store, and
                    // questbak has no cache Core Data made for the new one: it synthesizes none
                    // for a user's store. The store is left without one, as every store Core Data
                    // wrote before about 2015 is (model-cache.md); how Core Data then fills it is
                    // not verified here.
                    try db.execute(sql: "DELETE FROM Z_MODELCACHE")
                    FaultPoint.reached("before commit of the migration")
                    return .commit
                }
                FaultPoint.reached("migration committed")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try queue.close()
        } catch {
            throw StoreError.wrapping(error, path: source.path)
        }
        // In place, a write that happened after the snapshot would be lost with the old store.
        if options.inPlace, try FileFingerprint.of(sourceFiles) != fingerprint {
            throw StoreError.sqlite(
                path: source.path, code: 5, message: "the store changed while it was being migrated; close the app and retry")
        }
        // The last point where a cancelled migration leaves nothing behind (a TimeQuest migration
        // is one transaction: there is no point between its records to stop at).
        try options.cancellation?.check()
        let backup = try StorePlacement.place(working, at: destination, replace: options.inPlace, backupStamp: options.backupStamp)
        return Result(
            store: source, output: destination, sourceSchemaVersion: sourceSchema.versionIdentifier,
            targetSchemaVersion: target.versionIdentifier, counts: log.counts, backup: backup,
            backupFiles: backup.map { StorePlacement.backupFiles($0) } ?? [], log: log)
    }

    /// What Core Data's lightweight migration does in SQL: new tables for new entities, `ALTER
    /// TABLE … ADD COLUMN` (no DEFAULT clause) for new properties followed by one `UPDATE`
    /// binding one value, renamed columns renamed, entities renumbered when new ones sort
    /// between old ones. Returns the values bound to a new cloudID property: one for all the records.
    @discardableResult
    static func applyLightweight(
        _ db: Database, from old: Schema, to new: Schema, storeUUID: String, options: Options
    ) throws -> Set<String> {
        var sharedCloudIDs: Set<String> = []
        for entity in new.entities {
            let layout = TableLayout(entity: entity)
            guard let previous = old.entity(named: entity.name) else {
                try db.execute(sql: layout.createTableSQL)
                for sql in layout.createIndexSQL(for: entity) { try db.execute(sql: sql) }
                options.progress?(RecordProgress(step: "migrate", entity: entity.name, rowsDone: 0, rowsTotal: 0))
                continue
            }
            // Each ALTER and UPDATE covers every record at once: an entity is reported as it
            // starts and as it ends.
            let records = try recordCount(db, options.progress == nil ? [] : [previous])
            options.progress?(RecordProgress(step: "migrate", entity: entity.name, rowsDone: 0, rowsTotal: records))
            let oldLayout = TableLayout(entity: previous)
            for column in layout.columns {
                let attribute = entity.attribute(named: column.property)
                if let renamed = attribute?.originalName, let oldColumn = oldLayout.column(for: renamed) {
                    try db.execute(sql: "ALTER TABLE \(layout.tableName) RENAME COLUMN \(oldColumn.name) TO \(column.name)")
                    continue
                }
                if oldLayout.column(for: column.property) != nil { continue }
                try db.execute(sql: "ALTER TABLE \(layout.tableName) ADD COLUMN \(column.name) \(column.declaredType)")
                FaultPoint.reached("added \(layout.tableName).\(column.name)")
                if let attribute, let value = lightweightDefault(attribute, entity: entity.name, storeUUID: storeUUID, options: options) {
                    try ExactSQL.execute(db, sql: "UPDATE \(layout.tableName) SET \(column.name) = ?", [ValueCoding.encode(value)])
                    if attribute.name == Entity.cloudIDAttribute, case .string(let id) = value { sharedCloudIDs.insert(id) }
                }
            }
            for attribute in entity.attributes where !attribute.isOptional {
                guard let was = previous.attribute(named: attribute.originalName ?? attribute.name), was.isOptional,
                    let column = layout.column(for: attribute.name),
                    let value = lightweightDefault(attribute, entity: entity.name, storeUUID: storeUUID, options: options)
                else { continue }
                try ExactSQL.execute(
                    db, sql: "UPDATE \(layout.tableName) SET \(column.name) = ? WHERE \(column.name) IS NULL", [ValueCoding.encode(value)])
            }
            options.progress?(RecordProgress(step: "migrate", entity: entity.name, rowsDone: records, rowsTotal: records))
        }
        try renumberEntities(db, from: old, to: new)
        return sharedCloudIDs
    }

    /// How many records `entities` have (for progress; none asked, none counted).
    static func recordCount(_ db: Database, _ entities: [Entity]) throws -> Int {
        try entities.reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT count(*) FROM \(TableLayout(entity: $1).tableName)") ?? 0) }
    }

    /// The single value Core Data binds for a new property. `UUID().uuidString` is evaluated
    /// once, as in SwiftData; here it is derived from the store so that runs are reproducible.
    static func lightweightDefault(_ attribute: Attribute, entity: String, storeUUID: String, options: Options) -> Value? {
        switch attribute.defaultValue {
        case .value(let value)?: return value
        case .now?: return .date(options.now)
        case .newUUIDString?:
            return .string(
                options.randomIDs
                    ? UUID().uuidString
                    : DeterministicID.uuid(name: "\(storeUUID)|\(entity).\(attribute.name)|lightweight default").uuidString)
        case nil: return nil
        }
    }

    /// Entity numbers follow alphabetical order, so a new entity renumbers those after it: in
    /// `Z_PRIMARYKEY` and in every row's `Z_ENT`.
    static func renumberEntities(_ db: Database, from old: Schema, to new: Schema) throws {
        let maxima = Dictionary(try StoreReader.entityKeys(db).map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
        for entity in new.entities {
            guard let number = new.entityNumber(of: entity.name), old.entityNumber(of: entity.name) != number else { continue }
            if old.entity(named: entity.name) != nil {
                try db.execute(sql: "UPDATE \(TableLayout(entity: entity).tableName) SET Z_ENT = ?", arguments: [number])
            }
        }
        try CoreDataSQL.deleteModelEntityKeys(db)
        for (index, entity) in new.entities.enumerated() {
            try CoreDataSQL.insertEntityKey(db, number: Int64(index + 1), name: entity.name, maximumPrimaryKey: maxima[entity.name] ?? 0)
        }
    }
}
