import Foundation
import QuestBakKit

/// Large TimeQuest stores for benchmarks and interruption tests: `estimations` estimations in
/// sessions of five, proportional routines and tasks, one profile. Records are streamed into
/// the writer, so generating millions of rows takes no more memory than generating ten.
package enum BulkStore {
    public static func write(to url: URL, schema: Schema = TimeQuestSchemas.v2, estimations: Int, seed: UInt64 = 1) throws {
        var random = SeededGenerator(seed: seed)
        let hasCloudID = schema.entity(named: "Routine")?.cloudID != nil
        let tasksPerRoutine = 5
        let sessions = max(1, estimations / tasksPerRoutine)
        let routines = max(1, sessions / 400)
        let base = TimeQuestData.march2025
        func withCloudID(_ values: [String: Value], _ generator: inout SeededGenerator) -> [String: Value] {
            guard hasCloudID else { return values }
            var values = values
            values[Entity.cloudIDAttribute] = .string(generator.uuidString())
            return values
        }
        let uuid = random.uuidString()
        try StoreWriter.write(to: url, schema: schema) { sink in
            for routine in 0..<routines {
                let created = base + Double(routine) * 60
                try sink.insert(
                    EntityRecord(
                        primaryKey: Int64(routine + 1),
                        values: withCloudID(
                            [
                                "name": .string("routine_\(routine)"), "displayName": .string("Routine \(routine)"),
                                "activeDays": .integerArray([2, 3, 4, 5, 6]), "isActive": .boolean(true),
                                "createdAt": .date(created), "updatedAt": .date(created),
                            ], &random)), into: "Routine")
                for task in 0..<tasksPerRoutine {
                    try sink.insert(
                        EntityRecord(
                            primaryKey: Int64(routine * tasksPerRoutine + task + 1),
                            values: withCloudID(
                                [
                                    "name": .string("task_\(task)"), "displayName": .string("Task \(task)"),
                                    "referenceDurationSeconds": .integer(Int64(60 * (task + 1))), "orderIndex": .integer(Int64(task)),
                                    "routine": .integer(Int64(routine + 1)),
                                ], &random)), into: "RoutineTask")
                }
            }
            var estimationPK: Int64 = 0
            for session in 0..<sessions {
                let started = base + Double(session) * 3600 + Double(session % 997) / 1000
                try sink.insert(
                    EntityRecord(
                        primaryKey: Int64(session + 1),
                        values: withCloudID(
                            [
                                "startedAt": .date(started), "completedAt": .date(started + 900), "isCalibration": .boolean(session < 3),
                                "xpEarned": .integer(50), "routine": .integer(Int64(session % routines + 1)),
                            ], &random)), into: "GameSession")
                for order in 0..<tasksPerRoutine where estimationPK < Int64(estimations) {
                    estimationPK += 1
                    let estimate = Double(30 + Int(random.next() % 570))
                    let actual = Double(30 + Int(random.next() % 570)) + 0.5
                    try sink.insert(
                        EntityRecord(
                            primaryKey: estimationPK,
                            values: withCloudID(
                                [
                                    "taskDisplayName": .string("Task \(order)"), "estimatedSeconds": .double(estimate),
                                    "actualSeconds": .double(actual),
                                    "differenceSeconds": .double(actual - estimate),
                                    "accuracyPercent": .double(max(0, 100 - abs(actual - estimate) / actual * 100)),
                                    "ratingRawValue": .string("close"), "orderIndex": .integer(Int64(order)),
                                    "recordedAt": .date(started + Double(order + 1) * 120), "session": .integer(Int64(session + 1)),
                                ], &random)), into: "TaskEstimation")
                }
            }
            try sink.insert(
                EntityRecord(
                    primaryKey: 1,
                    values: withCloudID(
                        [
                            "totalXP": .integer(Int64(sessions * 50)), "currentStreak": .integer(7),
                            "lastPlayedDate": .date(base + Double(sessions) * 3600),
                            "notificationsEnabled": .boolean(true), "notificationHour": .integer(7), "notificationMinute": .integer(30),
                            "soundEnabled": .boolean(true), "createdAt": .date(base),
                        ], &random
                    ).merging(hasCloudID ? [Entity.cloudIDAttribute: .string(TimeQuestSchemas.playerProfileCloudID)] : [:]) { $1 }),
                into: "PlayerProfile")
            return StoreWriter.Bookkeeping(metadata: StoreMetadata(model: CompiledModel(schema: schema), uuid: uuid))
        }
    }
}
