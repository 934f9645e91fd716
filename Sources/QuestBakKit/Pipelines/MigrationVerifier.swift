import Foundation
import GRDB

/// `questbak verify-migration`, the CI gate: every fixture store of an older schema is migrated
/// to the newest one and checked against a committed golden dump, against invariants that need
/// no golden file, and through an export → import → export round trip.
public struct MigrationVerifier {
    /// One check of one fixture store.
    public struct Check: Sendable, Encodable {
        /// The fixture store's path, relative to the fixtures folder.
        public var fixture: String
        /// What was checked: `read`, `migrate`, `golden`, `invariants`, `valid`, `round-trip`.
        public var name: String
        /// Whether the check passed.
        public var passed: Bool
        /// What was checked, or why it failed (a diff for golden dumps).
        public var detail: String
        /// For a golden check that failed because the fixture has no golden dump yet: the file
        /// name it looked for. How to record one is the caller's to say.
        public var missingExpectation: String?
        /// For a read that failed because the fixture is another app's store (it shares no entity
        /// with the schemas checked, SameApp): how to check it instead is the caller's to say.
        public var anotherAppsStore = false
    }

    /// `Date.now` during verification, so dumps do not change with the day they are made.
    package static let verificationNow: Double = 788_918_400  // 2026-01-01T00:00:00Z

    package var fixtures: URL
    package var target: Schema
    package var candidates: [Schema]
    /// Rewrite golden dumps instead of comparing with them.
    package var record = false
    /// For any app: a store made by the new build, whose model the fixtures migrate to
    /// (`target` is then that model as a schema value).
    package var modelStore: URL?
    /// Stores of the app's earlier models, oldest first, for a chain (`--through`).
    package var modelChain: [URL] = []

    package init(fixtures: URL, target: Schema = TimeQuestSchemas.newest, candidates: [Schema] = TimeQuestSchemas.all) {
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

    package func run(workDirectory: URL, report: (Check) -> Void) throws -> [Check] {
        if let modelStore { return try runModel(to: modelStore, workDirectory: workDirectory, report: report) }
        var checks: [Check] = []
        func add(_ check: Check) {
            checks.append(check)
            report(check)
        }
        for (index, store) in try fixtureStores().enumerated() {
            let label = store.path.hasPrefix(fixtures.path + "/") ? String(store.path.dropFirst(fixtures.path.count + 1)) : store.path
            let work = workDirectory.appendingPathComponent("fixture-\(index)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let sourceVersion: String
            do {
                sourceVersion = try StoreSnapshot(storeAt: store).read {
                    try StoreReader.detectSchema($0, path: store.path, candidates: candidates).versionIdentifier
                }
            } catch {
                // Another app's store is not a damaged TimeQuest store: say that, not which tables it lacks.
                let entities = try? StoreSnapshot(storeAt: store).read { try StoreReader.modelTables($0).map(\.entity.name) }
                if let entities, !candidates.contains(where: { SameApp.check($0.entities.map(\.name), entities) }) {
                    add(
                        Check(
                            fixture: label, name: "read", passed: false,
                            detail:
                                "\(store.path): not a TimeQuest store: it has none of TimeQuest's entities (its own: \(SameApp.list(entities)))",
                            anotherAppsStore: true))
                    continue
                }
                add(Check(fixture: label, name: "read", passed: false, detail: error.localizedDescription))
                continue
            }
            if sourceVersion == target.versionIdentifier { continue }
            let migrated = work.appendingPathComponent("migrated.store")
            let result: Migrator.Result
            do {
                result = try Migrator.migrate(
                    storeAt: store, to: target, output: migrated, options: Migrator.Options(now: Self.verificationNow),
                    workDirectory: work, candidates: candidates)
                add(Check(fixture: label, name: "migrate", passed: true, detail: "\(sourceVersion) → \(target.versionIdentifier)"))
            } catch {
                add(Check(fixture: label, name: "migrate", passed: false, detail: error.localizedDescription))
                continue
            }
            let dump = try StoreSnapshot(storeAt: migrated).read { try StoreDump.dump($0, schema: target, path: migrated.path) }
            add(try golden(dump, for: store, label: label))
            add(invariants(store: store, migrated: migrated, log: result.log, label: label))
            add(roundTrip(migrated, dump: dump, work: work, label: label))
        }
        return checks
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
        return Check(
            fixture: label, name: "golden", passed: false,
            detail:
                "differs from \(expectation.lastPathComponent):\n--- expected (\(expectation.lastPathComponent))\n+++ actual (the migrated store)\n"
                + StoreDump.diff(expected: expected, found: dump))
    }

    /// Checks that need no golden file: nothing lost or changed beyond what the log reports,
    /// unique well-formed cloudIDs, one singleton, relationships intact, the target's hashes.
    private func invariants(store: URL, migrated: URL, log: RepairLog, label: String) -> Check {
        var problems: [String] = []
        do {
            let (changed, removed) = try Self.reportedEdits(in: log)
            let (sourceSchema, before) = try StoreSnapshot(storeAt: store).read { db -> (Schema, [String: [EntityRecord]]) in
                let schema = try StoreReader.detectSchema(db, path: store.path, candidates: candidates)
                return (schema, try Self.records(db, schema: schema, path: store.path))
            }
            let (metadata, after) = try StoreSnapshot(storeAt: migrated).read { db in
                (try StoreReader.metadata(db, path: migrated.path), try Self.records(db, schema: target, path: migrated.path))
            }
            for oldEntity in sourceSchema.entities {
                guard let entity = target.entity(named: oldEntity.name) else { continue }
                let old = before[entity.name] ?? []
                let new = Dictionary(uniqueKeysWithValues: (after[entity.name] ?? []).map { ($0.primaryKey, $0) })
                let dropped = old.filter { removed.contains(RecordField(entity: entity.name, primaryKey: $0.primaryKey, field: "")) }.count
                if old.count - dropped != new.count {
                    problems.append(
                        "\(entity.name): \(old.count) records, \(dropped) reported as duplicates, but \(new.count) after migration")
                }
                for record in old {
                    guard let migratedRecord = new[record.primaryKey] else {
                        if !removed.contains(RecordField(entity: entity.name, primaryKey: record.primaryKey, field: "")) {
                            problems.append("\(entity.name) _pk \(record.primaryKey): missing after migration")
                        }
                        continue
                    }
                    for property in oldEntity.storedPropertyNames {
                        let newName = entity.attributes.first { $0.originalName == property }?.name ?? property
                        if changed.contains(RecordField(entity: entity.name, primaryKey: record.primaryKey, field: newName)) { continue }
                        if record[property] != migratedRecord[newName] {
                            problems.append(
                                "\(entity.name) _pk \(record.primaryKey) \(property): \(record[property]) became \(migratedRecord[newName])"
                            )
                        }
                    }
                }
                if entity.cloudID != nil {
                    let ids = (after[entity.name] ?? []).map { $0[Entity.cloudIDAttribute] }
                    if Set(ids).count != ids.count { problems.append("\(entity.name): two records share a cloudID") }
                    let sentinel = entity.identity.singletonCloudID
                    for id in ids {
                        guard case .string(let text) = id, text == sentinel || DeterministicID.isWellFormed(text) else {
                            problems.append("\(entity.name): cloudID \(id) is not well-formed")
                            break
                        }
                    }
                }
                if entity.identity.singletonCloudID != nil, !old.isEmpty, new.count != 1 {
                    problems.append("\(entity.name): \(new.count) records of a singleton")
                }
                for relationship in entity.toOneRelationships {
                    let targets = Set((after[relationship.destination] ?? []).map(\.primaryKey))
                    let sourceTargets = Set((before[relationship.destination] ?? []).map(\.primaryKey))
                    for record in after[entity.name] ?? [] {
                        guard case .integer(let key) = record[relationship.name], !targets.contains(key) else { continue }
                        if sourceTargets.contains(key) {
                            problems.append(
                                "\(entity.name) _pk \(record.primaryKey) \(relationship.name): points at a record the migration lost")
                        }
                    }
                }
            }
            if metadata.versionIdentifiers != [target.versionIdentifier] {
                problems.append("metadata version identifiers are \(metadata.versionIdentifiers), expected [\(target.versionIdentifier)]")
            }
            if metadata.entityHashes != ModelVersionHashes(schema: target).entityHashes {
                problems.append(
                    "the stored model hashes are not those of schema \(target.versionIdentifier): the app would not open the store")
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return Check(
            fixture: label, name: "invariants", passed: problems.isEmpty,
            detail: problems.isEmpty
                ? "counts, values, cloudIDs, singleton, relationships, hashes" : problems.prefix(20).joined(separator: "\n"))
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

    /// Export → import → export: the members must be byte-identical and the stores dump alike.
    private func roundTrip(_ migrated: URL, dump: String, work: URL, label: String) -> Check {
        do {
            let first = work.appendingPathComponent("first.qbak")
            let second = work.appendingPathComponent("second.qbak")
            let restored = work.appendingPathComponent("restored.store")
            var options = Exporter.Options(createdAt: Int64(Self.verificationNow) + DateText.referenceDateUnixOffset, compression: .none)
            options.schemas = candidates
            var importOptions = Importer.Options()
            importOptions.schemas = candidates
            let one = try Exporter.export(storeAt: migrated, to: .file(first, overwrite: true), options: options)
            let importWork = work.appendingPathComponent("import")
            try FileManager.default.createDirectory(at: importWork, withIntermediateDirectories: true)
            let imported = try Importer.run(archive: first.path, into: restored, options: importOptions, workDirectory: importWork)
            let two = try Exporter.export(storeAt: restored, to: .file(second, overwrite: true), options: options)
            var problems: [String] = []
            if imported.repairs > 0 { problems.append("the migrated store needed \(imported.repairs) repairs on import") }
            for (a, b) in zip(one.entities, two.entities) where a.sha256 != b.sha256 || a.count != b.count {
                problems.append(
                    "\(a.name): member differs after export → import → export (\(a.sha256.prefix(12)) vs \(b.sha256.prefix(12)))")
            }
            let restoredDump = try StoreSnapshot(storeAt: restored).read { try StoreDump.dump($0, schema: target, path: restored.path) }
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

    static func records(_ db: Database, schema: Schema, path: String) throws -> [String: [EntityRecord]] {
        var records: [String: [EntityRecord]] = [:]
        for entity in schema.entities {
            try StoreReader.forEachRecord(db, entity: entity, entityNumber: schema.entityNumber(of: entity.name), path: path) {
                records[entity.name, default: []].append($0)
            }
        }
        return records
    }
}
