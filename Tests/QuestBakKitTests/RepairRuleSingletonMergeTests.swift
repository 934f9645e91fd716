import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class RepairRuleSingletonMergeTests: XCTestCase {
    func profiles() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        let common: [String: Value] = [
            "notificationsEnabled": .boolean(true), "notificationHour": .integer(7), "notificationMinute": .integer(30),
            "soundEnabled": .boolean(true),
        ]
        dataset.append(
            "PlayerProfile", 1,
            common.merging([
                "totalXP": .integer(10), "currentStreak": .integer(5), "lastPlayedDate": .date(100.5), "createdAt": .date(50.5),
                "notificationHour": .integer(8),
            ]) { $1 })
        dataset.append(
            "PlayerProfile", 2,
            common.merging([
                "totalXP": .integer(30), "currentStreak": .integer(2), "createdAt": .date(20.5),
            ]) { $1 })
        dataset.append(
            "PlayerProfile", 3,
            common.merging([
                "totalXP": .integer(20), "currentStreak": .integer(7), "lastPlayedDate": .date(200.5), "createdAt": .date(60.5),
            ]) { $1 })
        dataset.append("Routine", 1, RuleDatasets.routine())
        dataset.append("Routine", 2, RuleDatasets.routine())
        return dataset
    }

    func testExtraProfilesMergeIntoTheLowestKeyByTheSchemasMergeRules() throws {
        let run = try RuleRun.apply([SingletonMergeRule()], to: profiles(), in: try TemporaryTestDirectory())
        XCTAssertNil(run.failure)
        let profiles = try run.records("PlayerProfile")
        XCTAssertEqual(profiles.map(\.primaryKey), [1])
        XCTAssertEqual(profiles[0]["totalXP"], .integer(30))
        XCTAssertEqual(profiles[0]["currentStreak"], .integer(7))
        XCTAssertEqual(profiles[0]["lastPlayedDate"], .date(200.5))
        XCTAssertEqual(profiles[0]["createdAt"], .date(20.5))
        XCTAssertEqual(profiles[0]["notificationHour"], .integer(8), "properties without a merge rule come from the keeper")
        XCTAssertEqual(
            try run.entries(),
            [
                "repair merge: PlayerProfile _pk 1 createdAt: \(reportJSON(.date(50.5))) → \(reportJSON(.date(20.5)))",
                "repair merge: PlayerProfile _pk 1 currentStreak: 5 → 7",
                "repair merge: PlayerProfile _pk 1 lastPlayedDate: \(reportJSON(.date(100.5))) → \(reportJSON(.date(200.5)))",
                "repair merge: PlayerProfile _pk 1 totalXP: 10 → 30",
                "repair dedup: PlayerProfile _pk 2 dropped as a duplicate of _pk 1",
                "repair dedup: PlayerProfile _pk 3 dropped as a duplicate of _pk 1",
            ])
        // Routines with one natural key are the duplicate rule's business, not this one's.
        XCTAssertEqual(try run.records("Routine").count, 2)
    }

    func testOneProfileIsLeftAlone() throws {
        var dataset = profiles()
        dataset.records["PlayerProfile"] = Array(dataset.records["PlayerProfile"]!.prefix(1))
        let run = try RuleRun.apply([SingletonMergeRule()], to: dataset, in: try TemporaryTestDirectory())
        XCTAssertEqual(try run.entries(), [])
        XCTAssertEqual(try run.values("PlayerProfile", "totalXP"), [1: .integer(10)])
    }

    func testItDeclaresTheMergedPropertiesAndTheRemovals() {
        let rule = SingletonMergeRule()
        XCTAssertEqual(Set(rule.effects.map(\.logged)), [.merge, .dedup, .repoint])
        let v2 = TimeQuestSchemas.v2
        XCTAssertEqual(
            rule.fields(of: ModelVersion(schema: v2).entity(named: "PlayerProfile")!, in: ModelVersion(schema: v2)),
            ["totalXP", "currentStreak", "lastPlayedDate", "createdAt"])
        XCTAssertEqual(rule.fields(of: ModelVersion(schema: v2).entity(named: "Routine")!, in: ModelVersion(schema: v2)), [])
    }
}
