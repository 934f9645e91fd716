import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// `questbak verify-migration`, the CI gate, one for every app: every fixture store of an older
/// model is migrated (TimeQuest's to the newest schema or `target`; any app's, with `modelStore`,
/// to the model of the store its new build made) and checked with one set of checks over one
/// dump (`StoreDump`): the golden dump, invariants that need no golden file, the launch validity
/// of every record under the new model, and an export → import → export round trip.
package struct MigrationVerifier {
    /// One check of one fixture store (the API's name for it is public).
    package typealias Check = QuestBak.GateCheck

    /// `Date.now` during verification, so dumps do not change with the day they are made.
    package static let verificationNow: Double = 788_918_400  // 2026-01-01T00:00:00Z

    package var fixtures: URL
    package var target: ModelVersion
    package var candidates: [ModelVersion]
    /// Rewrite golden dumps instead of comparing with them.
    package var record = false
    /// For any app: a store made by the new build, whose model the fixtures migrate to
    /// (`target` is then that model).
    package var modelStore: URL?
    /// Stores of the app's earlier models, oldest first, for a chain (`--through`).
    package var modelChain: [URL] = []

    package init(fixtures: URL, target: ModelVersion, candidates: [ModelVersion]) {
        self.fixtures = fixtures
        self.target = target
        self.candidates = candidates.contains { $0.versionIdentifier == target.versionIdentifier } ? candidates : candidates + [target]
    }

    /// The golden dump of a fixture store: beside it, named after the target version.
    package func expectationURL(for store: URL) -> URL {
        URL(fileURLWithPath: store.path + ".expected-\(target.versionIdentifier).dump")
    }

    /// Store files directly in the fixtures folder or one level below it, sorted.
    package func fixtureStores() throws -> [URL] {
        var stores: [URL] = []
        let fileManager = FileManager.default
        for name in try fileManager.contentsOfDirectory(atPath: fixtures.path).sorted() {
            let url = fixtures.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            _ = fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                for inner in try fileManager.contentsOfDirectory(atPath: url.path).sorted() where inner.hasSuffix(".store") {
                    stores.append(url.appendingPathComponent(inner))
                }
            } else if name.hasSuffix(".store") {
                stores.append(url)
            }
        }
        return stores
    }

    /// One fixture's migration, as the checks see it.
    private struct Migration {
        var store: URL
        var label: String
        /// The fixture's own model, and the models after it whose renames a record follows.
        var source: ModelVersion
        var laterModels: [CompiledModel]
        var migrated: URL
        var logs: [RepairLog]
    }

    package func run(workDirectory: URL, report: (Check) -> Void) throws -> [Check] {
        var checks: [Check] = []
        func add(_ check: Check) {
            checks.append(check)
            report(check)
        }
        // The model the fixtures migrate to, and what the migrated store's metadata must then say.
        let targetModel = try modelStore.map { try ModelVersion.of(storeAt: $0) } ?? target
        let chainModels = try modelChain.map { try CompiledModel.model(ofStoreAt: $0) } + [targetModel.compiled]
        let targetVersions = try modelStore.map { store in
            try StoreSnapshot(storeAt: store).read { try StoreReader.metadata($0, path: store.path) }.versionIdentifiers
        }
        for (index, store) in try fixtureStores().enumerated() {
            let label = store.path.hasPrefix(fixtures.path + "/") ? String(store.path.dropFirst(fixtures.path.count + 1)) : store.path
            let work = workDirectory.appendingPathComponent("fixture-\(index)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let source: ModelVersion
            do {
                source = try sourceModel(of: store)
            } catch {
                add(readFailure(store, label: label, error))
                continue
            }
            let migrated = work.appendingPathComponent("migrated.store")
            let result: Migrator.Result
            do {
                // A fixture already at the target is not checked.
                guard let migrationResult = try migrate(store, from: source, to: migrated, target: targetModel, work: work) else {
                    continue
                }
                result = migrationResult
                add(
                    Check(
                        fixture: label, name: "migrate", passed: true,
                        detail: "\(result.sourceSchemaVersion) → \(result.targetSchemaVersion)"))
            } catch {
                add(Check(fixture: label, name: "migrate", passed: false, detail: error.localizedDescription))
                continue
            }
            let own = ModelVersionHashes(model: source.compiled)
            let first = (chainModels.firstIndex { ModelVersionHashes(model: $0) == own } ?? -1) + 1
            let migration = Migration(
                store: store, label: label, source: source, laterModels: Array(chainModels[min(first, chainModels.count - 1)...]),
                migrated: migrated, logs: result.earlierLogs + [result.log])
            // A migrated record the new model cannot hold (a value out of its type's range) is a
            // failing check, not the end of the gate: the validity check names it below.
            let dump = Result { try StoreDump.dump(storeAt: migrated, model: targetModel) }
            switch dump {
            case .success(let text): add(try golden(text, for: store, label: label))
            case .failure(let error): add(Check(fixture: label, name: "golden", passed: false, detail: error.localizedDescription))
            }
            add(invariants(migration, target: targetModel, versions: targetVersions ?? [target.versionIdentifier]))
            add(launchValidity(migrated, model: targetModel, label: label))
            if case .success(let text) = dump { add(roundTrip(migrated, dump: text, model: targetModel, work: work, label: label)) }
        }
        return checks
    }

    /// The fixture's own model: the TimeQuest schema it is (of `candidates`), or, for any app's
    /// fixtures, the model it carries.
    private func sourceModel(of store: URL) throws -> ModelVersion {
        if modelStore != nil { return try ModelVersion.of(storeAt: store) }
        return try StoreSnapshot(storeAt: store).read { try StoreReader.detectVersion($0, path: store.path, candidates: candidates) }
    }

    /// Why a fixture could not be read. Another app's store is not a damaged TimeQuest store:
    /// that is said, not which tables it lacks.
    private func readFailure(_ store: URL, label: String, _ error: Error) -> Check {
        if modelStore == nil,
            let entities = try? StoreSnapshot(storeAt: store).read({ try StoreReader.modelTables($0).map(\.entity.name) }),
            !candidates.contains(where: { SameApp.check($0.entities.map(\.name), entities) })
        {
            return Check(
                fixture: label, name: "read", passed: false,
                detail: "\(store.path): not a TimeQuest store: it has none of TimeQuest's entities (its own: \(SameApp.list(entities)))",
                anotherAppsStore: true)
        }
        return Check(fixture: label, name: "read", passed: false, detail: error.localizedDescription)
    }

    /// The fixture migrated to the target (a new build's model, or the profile's version); nil
    /// for a fixture already at the target, which is not checked.
    private func migrate(
        _ store: URL, from source: ModelVersion, to migrated: URL, target targetModel: ModelVersion, work: URL
    ) throws -> Migrator.Result? {
        let options = Migrator.Options(now: Self.verificationNow)
        if let modelStore {
            if ModelVersionHashes(model: source.compiled) == ModelVersionHashes(model: targetModel.compiled) { return nil }
            return try ModelMigrator.migrate(
                storeAt: store, through: modelChain, toModelOf: modelStore, output: migrated, options: options, workDirectory: work)
        }
        if source.compiled.versionIdentifier == target.versionIdentifier { return nil }
        return try ModelMigrator.migrate(
            storeAt: store, toVersion: target, candidates: candidates, output: migrated, options: options, workDirectory: work)
    }

    func golden(_ dump: String, for store: URL, label: String) throws -> Check {
        let expectation = expectationURL(for: store)
        if record {
            try Data(dump.utf8).write(to: expectation)
            return Check(
                fixture: label, name: "golden", passed: false,
                detail: "recorded \(expectation.lastPathComponent); rerun without record mode to verify")
        }
        guard let expected = try? String(contentsOf: expectation, encoding: .utf8) else {
            return Check(
                fixture: label, name: "golden", passed: false,
                detail: "no expectation \(expectation.lastPathComponent); record one and review it",
                missingExpectation: expectation.lastPathComponent)
        }
        if expected == dump {
            return Check(fixture: label, name: "golden", passed: true, detail: expectation.lastPathComponent)
        }
        // A golden recorded in an earlier form differs on every line; a diff would hide the cause.
        if expected.prefix(while: { $0 != "\n" }) != StoreDump.header {
            return Check(
                fixture: label, name: "golden", passed: false,
                detail:
                    "\(expectation.lastPathComponent) is in an earlier dump format (its first line is not \"\(StoreDump.header)\"): "
                    + "record it again and review that only its form changed",
                earlierDumpFormat: expectation.lastPathComponent)
        }
        return Check(
            fixture: label, name: "golden", passed: false,
            detail:
                "differs from \(expectation.lastPathComponent):\n--- expected (\(expectation.lastPathComponent))\n+++ actual (the migrated store)\n"
                + StoreDump.diff(expected: expected, found: dump))
    }

    /// Checks that need no golden file, over the records of the fixture (read by its own model)
    /// and of the migrated store (by the new one): every record, value and link of the old store
    /// is in the new one by entity, `_pk` and property (a renamed property under its new name),
    /// changed or removed only where the report says; cloudIDs unique and well-formed; one
    /// record of a singleton; no to-one left pointing at a record the migration lost; the new
    /// model's version identifiers and hashes.
    private func invariants(_ migration: Migration, target targetModel: ModelVersion, versions: [String]) -> Check {
        var problems: [String] = []
        do {
            var changed: Set<RecordField> = []
            var removed: Set<RecordField> = []
            for log in migration.logs {
                let edits = try Self.reportedEdits(in: log)
                changed.formUnion(edits.changed)
                removed.formUnion(edits.removed)
                // The cloudID rule gives a record another ID, and reports it.
                changed.formUnion(try log.keys(rule: .cloudID))
            }
            // A property renamed twice in a chain is followed to its last name.
            func successorName(_ property: String, of entity: String) -> String {
                var name = property
                for model in migration.laterModels {
                    if let renamed = model.entity(named: entity)?.attributes.first(where: { $0.originalName == name }) {
                        name = renamed.name
                    }
                }
                return name
            }
            let before = try Self.objects(StoreDump.entities(storeAt: migration.store, model: migration.source, maskingCloudIDs: false))
            let after = try Self.objects(StoreDump.entities(storeAt: migration.migrated, model: targetModel, maskingCloudIDs: false))
            var droppedValues: [String: Int] = [:]
            var successors: [String: String] = [:]
            for (entity, old) in before.sorted(by: { $0.key < $1.key }) {
                let successor =
                    (targetModel.entitiesInNameOrder.first { $0.name == entity }
                    ?? targetModel.entitiesInNameOrder.first { $0.originalName == entity })?.name ?? entity
                guard targetModel.compiled.entity(named: successor) != nil else {
                    problems.append("\(entity) is not in the new model: its \(old.count) records are dropped by the migration")
                    continue
                }
                successors[successor] = entity
                let new = after[successor] ?? [:]
                let dropped = old.keys.filter { removed.contains(RecordField(entity: successor, primaryKey: $0, field: "")) }.count
                if old.count - dropped != new.count {
                    problems.append("\(successor): \(old.count) records, \(dropped) reported as removed, but \(new.count) after migration")
                }
                for (key, values) in old.sorted(by: { $0.key < $1.key }) {
                    guard let migratedValues = new[key] else {
                        if !removed.contains(RecordField(entity: successor, primaryKey: key, field: "")) {
                            problems.append("\(entity) _pk \(key): missing after migration")
                        }
                        continue
                    }
                    for (property, value) in values.sorted(by: { $0.key < $1.key }) where property != RecordJSON.optKey {
                        let newName = successorName(property, of: successor)
                        if changed.contains(RecordField(entity: successor, primaryKey: key, field: newName)) { continue }
                        // A relationship whose links now live on the other side (it gained an inverse) is not on
                        // this record any more; the migration counts its links on both sides.
                        if migratedValues[newName] == nil,
                            targetModel.compiled.entity(named: successor)?.relationships.contains(where: {
                                $0.name == newName || $0.originalName == property
                            })
                                == true
                        {
                            continue
                        }
                        if migratedValues[newName] == nil, value != .null, value != .array([]) {
                            // A property the new model lacks: Core Data drops its values.
                            droppedValues["\(entity).\(property)", default: 0] += 1
                        } else if let migratedValue = migratedValues[newName], migratedValue != value {
                            problems.append("\(entity) _pk \(key) \(property): \(Self.text(value)) became \(Self.text(migratedValue))")
                        }
                    }
                }
            }
            for (property, count) in droppedValues.sorted(by: { $0.key < $1.key }) {
                problems.append(
                    "\(property) is not in the new model: \(count) value(s) dropped by the migration (removed, or renamed without originalName)"
                )
            }
            problems += identityProblems(before: before, after: after, predecessors: successors, model: targetModel)
            let metadata = try StoreSnapshot(storeAt: migration.migrated).read {
                try StoreReader.metadata($0, path: migration.migrated.path)
            }
            if metadata.versionIdentifiers != versions {
                problems.append("metadata version identifiers are \(metadata.versionIdentifiers), expected \(versions)")
            }
            let differing = metadata.hashDifferences(from: ModelVersionHashes(model: targetModel.compiled))
            if !differing.isEmpty {
                problems.append(
                    "model hashes differ from the new model's for \(differing.joined(separator: ", ")): the new build would not open the store"
                )
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return Check(
            fixture: migration.label, name: "invariants", passed: problems.isEmpty,
            detail: problems.isEmpty
                ? "every record, value and link kept (by entity, _pk, property) but for reported repairs; cloudIDs, singletons, hashes"
                : problems.prefix(20).joined(separator: "\n"))
    }

    /// What identity promises after the migration, where the new model has it: every cloudID
    /// (a text `cloudID` attribute) well-formed or a singleton's sentinel and unique in its entity,
    /// one record of a singleton that had records, no to-one naming a record the migration lost.
    private func identityProblems(
        before: [String: [Int64: [String: JSONValue]]], after: [String: [Int64: [String: JSONValue]]], predecessors: [String: String],
        model: ModelVersion
    ) -> [String] {
        var problems: [String] = []
        // The records an entity's to-one may name: its own and its sub-entities'.
        func keys(of destination: String, in records: [String: [Int64: [String: JSONValue]]], renamed: Bool) -> Set<Int64> {
            var found: Set<Int64> = []
            for entity in model.entitiesInNameOrder where model.lineage(of: entity.name).contains(destination) {
                found.formUnion((records[renamed ? predecessors[entity.name] ?? entity.name : entity.name] ?? [:]).keys)
            }
            return found
        }
        for entity in model.entitiesInNameOrder {
            let records = after[entity.name] ?? [:]
            if model.kind(of: CompiledEntity.cloudIDAttribute, in: entity.name) == .string {
                var seen: Set<String> = []
                for (key, values) in records.sorted(by: { $0.key < $1.key }) {
                    guard case .string(let id)? = values[CompiledEntity.cloudIDAttribute],
                        id == model.identity(of: entity.name).singletonCloudID || DeterministicID.isWellFormed(id)
                    else {
                        problems.append(
                            "\(entity.name) _pk \(key): cloudID \(Self.text(values[CompiledEntity.cloudIDAttribute] ?? .null)) is not well-formed"
                        )
                        continue
                    }
                    if !seen.insert(id).inserted { problems.append("\(entity.name) _pk \(key): shares its cloudID with another record") }
                }
            }
            let had = before[predecessors[entity.name] ?? entity.name]?.isEmpty == false
            if model.identity(of: entity.name).singletonCloudID != nil, had, records.count != 1 {
                problems.append("\(entity.name): \(records.count) records of a singleton")
            }
            for relationship in entity.relationships where !relationship.isToMany {
                let targets = keys(of: relationship.destination, in: after, renamed: false)
                let sourceTargets = keys(of: relationship.destination, in: before, renamed: true)
                for (key, values) in records.sorted(by: { $0.key < $1.key }) {
                    guard case .integer(let target)? = values[relationship.name], !targets.contains(target), sourceTargets.contains(target)
                    else { continue }
                    problems.append("\(entity.name) _pk \(key) \(relationship.name): points at a record the migration lost")
                }
            }
        }
        return problems
    }

    /// Each entity's records by `_pk`, each a dictionary of its line's members.
    static func objects(_ entities: [StoreDump.EntityRecords]) throws -> [String: [Int64: [String: JSONValue]]] {
        var objects: [String: [Int64: [String: JSONValue]]] = [:]
        for entity in entities {
            var byKey: [Int64: [String: JSONValue]] = [:]
            for line in entity.lines {
                let members = try JSONLine.parseObject(Data(line.utf8))
                guard case .integer(let key)? = members.first(where: { $0.key == RecordJSON.primaryKeyKey })?.value else { continue }
                byKey[key] = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            }
            objects[entity.name] = byKey
        }
        return objects
    }

    /// A value as its dump line shows it.
    static func text(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
    }

    /// Fields a reported repair changed and records a reported repair removed (`field` ""), as the
    /// repair rules declare their effects: a rule added to the pipeline is known here too.
    static func reportedEdits(
        in log: RepairLog, rules: [any RepairRule] = RepairPipeline.rules
    ) throws -> (changed: Set<RecordField>, removed: Set<RecordField>) {
        var changed: Set<RecordField> = []
        var removed: Set<RecordField> = []
        var read: Set<RepairRuleEffect> = []
        for rule in rules {
            for declared in rule.effects where read.insert(declared).inserted {
                if declared.effect == .removesRecord {
                    removed.formUnion(try log.keys(rule: declared.logged))
                } else if declared.effect.changesReportedField {
                    changed.formUnion(try log.keys(rule: declared.logged))
                }
            }
        }
        return (changed, removed)
    }

    /// Every migrated record is valid under the new model, so the new build opens the store.
    private func launchValidity(_ migrated: URL, model: ModelVersion, label: String) -> Check {
        do {
            let problems = try LaunchValidity.problems(of: migrated, model: model)
            return Check(
                fixture: label, name: "valid", passed: problems.isEmpty,
                detail: problems.isEmpty
                    ? "every record valid under the new model (required values, ranges, required to-ones, uniqueness)"
                    : "the new build would fail to open the migrated store (Core Data 134110):\n" + problems.joined(separator: "\n"))
        } catch {
            return Check(fixture: label, name: "valid", passed: false, detail: error.localizedDescription)
        }
    }

    /// Export → import → export: the migrated store is described as the new model, needs no
    /// repair on import, the members are identical and the restored store dumps alike.
    private func roundTrip(_ migrated: URL, dump: String, model: ModelVersion, work: URL, label: String) -> Check {
        do {
            let first = work.appendingPathComponent("first.qbak")
            let second = work.appendingPathComponent("second.qbak")
            let restored = work.appendingPathComponent("restored/default.store")
            var options = Exporter.Options(createdAt: Int64(Self.verificationNow) + DateText.referenceDateUnixOffset, compression: .none)
            var importOptions = Importer.Options()
            // TimeQuest's stores are described by its schemas, as a profile (they carry their own
            // natural keys); any app's by the model it carries.
            let profiles = modelStore == nil ? [AppProfile(name: "the schemas checked", versions: candidates)] : []
            options.profiles = profiles
            importOptions.profiles = profiles
            let one = try Exporter.export(storeAt: migrated, to: .file(first, overwrite: true), options: options)
            let importWork = work.appendingPathComponent("import")
            try FileManager.default.createDirectory(at: importWork, withIntermediateDirectories: true)
            let imported = try Importer.run(archive: first.path, into: restored, options: importOptions, workDirectory: importWork)
            let two = try Exporter.export(storeAt: restored, to: .file(second, overwrite: true), options: options)
            var problems: [String] = []
            // TimeQuest's by its schema of the target version; any app's by its own model.
            if modelStore == nil, one.schema != ArchiveManifest.Source.knownSchema || one.schemaVersion != target.versionIdentifier {
                problems.append("the migrated store is not described by schema \(target.versionIdentifier): \(one.warnings)")
            } else if modelStore != nil, one.schema != ArchiveManifest.Source.modelSchema {
                problems.append("the migrated store is not described by its model: \(one.warnings)")
            }
            if imported.repairs > 0 { problems.append("the migrated store needed \(imported.repairs) repairs on import") }
            if one.entities.map(\.name) != two.entities.map(\.name) {
                problems.append("the entities differ after export → import → export")
            }
            for (a, b) in zip(one.entities, two.entities) where a.sha256 != b.sha256 || a.count != b.count {
                problems.append(
                    "\(a.name): member differs after export → import → export (\(a.sha256.prefix(12)) vs \(b.sha256.prefix(12)))")
            }
            let restoredDump = try StoreDump.dump(storeAt: restored, model: model)
            if restoredDump != dump {
                problems.append(
                    "restored store dumps differently:\n--- expected (the migrated store)\n+++ actual (exported and imported again)\n"
                        + StoreDump.diff(expected: dump, found: restoredDump))
            }
            return Check(
                fixture: label, name: "round-trip", passed: problems.isEmpty,
                detail: problems.isEmpty ? "export → import → export identical" : problems.joined(separator: "\n"))
        } catch {
            return Check(fixture: label, name: "round-trip", passed: false, detail: error.localizedDescription)
        }
    }
}
