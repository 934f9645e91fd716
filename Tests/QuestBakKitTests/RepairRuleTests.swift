import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// Runs repair rules directly on a small store: the dataset is written with `StoreWriter` and
/// the rules applied inside the same transaction, as an import does. The store is committed
/// afterwards, so its rows can be read back; the log holds every entry.
struct RuleRun {
    var store: URL
    var schema: Schema
    var log: RepairLog
    /// What the rules threw, if anything (caught inside the transaction, so it is not wrapped).
    var failure: Error?
    /// Kept alive as long as the run: the folder is removed when it is released.
    var directory: TemporaryTestDirectory

    static let storeUUID = "6D1B2C3A-0000-4000-8000-0000000000F1"

    /// Writes `dataset` and calls `body` with a context on the store being written.
    static func run(
        _ dataset: Dataset, in directory: TemporaryTestDirectory, defaultsSchema: Schema? = nil, now: Double = 0, randomIDs: Bool = false,
        cloudIDKind: RepairEntry.Kind = .repair, body: (RepairContext) throws -> Void
    ) throws -> RuleRun {
        let name = UUID().uuidString
        let store = directory.path("rules-\(name).store")
        let logDirectory = directory.path("log-\(name)")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let log = try RepairLog(directory: logDirectory)
        var failure: Error?
        try StoreWriter.write(to: store, schema: dataset.schema) { sink in
            for entity in dataset.schema.entities {
                for record in dataset.records[entity.name] ?? [] { try sink.insert(record, into: entity.name) }
            }
            let context = try RepairContext(
                db: sink.database, version: ModelVersion(schema: dataset.schema), entityNumbers: sink.entityNumbers,
                defaults: ModelVersion(schema: defaultsSchema ?? dataset.schema), now: now, randomIDs: randomIDs,
                cloudIDKind: cloudIDKind, log: log, path: store.path)
            do { try body(context) } catch { failure = error }
            return StoreWriter.Bookkeeping(metadata: StoreMetadata(model: CompiledModel(schema: dataset.schema), uuid: storeUUID))
        }
        return RuleRun(store: store, schema: dataset.schema, log: log, failure: failure, directory: directory)
    }

    /// Applies `rules` one after the other, without the pipeline's final cloudID pass over the log.
    static func apply(
        _ rules: [any RepairRule], to dataset: Dataset, in directory: TemporaryTestDirectory, defaultsSchema: Schema? = nil,
        now: Double = 0,
        randomIDs: Bool = false, cloudIDKind: RepairEntry.Kind = .repair, keepDistinctIDs: Bool = false
    ) throws -> RuleRun {
        try run(dataset, in: directory, defaultsSchema: defaultsSchema, now: now, randomIDs: randomIDs, cloudIDKind: cloudIDKind) {
            context in
            var context = context
            context.keepDistinctIDs = keepDistinctIDs
            for rule in rules { try rule.apply(in: context) }
        }
    }

    /// The records of `entity` after the rules, in `Z_PK` order.
    func records(_ entity: String) throws -> [EntityRecord] {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try StoreReader.records(db, version: ModelVersion(schema: schema), entity: entity, path: store.path)
        }
    }

    /// One value of every record of `entity`, by `Z_PK`.
    func values(_ entity: String, _ property: String) throws -> [Int64: Value] {
        Dictionary(uniqueKeysWithValues: try records(entity).map { ($0.primaryKey, $0[property]) })
    }

    /// The log as the text report writes it, one entry a line, in the order recorded.
    func entries() throws -> [String] {
        try log.firstEntries(10_000).map(\.sentence)
    }

    /// The log as JSON objects, in the order recorded.
    func entryObjects() throws -> [[String: Any]] {
        var objects: [[String: Any]] = []
        try log.forEachEntryLine { line in
            objects.append(try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
        }
        return objects
    }
}

/// The JSON a report writes for `value`, for expected log lines.
func reportJSON(_ value: Value) -> String {
    ReportValue.value(value).json
}

enum RuleDatasets {
    static let cloudA = "8F2B6E9A-3C41-4D7E-9A0B-1C2D3E4F5A6B"
    static let cloudB = "1B2C3D4E-5F60-4718-8A9B-0C1D2E3F4A5B"

    /// A V2 routine with every value set, over which a test puts its own.
    static func routine(_ values: [String: Value] = [:]) -> [String: Value] {
        var routine: [String: Value] = [
            "name": .string("morning"), "displayName": .string("Morning"), "activeDays": .integerArray([1, 2]), "isActive": .boolean(true),
            "createdAt": .date(10.5), "updatedAt": .date(11.5),
        ]
        routine.merge(values) { $1 }
        return routine
    }

    /// A V2 store that needs every rule: an orphan, a duplicate with a child and a cloudID to
    /// carry over, two profiles, missing required values and bad cloudIDs.
    static func messy() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, routine(["displayName": .null]))
        dataset.append("Routine", 2, routine(["cloudID": .string(cloudA)]))
        dataset.append("Routine", 3, routine(["name": .string("evening"), "cloudID": .string("not-a-uuid")]))
        dataset.append(
            "RoutineTask", 1,
            ["name": .string("brush"), "displayName": .string("Brush"), "orderIndex": .integer(0), "routine": .integer(2)])
        dataset.append(
            "RoutineTask", 2, ["name": .string("floss"), "displayName": .null, "orderIndex": .integer(1), "routine": .integer(99)])
        dataset.append("GameSession", 1, ["startedAt": .date(20), "xpEarned": .integer(3), "routine": .integer(1)])
        dataset.append(
            "TaskEstimation", 1,
            [
                "taskDisplayName": .string("Brush"), "estimatedSeconds": .double(60), "actualSeconds": .double(70),
                "differenceSeconds": .double(10),
                "accuracyPercent": .double(85), "ratingRawValue": .string("close"), "orderIndex": .integer(0), "recordedAt": .date(21),
                "session": .integer(7),
            ])
        dataset.append("PlayerProfile", 1, ["totalXP": .integer(5), "currentStreak": .integer(1), "createdAt": .date(30)])
        dataset.append("PlayerProfile", 2, ["totalXP": .integer(9), "currentStreak": .integer(0), "createdAt": .date(40)])
        return dataset
    }
}

/// The registry: the pipeline's list, the effects each rule declares, and the verifier reading them.
final class RepairRuleTests: XCTestCase {
    /// A store of a profile's schema whose table lacks a property's column is refused by name
    /// before any rule runs: a rule that cannot find a natural key, a cloudID or a required
    /// value's column would otherwise skip it without a word.
    func testAPropertyWithoutItsColumnRefusesTheRepairByName() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("missing-column.store")
        let logDirectory = directory.path("log")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let log = try RepairLog(directory: logDirectory)
        var refusal: Error?
        try StoreWriter.write(to: store, schema: TimeQuestSchemas.v1) { sink in
            try sink.database.execute(sql: "ALTER TABLE ZROUTINE DROP COLUMN ZNAME")
            do {
                _ = try RepairContext(
                    db: sink.database, version: ModelVersion(schema: TimeQuestSchemas.v1), entityNumbers: sink.entityNumbers,
                    defaults: ModelVersion(schema: TimeQuestSchemas.v1),
                    now: 0, randomIDs: false, cloudIDKind: .repair, log: log, path: store.path)
            } catch {
                refusal = error
            }
            return StoreWriter.Bookkeeping(metadata: StoreMetadata(declaration: TimeQuestSchemas.v1, uuid: RuleRun.storeUUID))
        }
        let message = try XCTUnwrap(refusal as? StoreError).errorDescription ?? ""
        XCTAssertTrue(message.contains("Routine.name has no column"), message)
    }

    func testThePipelineListsTheRulesInTheOrderTheyRun() {
        XCTAssertEqual(
            RepairPipeline.rules.map { String(describing: type(of: $0)) },
            ["UniqueConstraintRule", "OrphanRule", "DuplicateRule", "SingletonMergeRule", "DefaultFillRule", "CloudIDRule"])
    }

    func testEveryRuleDeclaresAnEffectAndEveryLoggedNameHasOneMeaning() {
        var meaning: [RepairEntry.Rule: RepairEffect] = [:]
        for rule in RepairPipeline.rules {
            XCTAssertFalse(rule.effects.isEmpty, "\(type(of: rule)) declares no effect")
            for declared in rule.effects {
                if let earlier = meaning[declared.logged] {
                    XCTAssertEqual(earlier, declared.effect, "\(type(of: rule)) gives \(declared.logged) another effect")
                }
                meaning[declared.logged] = declared.effect
            }
        }
        // Every name in the log comes from a rule, except the importer's own bookkeeping and
        // what a merge (`import --merge`) does to the store it merges into.
        let importerOnly: Set<RepairEntry.Rule> = [.unknownProperty, .maximumPrimaryKey, .metadata]
        let mergeOnly: Set<RepairEntry.Rule> = [.insert, .fill, .conflict, .supersede, .link, .dangling]
        XCTAssertEqual(Set(meaning.keys), Set(RepairEntry.Rule.allCases).subtracting(importerOnly).subtracting(mergeOnly))
        XCTAssertEqual(
            meaning,
            [
                .orphan: .changesField, .dedup: .removesRecord, .repoint: .repointsRelationship, .merge: .changesField,
                .defaultFill: .changesField, .cloudID: .assignsCloudID,
            ])
    }

    /// One entry of every kind, so the verifier's sets can be compared with the log's keys.
    func logWithOneEntryOfEachRule(in directory: TemporaryTestDirectory) throws -> RepairLog {
        let log = try RepairLog(directory: directory.url)
        for (offset, rule) in RepairEntry.Rule.allCases.enumerated() {
            try log.record(
                RepairEntry(
                    rule: rule, kind: .repair, entity: "Routine", primaryKey: Int64(offset + 1), cloudID: nil,
                    field: rule == .dedup ? nil : "field\(offset)", old: .value(.null), new: .value(.null)))
        }
        return log
    }

    func testTheVerifiersChangedAndRemovedSetsComeFromTheDeclaredEffects() throws {
        let directory = try TemporaryTestDirectory()
        let log = try logWithOneEntryOfEachRule(in: directory)
        let (changed, removed) = try MigrationVerifier.reportedEdits(in: log)
        // What the hand-written union said before the registry existed.
        XCTAssertEqual(
            changed,
            try log.keys(rule: .merge).union(log.keys(rule: .repoint)).union(log.keys(rule: .orphan)).union(log.keys(rule: .defaultFill)))
        XCTAssertEqual(removed, try log.keys(rule: .dedup))
        XCTAssertEqual(changed.count, 4)
        XCTAssertEqual(
            removed, [RecordField(entity: "Routine", primaryKey: Int64(RepairEntry.Rule.allCases.firstIndex(of: .dedup)! + 1), field: "")])
        // And what the list says, rule by rule.
        var expectedChanged: Set<RecordField> = []
        var expectedRemoved: Set<RecordField> = []
        for rule in RepairPipeline.rules {
            for declared in rule.effects {
                switch declared.effect {
                case .changesField, .repointsRelationship: expectedChanged.formUnion(try log.keys(rule: declared.logged))
                case .removesRecord: expectedRemoved.formUnion(try log.keys(rule: declared.logged))
                case .assignsCloudID: break
                }
            }
        }
        XCTAssertEqual(changed, expectedChanged)
        XCTAssertEqual(removed, expectedRemoved)
    }

    /// A rule added to the list is known to the verifier with no other change.
    struct ClearsCloudIDs: RepairRule {
        var effects: [RepairRuleEffect] { [RepairRuleEffect(.cloudID, .changesField), RepairRuleEffect(.unknownProperty, .removesRecord)] }
        func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> { [CompiledEntity.cloudIDAttribute] }
        func apply(in context: RepairContext) throws -> [String] {
            try context.log.record(
                RepairEntry(
                    rule: .cloudID, kind: .repair, entity: "Routine", primaryKey: 1, cloudID: nil, field: CompiledEntity.cloudIDAttribute,
                    old: .value(.null), new: .value(.null)))
            return []
        }
    }

    func testTheVerifierReadsWhicheverListItIsGiven() throws {
        let directory = try TemporaryTestDirectory()
        let log = try logWithOneEntryOfEachRule(in: directory)
        let onlyOrphans = try MigrationVerifier.reportedEdits(in: log, rules: [OrphanRule()])
        XCTAssertEqual(onlyOrphans.changed, try log.keys(rule: .orphan))
        XCTAssertEqual(onlyOrphans.removed, [])
        let withNewRule = try MigrationVerifier.reportedEdits(in: log, rules: RepairPipeline.rules + [ClearsCloudIDs()])
        XCTAssertTrue(withNewRule.changed.isSuperset(of: try log.keys(rule: .cloudID)))
        XCTAssertTrue(withNewRule.removed.isSuperset(of: try log.keys(rule: .unknownProperty)))
        XCTAssertFalse(try MigrationVerifier.reportedEdits(in: log).changed.isSuperset(of: try log.keys(rule: .cloudID)))
    }

    func testANewRuleRunsInItsPlaceAndItsEntriesGetFinalCloudIDs() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, RuleDatasets.routine())
        let run = try RuleRun.run(dataset, in: try TemporaryTestDirectory()) { context in
            try RepairPipeline.run(in: context, rules: [ClearsCloudIDs()] + RepairPipeline.rules)
        }
        XCTAssertNil(run.failure)
        let finalID = try XCTUnwrap(run.values("Routine", "cloudID")[1]?.stringValue)
        let entries = try run.entries()
        XCTAssertEqual(entries.count, 2, "\(entries)")
        // The new rule's entry first, then CloudIDRule's; both name the record's final cloudID.
        XCTAssertTrue(entries.allSatisfy { $0.contains("Routine _pk 1 (\(finalID))") }, "\(entries)")
        XCTAssertTrue(entries[0].hasSuffix("cloudID: null → null"), "\(entries)")
        XCTAssertTrue(entries[1].hasPrefix("repair cloudID:"), "\(entries)")
    }

    func testEveryLoggedFieldIsOneItsRuleDeclares() throws {
        let run = try RuleRun.run(RuleDatasets.messy(), in: try TemporaryTestDirectory()) { try RepairPipeline.run(in: $0) }
        XCTAssertNil(run.failure)
        let entries = try run.entryObjects()
        XCTAssertEqual(
            Set(entries.compactMap { $0["rule"] as? String }), Set(["orphan", "dedup", "repoint", "merge", "default", "cloudID"]))
        let v2 = ModelVersion(schema: TimeQuestSchemas.v2)
        for entry in entries {
            let logged = try XCTUnwrap(RepairEntry.Rule(rawValue: try XCTUnwrap(entry["rule"] as? String)))
            let entity = try XCTUnwrap(v2.entity(named: try XCTUnwrap(entry["entity"] as? String)))
            let declaring = RepairPipeline.rules.filter { $0.effects.contains { $0.logged == logged } }
            let effect = try XCTUnwrap(declaring.first?.effects.first { $0.logged == logged }?.effect, "\(entry)")
            let field = entry["field"] as? String
            if effect == .removesRecord {
                XCTAssertNil(field, "\(entry)")
            } else {
                let allowed = declaring.reduce(into: Set<String>()) { $0.formUnion($1.fields(of: entity, in: v2)) }
                XCTAssertTrue(
                    field.map(allowed.contains) ?? false,
                    "\(entry) names a field none of \(declaring.map { type(of: $0) }) declares: \(allowed)")
            }
        }
    }

    func testTheVerifierExcusesExactlyWhatTheOldUnionDidOnARealLog() throws {
        let run = try RuleRun.run(RuleDatasets.messy(), in: try TemporaryTestDirectory()) { try RepairPipeline.run(in: $0) }
        XCTAssertNil(run.failure)
        let log = run.log
        let (changed, removed) = try MigrationVerifier.reportedEdits(in: log)
        XCTAssertEqual(
            changed,
            try log.keys(rule: .merge).union(log.keys(rule: .repoint)).union(log.keys(rule: .orphan)).union(log.keys(rule: .defaultFill)))
        XCTAssertEqual(removed, try log.keys(rule: .dedup))
        XCTAssertTrue(changed.contains(RecordField(entity: "RoutineTask", primaryKey: 1, field: "routine")))
        XCTAssertTrue(changed.contains(RecordField(entity: "RoutineTask", primaryKey: 2, field: "routine")))
        XCTAssertTrue(changed.contains(RecordField(entity: "Routine", primaryKey: 1, field: "cloudID")))
        XCTAssertEqual(
            removed,
            [RecordField(entity: "Routine", primaryKey: 2, field: ""), RecordField(entity: "PlayerProfile", primaryKey: 2, field: "")])
    }

    /// The library states the fact; how to record an expectation (a flag, a variable) is the CLI's.
    func testAMissingGoldenDumpIsAFactWithoutFlagNames() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = directory.path("fixtures")
        try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("v1-edge-cases"), to: fixtures.appendingPathComponent("v1-edge-cases"))
        let verifier = MigrationVerifier(fixtures: fixtures, target: TimeQuestSchemas.newest, candidates: TimeQuestSchemas.versions)
        let store = fixtures.appendingPathComponent("v1-edge-cases/default.store")
        try FileManager.default.removeItem(at: verifier.expectationURL(for: store))
        let work = directory.path("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let checks = try verifier.run(workDirectory: work) { _ in }
        XCTAssertEqual(checks.map(\.name), ["migrate", "golden", "invariants", "valid", "round-trip"])
        let golden = checks[1]
        XCTAssertFalse(golden.passed)
        XCTAssertEqual(golden.missingExpectation, "default.store.expected-2.0.0.dump")
        XCTAssertEqual(golden.detail, "no expectation default.store.expected-2.0.0.dump; record one and review it")
        XCTAssertEqual(checks.filter { $0.name != "golden" }.map(\.passed), [true, true, true, true], "\(checks.map(\.detail))")
        // Only the check that lacks its expectation says so in JSON.
        let json = try checks.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        XCTAssertEqual(json.map { $0.contains("missingExpectation") }, [false, true, false, false, false])
    }
}

extension Value {
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
