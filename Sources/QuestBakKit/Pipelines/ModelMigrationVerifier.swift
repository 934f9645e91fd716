import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// The gate for any app (`verify-migration --to NEW_MODEL_STORE`): every fixture store of an older
/// model is migrated to the new build's model and checked as TimeQuest's are: a golden dump (the
/// migrated store's records as an archive writes them), invariants (every record, value and link
/// of the old store is in the new one, by entity, `_pk` and property, changed only where the
/// report says; the new model's hashes), and an export → import → export round trip.
extension MigrationVerifier {
    func runModel(to modelStore: URL, workDirectory: URL, report: (Check) -> Void) throws -> [Check] {
        var checks: [Check] = []
        func add(_ check: Check) {
            checks.append(check)
            report(check)
        }
        let targetHashes = ModelVersionHashes(schema: target)
        for (index, store) in try fixtureStores().enumerated() {
            let label = store.path.hasPrefix(fixtures.path + "/") ? String(store.path.dropFirst(fixtures.path.count + 1)) : store.path
            let work = workDirectory.appendingPathComponent("fixture-\(index)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let source: Schema
            do {
                source = try Schema.model(ofStoreAt: store)
            } catch {
                add(Check(fixture: label, name: "read", passed: false, detail: error.localizedDescription))
                continue
            }
            if ModelVersionHashes(schema: source) == targetHashes { continue }
            let migrated = work.appendingPathComponent("migrated.store")
            let result: Migrator.Result
            do {
                result = try ModelMigrator.migrate(
                    storeAt: store, through: modelChain, toModelOf: modelStore, output: migrated,
                    options: Migrator.Options(now: Self.verificationNow), workDirectory: work)
                add(
                    Check(
                        fixture: label, name: "migrate", passed: true,
                        detail: "\(result.sourceSchemaVersion) → \(result.targetSchemaVersion)"))
            } catch {
                add(Check(fixture: label, name: "migrate", passed: false, detail: error.localizedDescription))
                continue
            }
            // A migrated record the new model cannot hold (a value out of its type's range) is a
            // failing check, not the end of the gate: the validity check names it below.
            let dump = Result { try Self.modelDump(migrated) }
            switch dump {
            case .success(let text): add(try golden(text, for: store, label: label))
            case .failure(let error): add(Check(fixture: label, name: "golden", passed: false, detail: error.localizedDescription))
            }
            add(modelInvariants(store: store, migrated: migrated, logs: result.earlierLogs + [result.log], label: label))
            add(launchValidity(migrated, label: label))
            if case .success(let text) = dump { add(modelRoundTrip(migrated, dump: text, work: work, label: label)) }
        }
        return checks
    }

    /// A store's records as a model archive writes them, entity by entity: a stable text to diff.
    static func modelDump(_ store: URL) throws -> String {
        try records(store).map { entity, lines in (["# \(entity)"] + lines).joined(separator: "\n") }.joined(separator: "\n") + "\n"
    }

    /// Each entity's member lines (without the header), in entity-name order.
    static func records(_ store: URL) throws -> [(entity: String, lines: [String])] {
        let snapshot = try StoreSnapshot(storeAt: store)
        return try snapshot.read { db in
            guard let cache = try StoreReader.modelCache(db) else {
                throw StoreError.noModel(path: store.path, reason: "it has no model cache (Z_MODELCACHE)")
            }
            let layout = try ModelLayout(db, model: try ModelCacheDecoder.decode(cache))
            if let problem = layout.problems.first { throw StoreError.noModel(path: store.path, reason: problem) }
            return try layout.entities.map { plan in
                var bytes: [UInt8] = []
                _ = try ModelMemberEncoding.encode(db, plan: plan, schemaVersion: "", path: store.path) { bytes += $0 }
                return (plan.name, String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst().map(String.init))
            }
        }
    }

    /// Every record of the old store is in the new one with every value and link it had (a
    /// renamed property under its new name), but for what the report says changed; the new
    /// store's hashes are the new model's.
    func modelInvariants(store: URL, migrated: URL, logs: [RepairLog], label: String) -> Check {
        var problems: [String] = []
        do {
            var changed: Set<RecordField> = []
            for log in logs {
                changed.formUnion(try Self.reportedEdits(in: log).changed)
                changed.formUnion(try log.keys(rule: .cloudID))
            }
            // Each step's renames (`originalName`), from the step after the fixture's own model on:
            // a property renamed twice in a chain is followed to its last name.
            let models = try modelChain.map { try Schema.model(ofStoreAt: $0) } + [target]
            let own = ModelVersionHashes(schema: try Schema.model(ofStoreAt: store))
            let first = (models.firstIndex { ModelVersionHashes(schema: $0) == own } ?? -1) + 1
            func successorName(_ property: String, of entity: String) -> String {
                var name = property
                for model in models[min(first, models.count - 1)...] {
                    if let renamed = model.entity(named: entity)?.attributes.first(where: { $0.originalName == name }) {
                        name = renamed.name
                    }
                }
                return name
            }
            func objects(_ lines: [String]) throws -> [Int64: [String: JSONValue]] {
                var byKey: [Int64: [String: JSONValue]] = [:]
                for line in lines {
                    let members = try JSONLine.parseObject(Data(line.utf8))
                    guard case .integer(let key)? = members.first(where: { $0.key == RecordJSON.primaryKeyKey })?.value else { continue }
                    byKey[key] = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
                }
                return byKey
            }
            let after = Dictionary(try Self.records(migrated).map { ($0.entity, $0.lines) }, uniquingKeysWith: { first, _ in first })
            var droppedValues: [String: Int] = [:]
            for (entity, lines) in try Self.records(store) {
                let successor =
                    (target.entities.first { $0.name == entity } ?? target.entities.first { $0.originalName == entity })?.name ?? entity
                guard target.entity(named: successor) != nil else {
                    problems.append("\(entity) is not in the new model: its \(lines.count) records are dropped by the migration")
                    continue
                }
                let new = try objects(after[successor] ?? [])
                for (key, values) in try objects(lines).sorted(by: { $0.key < $1.key }) {
                    guard let migratedValues = new[key] else {
                        problems.append("\(entity) \(key) is missing")
                        continue
                    }
                    for (property, value) in values.sorted(by: { $0.key < $1.key }) {
                        let newName = successorName(property, of: successor)
                        let field = RecordField(entity: successor, primaryKey: key, field: newName)
                        if changed.contains(field) { continue }
                        // A relationship whose links now live on the other side (it gained an inverse) is not on
                        // this record any more; the migration counts its links on both sides.
                        if migratedValues[newName] == nil,
                            target.entity(named: successor)?.relationships.contains(where: {
                                $0.name == newName || $0.originalName == property
                            })
                                == true
                        {
                            continue
                        }
                        if migratedValues[newName] == nil, value != .null, value != .array([]) {
                            // A property the new model lacks: Core Data drops its values.
                            droppedValues["\(entity).\(property)", default: 0] += 1
                        } else if migratedValues[newName] != nil, migratedValues[newName] != value {
                            problems.append("\(entity) \(key) \(property) changed or was lost")
                        }
                    }
                }
            }
            for (property, count) in droppedValues.sorted(by: { $0.key < $1.key }) {
                problems.append(
                    "\(property) is not in the new model: \(count) value(s) dropped by the migration (removed, or renamed without originalName)"
                )
            }
            let metadata = try StoreSnapshot(storeAt: migrated).read { try StoreReader.metadata($0, path: migrated.path) }
            let differing = metadata.hashDifferences(from: ModelVersionHashes(schema: target))
            if !differing.isEmpty { problems.append("model hashes differ from the new model's for \(differing.joined(separator: ", "))") }
        } catch {
            problems.append(error.localizedDescription)
        }
        return Check(
            fixture: label, name: "invariants", passed: problems.isEmpty,
            detail: problems.isEmpty
                ? "every record, value and link kept (by entity, _pk, property), hashes the new model's"
                : problems.prefix(20).joined(separator: "\n"))
    }

    /// Every migrated record is valid under the new model, so the new build opens the store.
    func launchValidity(_ migrated: URL, label: String) -> Check {
        do {
            let problems = try LaunchValidity.problems(of: migrated)
            return Check(
                fixture: label, name: "valid", passed: problems.isEmpty,
                detail: problems.isEmpty
                    ? "every record valid under the new model (required values, ranges, required to-ones, uniqueness)"
                    : "the new build would fail to open the migrated store (Core Data 134110):\n" + problems.joined(separator: "\n"))
        } catch {
            return Check(fixture: label, name: "valid", passed: false, detail: error.localizedDescription)
        }
    }

    /// Export → import → export: the members are identical and the restored store dumps alike.
    func modelRoundTrip(_ migrated: URL, dump: String, work: URL, label: String) -> Check {
        do {
            let options = Exporter.Options(createdAt: Int64(Self.verificationNow) + DateText.referenceDateUnixOffset, compression: .none)
            let first = work.appendingPathComponent("first.qbak")
            let restored = work.appendingPathComponent("restored/default.store")
            let one = try Exporter.export(storeAt: migrated, to: .file(first, overwrite: true), options: options)
            let importWork = work.appendingPathComponent("import")
            try FileManager.default.createDirectory(at: importWork, withIntermediateDirectories: true)
            _ = try Importer.run(archive: first.path, into: restored, options: Importer.Options(), workDirectory: importWork)
            let two = try Exporter.export(
                storeAt: restored, to: .file(work.appendingPathComponent("second.qbak"), overwrite: true), options: options)
            var problems: [String] = []
            if one.schema != ArchiveManifest.Source.modelSchema {
                problems.append("the migrated store is not described by its model: \(one.warnings)")
            }
            if one.entities != two.entities { problems.append("the members differ after export → import → export") }
            if try Self.modelDump(restored) != dump { problems.append("the restored store dumps differently") }
            return Check(
                fixture: label, name: "round-trip", passed: problems.isEmpty,
                detail: problems.isEmpty ? "export → import → export identical" : problems.joined(separator: "\n"))
        } catch {
            return Check(fixture: label, name: "round-trip", passed: false, detail: error.localizedDescription)
        }
    }
}
