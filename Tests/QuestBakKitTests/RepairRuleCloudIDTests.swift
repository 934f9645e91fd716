import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class RepairRuleCloudIDTests: XCTestCase {
    typealias D = RuleDatasets

    func needy() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, D.routine(["name": .string("a")]))
        dataset.append("Routine", 2, D.routine(["name": .string("b"), "cloudID": .string("not-a-uuid")]))
        dataset.append("Routine", 3, D.routine(["name": .string("c"), "cloudID": .string(D.cloudA)]))
        dataset.append("Routine", 4, D.routine(["name": .string("d"), "cloudID": .string(D.cloudA)]))
        dataset.append("Routine", 5, D.routine(["name": .string("e"), "cloudID": .string("")]))
        dataset.append(
            "RoutineTask", 1, ["name": .string("t"), "displayName": .string("T"), "orderIndex": .integer(0), "routine": .integer(1)])
        dataset.append("PlayerProfile", 1, ["totalXP": .integer(1), "cloudID": .string(D.cloudB)])
        return dataset
    }

    /// The deterministic ID of a routine named `name` created at 10.5 (the key's REAL by bit pattern).
    func routineID(_ name: String) -> String {
        DeterministicID.uuid(name: "Routine|\(name)|\(String((10.5).bitPattern, radix: 16))").uuidString
    }

    func testMissingMalformedEmptyAndRepeatedCloudIDsGetDeterministicOnes() throws {
        let run = try RuleRun.apply([CloudIDRule()], to: needy(), in: try TemporaryTestDirectory(), cloudIDKind: .migration)
        XCTAssertNil(run.failure)
        let ids = try run.values("Routine", "cloudID")
        XCTAssertEqual(
            ids,
            [
                1: .string(routineID("a")), 2: .string(routineID("b")), 3: .string(D.cloudA), 4: .string(routineID("d")),
                5: .string(routineID("e")),
            ])
        // A child's ID names its parent by the parent's final cloudID, not its device-local key.
        let taskID = DeterministicID.uuid(name: "RoutineTask|\(routineID("a"))|t|0").uuidString
        XCTAssertEqual(try run.values("RoutineTask", "cloudID"), [1: .string(taskID)])
        XCTAssertEqual(try run.values("PlayerProfile", "cloudID"), [1: .string(TimeQuestSchemas.playerProfileCloudID)])
        let sentinel = TimeQuestSchemas.playerProfileCloudID
        // Parents first: PlayerProfile, Routine, RoutineTask; the kind is the context's.
        XCTAssertEqual(
            try run.entries(),
            [
                "migration cloudID: PlayerProfile _pk 1 (\(sentinel)) cloudID: \(reportJSON(.string(D.cloudB))) → \(reportJSON(.string(sentinel)))",
                "migration cloudID: Routine _pk 1 (\(routineID("a"))) cloudID: null → \(reportJSON(.string(routineID("a"))))",
                "migration cloudID: Routine _pk 2 (\(routineID("b"))) cloudID: \"not-a-uuid\" → \(reportJSON(.string(routineID("b"))))",
                "migration cloudID: Routine _pk 4 (\(routineID("d"))) cloudID: \(reportJSON(.string(D.cloudA))) → \(reportJSON(.string(routineID("d"))))",
                "migration cloudID: Routine _pk 5 (\(routineID("e"))) cloudID: \"\" → \(reportJSON(.string(routineID("e"))))",
                "migration cloudID: RoutineTask _pk 1 (\(taskID)) cloudID: null → \(reportJSON(.string(taskID)))",
            ])
    }

    /// SQLite's GLOB and length() stop at a NUL character, so a well-formed ID followed by a NUL
    /// and more passed the check in SQL; in Swift (diff's check) it never did. Now both agree.
    func testACloudIDWithANulCharacterInItIsMalformed() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, D.routine(["name": .string("a"), "cloudID": .string(D.cloudA + "\u{0}x")]))
        dataset.append("Routine", 2, D.routine(["name": .string("b"), "cloudID": .string(D.cloudB)]))
        let run = try RuleRun.apply([CloudIDRule()], to: dataset, in: try TemporaryTestDirectory(), cloudIDKind: .migration)
        XCTAssertNil(run.failure)
        XCTAssertEqual(try run.values("Routine", "cloudID"), [1: .string(routineID("a")), 2: .string(D.cloudB)])
    }

    func testAStoreWhoseCloudIDsAreFineIsNotTouched() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, D.routine(["cloudID": .string(D.cloudA)]))
        dataset.append("Routine", 2, D.routine(["name": .string("b"), "cloudID": .string(D.cloudB)]))
        dataset.append("PlayerProfile", 1, ["totalXP": .integer(1), "cloudID": .string(TimeQuestSchemas.playerProfileCloudID)])
        let run = try RuleRun.apply([CloudIDRule()], to: dataset, in: try TemporaryTestDirectory())
        XCTAssertEqual(try run.entries(), [])
        XCTAssertEqual(try run.values("Routine", "cloudID"), [1: .string(D.cloudA), 2: .string(D.cloudB)])
    }

    func testRandomIDsAreWellFormedAndUniqueButNotTheDeterministicOnes() throws {
        let run = try RuleRun.apply([CloudIDRule()], to: needy(), in: try TemporaryTestDirectory(), randomIDs: true)
        let ids = try run.values("Routine", "cloudID").values.compactMap(\.stringValue)
        XCTAssertEqual(ids.count, 5)
        XCTAssertEqual(Set(ids).count, 5)
        XCTAssertTrue(ids.allSatisfy(DeterministicID.isWellFormed))
        XCTAssertFalse(ids.contains(routineID("a")))
        XCTAssertTrue(try run.entries().allSatisfy { $0.hasPrefix("repair cloudID:") })
    }

    func testAGeneratedIDNeverTakesOneAnotherRecordKeeps() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        // Record 2 already holds the ID record 1 would be given.
        dataset.append("Routine", 1, D.routine(["name": .string("a")]))
        dataset.append("Routine", 2, D.routine(["name": .string("b"), "cloudID": .string(routineID("a"))]))
        let run = try RuleRun.apply([CloudIDRule()], to: dataset, in: try TemporaryTestDirectory())
        let ids = try run.values("Routine", "cloudID")
        XCTAssertEqual(ids[2], .string(routineID("a")))
        let retried = DeterministicID.uuid(name: "Routine|a|\(String((10.5).bitPattern, radix: 16))#1").uuidString
        XCTAssertEqual(ids[1], .string(retried))
    }

    func testItDeclaresTheCloudIDAttribute() {
        let rule = CloudIDRule()
        XCTAssertEqual(rule.effects, [RepairRuleEffect(.cloudID, .assignsCloudID)])
        XCTAssertEqual(
            rule.fields(
                of: ModelVersion(schema: TimeQuestSchemas.v2).entity(named: "Routine")!, in: ModelVersion(schema: TimeQuestSchemas.v2)),
            ["cloudID"])
        XCTAssertEqual(
            rule.fields(
                of: ModelVersion(schema: TimeQuestSchemas.v1).entity(named: "Routine")!, in: ModelVersion(schema: TimeQuestSchemas.v1)), [])
    }
}
