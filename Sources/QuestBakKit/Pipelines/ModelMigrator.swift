import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// `questbak migrate STORE --to NEW_MODEL_STORE`: any app's store migrated to the model of a store
/// made by the app's new build (an empty one is enough), as Core Data's lightweight migration
/// would: the new build's tables, columns and indexes (its own statements), every record moved
/// by entity and property name (or the renaming identifier, `originalName`), new properties given
/// the new model's archived default, entities renumbered with their hidden columns and join
/// tables, the new model's metadata and model cache copied verbatim so the new build opens the
/// store without migrating again. What a lightweight migration leaves wrong is repaired and
/// reported: one shared default cloudID (SwiftData archives `UUID()` once) becomes one per record.
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
        let models = try stores.map { try Schema.model(ofStoreAt: $0) }
        // Oldest first: a chain out of order would drop what a later model has again.
        for (earlier, later) in zip(models, models.dropFirst())
        where !VersionIdentifier.isNewer(later.versionIdentifier, than: earlier.versionIdentifier) {
            throw MigrationError.downgrade(path: modelStore.path, from: earlier.versionIdentifier, to: later.versionIdentifier)
        }
        let own = ModelVersionHashes(schema: try Schema.model(ofStoreAt: source))
        guard let position = models.firstIndex(where: { ModelVersionHashes(schema: $0) == own }) else {
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

    public static func migrate(
        storeAt source: URL, toModelOf modelStore: URL, output: URL?, options: Migrator.Options, workDirectory: URL
    ) throws -> Migrator.Result {
        try migrate(
            storeAt: source, toModelOf: modelStore, output: output, options: options, workDirectory: workDirectory, stepOfChain: false)
    }

    /// `stepOfChain`: a step whose model hashes like the previous one (only defaults or indexes
    /// changed) is still made, so the chain ends with the last build's statements and metadata.
    static func migrate(
        storeAt source: URL, toModelOf modelStore: URL, output: URL?, options: Migrator.Options, workDirectory: URL, stepOfChain: Bool
    ) throws -> Migrator.Result {
        let destination = options.inPlace ? source : (output ?? source)
        // Before any refusal, as an import does (Importer.run).
        StorePlacement.removeStaleTemporaries(besides: destination)
        try StorePlacement.checkTarget(destination, replace: options.inPlace)
        let sourceFiles = [source, CoreDataSQL.sidecar(of: source, "-wal")]
        let fingerprint = try FileFingerprint.of(sourceFiles)
        let old = try Side(storeAt: source, describedExactly: true)
        let new = try Side(storeAt: modelStore, describedExactly: false)
        let (oldSchema, newSchema) = (Schema(model: old.model), Schema(model: new.model))
        if !stepOfChain, ModelVersionHashes(schema: oldSchema) == ModelVersionHashes(schema: newSchema) {
            throw MigrationError.alreadyAtVersion(path: source.path, version: old.version)
        }
        // Core Data's older build cannot open a newer store: a migration only goes forward.
        if VersionIdentifier.isNewer(old.version, than: new.version) {
            throw MigrationError.downgrade(path: source.path, from: old.version, to: new.version)
        }
        // Removals are inferred as Core Data infers them; every value they drop is in the report.
        let problems = LightweightCheck.problems(from: oldSchema, to: newSchema, dropping: true)
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
                    throw StoreError.noModel(path: modelStore.path, reason: "its statement cannot be made again: \(reason)")
                }
            }
            let largestKeys = try old.snapshot.read { source in try largestPrimaryKeys(source, old: old) }
            try copyEntityKeys(db, old: old, new: new, largestKeys: largestKeys)
            let layout = try ModelLayout(db, model: new.model, checkRows: false)
            if let problem = layout.problems.first {
                throw StoreError.noModel(path: modelStore.path, reason: "its model does not explain its own tables: \(problem)")
            }
            try old.snapshot.read { source in
                counts = try copyRecords(
                    from: source, old: old, into: db, layout: layout, new: new, log: log, progress: options.progress,
                    cancellation: options.cancellation)
                try reportDropped(from: source, old: old, layout: layout, new: new, log: log)
                try copyLinks(from: source, old: old, into: db, new: new, log: log)
                try copyOtherTables(from: source, old: old, into: db)
            }
            try options.cancellation?.check()
            let violations = try LaunchValidity.problems(db, model: Schema(model: new.model), layout: layout, uniquenessOnly: true)
            guard violations.isEmpty else {
                throw MigrationError.invalidRecords(from: old.version, to: new.version, problems: violations)
            }
            for sql in uniqueIndexes {
                if let reason = CarriedTables.execute(sql, prefixes: StatementRestore.tablePrefixes, in: db) {
                    throw StoreError.noModel(path: modelStore.path, reason: "its statement cannot be made again: \(reason)")
                }
            }
            try CoreDataSQL.insertMetadata(db, uuid: old.metadata.uuid, plist: new.metadata.withUUID(old.metadata.uuid).encodedPlist)
            if let cache = new.cache { try CoreDataSQL.insertModelCache(db, cache) }
            let context = ModelRepairContext(
                db: db, layout: layout, model: new.model, log: log, storeUUID: old.metadata.uuid, cloudIDKind: .migration)
            _ = try ModelCloudIDRule().apply(in: context)
            for sql in new.statements where StatementRestore.isLater(sql) {
                if let reason = CarriedTables.execute(sql, prefixes: StatementRestore.laterPrefixes, in: db) {
                    throw StoreError.noModel(path: modelStore.path, reason: "its statement cannot be made again: \(reason)")
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
        if !history.isEmpty {
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

    /// One side of the migration, read once through a snapshot.
    struct Side {
        let snapshot: StoreSnapshot
        let metadata: StoreMetadata
        let model: CompiledModel
        let cache: Data?
        let statements: [String]
        let settings: StoreFileSettings
        let keys: [EntityKey]
        let version: String

        /// `describedExactly`: the source, whose every table, column and row its model must
        /// explain (else a record-by-record migration would leave something behind).
        init(storeAt url: URL, describedExactly: Bool) throws {
            snapshot = try StoreSnapshot(storeAt: url)
            let path = snapshot.path
            (metadata, model, cache, statements, settings, keys) = try snapshot.read { db in
                try StoreReader.requireCoreDataSQL(db, path: path)
                guard let cache = try StoreReader.modelCache(db) else {
                    throw StoreError.noModel(
                        path: path, reason: "it has no model cache (Z_MODELCACHE), as Core Data's stores from before about 2015")
                }
                let model: CompiledModel
                do {
                    model = try ModelCacheDecoder.decode(cache)
                } catch {
                    throw StoreError.noModel(
                        path: path,
                        reason: "its model cache cannot be decoded: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
                }
                if describedExactly, case .tables(let reason) = try StoreDescription.ownDescription(db, path: path) {
                    throw StoreError.noModel(path: path, reason: "its model does not describe it exactly (\(reason))")
                }
                return (
                    try StoreReader.metadata(db, path: path), model, cache, try CoreDataSQL.schemaStatements(db),
                    // The new build's page layout; the migrated store's header is not the new build's.
                    try StoreFileSettings.of(db).pageLayout,
                    try StoreReader.entityKeys(db)
                )
            }
            version = metadata.versionIdentifiers.first ?? ""
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
                sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                arguments: [key.number, key.name, key.superNumber, max(previous ?? 0, key.maximumPrimaryKey)])
        }
    }

    /// The largest `Z_PK` of each old entity's rows.
    static func largestPrimaryKeys(_ source: Database, old: Side) throws -> [String: Int64] {
        var largest: [String: Int64] = [:]
        for plan in try ModelLayout(source, model: old.model).entities {
            largest[plan.name] = try Int64.fetchOne(source, sql: "SELECT max(Z_PK) FROM \(plan.table) WHERE Z_ENT = \(plan.number)")
        }
        return largest
    }

    /// The attribute `name` of `entity` or of an ancestor (sub-entities list only their own).
    static func attribute(_ name: String, of entity: String, in model: CompiledModel) -> CompiledAttribute? {
        model.lineage(of: entity).lazy.compactMap { $0.attributes.first { $0.name == name } }.first
    }

    /// Every record of every old entity into its new entity, value by value; returns the
    /// records written by new entity.
    static func copyRecords(
        from source: Database, old: Side, into db: Database, layout: ModelLayout, new: Side, log: RepairLog,
        progress report: ((RecordProgress) -> Void)? = nil, cancellation: Cancellation? = nil
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
                try Int.fetchOne(source, sql: "SELECT count(*) FROM \(oldPlan.table) WHERE Z_ENT = \(oldPlan.number)") ?? 0
        }
        let progress = RecordProgressCounter(report: report, totals: totals, step: "migrate", cancellation: cancellation)
        for plan in layout.entities {
            guard let entity = new.model.entity(named: plan.name), let previous = old.counterpart(of: entity),
                let oldPlan = oldLayout.entity(named: previous.name)
            else { continue }
            // Each new column's source: the old column of the same property (a renamed
            // attribute's by its original name), or its default.
            var selected = ["Z_PK", "Z_OPT"]
            var sources: [Int?] = []
            for field in plan.fields {
                let top = attribute(field.path[0], of: entity.name, in: new.model)
                let originalPath = [top?.renamingIdentifier ?? field.path[0]] + field.path.dropFirst()
                if let match = oldPlan.fields.first(where: { $0.path == field.path || $0.path == originalPath }) {
                    selected.append(match.column)
                    sources.append(selected.count - 1)
                } else {
                    sources.append(nil)
                }
            }
            for relationship in plan.toOne {
                let renamed = Self.relationship(relationship.name, of: entity.name, in: new.model)?.renamingIdentifier
                if let match = oldPlan.toOne.first(where: { $0.name == relationship.name || $0.name == renamed }) {
                    selected.append(match.column)
                    sources.append(selected.count - 1)
                } else {
                    sources.append(nil)
                }
            }
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + plan.fields.map(\.column) + plan.toOne.map(\.column)
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO \(plan.table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            let defaults: [StoredValue] = plan.fields.map { $0.defaultValue ?? .null } + plan.toOne.map { _ in .null }
            var written = 0
            try ExactSQL.forEachRow(
                source,
                sql: "SELECT \(selected.joined(separator: ", ")) FROM \(oldPlan.table) WHERE Z_ENT = \(oldPlan.number) ORDER BY Z_PK"
            ) { row in
                var values: [StoredValue] = [row[0], .integer(plan.number), row[1]]
                for (index, column) in sources.enumerated() {
                    let value = column.map { row[$0] } ?? defaults[index]
                    // A value the old store lacks (NULL) in a property that is now required gets its default, as Core
                    // Data's migration fills it: reported, since the record changes.
                    if column != nil, value == .null, index < plan.fields.count, !plan.fields[index].isOptional, defaults[index] != .null,
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
            let columns = ["Z_PK"] + oldPlan.fields.map(\.column) + oldPlan.toOne.map(\.column)
            try ExactSQL.forEachRow(
                source, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(oldPlan.table) WHERE Z_ENT = \(oldPlan.number) ORDER BY Z_PK"
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

    /// The (source, destination) record pairs a relationship's storage holds, whatever it is: a
    /// foreign key on the source or the destination, a hidden column, a join table.
    static func pairsSQL(_ storage: ModelTables.RelationshipStorage) -> String {
        switch storage {
        case .foreignKey(let table, let column): return "SELECT Z_PK, \(column) FROM \(table) WHERE \(column) IS NOT NULL"
        case .inverseForeignKey(let table, let column), .hiddenColumn(let table, let column):
            return "SELECT \(column), Z_PK FROM \(table) WHERE \(column) IS NOT NULL"
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
    static func copyLinks(from source: Database, old: Side, into db: Database, new: Side, log: RepairLog) throws {
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
                let write: Statement
                var reversed = false
                switch newStorage {
                case .foreignKey(let table, let column):
                    write = try db.makeStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?")
                    reversed = true
                case .inverseForeignKey(let table, let column), .hiddenColumn(let table, let column):
                    write = try db.makeStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?")
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
            let columns = try source.columns(in: name).map(\.name.quotedDatabaseIdentifier)
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO \(name.quotedDatabaseIdentifier) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            try ExactSQL.forEachRow(source, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(name.quotedDatabaseIdentifier)") { row in
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
            for plan in layout.entities {
                let found = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(plan.table) WHERE Z_ENT = \(plan.number)") ?? 0
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
