import Foundation
import QuestBakKit

/// Builds TimeQuest records with the app's own invariants (difference = actual − estimate, a
/// rating that follows from the accuracy), so generated stores look like the app wrote them.
package struct TimeQuestData {
    public private(set) var dataset: Dataset
    private var random: SeededGenerator
    private var hasCloudID: Bool

    public init(schema: Schema, seed: UInt64) {
        dataset = Dataset(schema: schema)
        random = SeededGenerator(seed: seed)
        hasCloudID = schema.entity(named: "Routine")?.cloudID != nil
    }

    /// 2025-03-01T07:00:00Z in seconds since 2001.
    public static let march2025: Double = 762_505_200

    private mutating func add(_ entity: String, _ primaryKey: Int64, _ values: [String: Value]) {
        var values = values
        if hasCloudID && values[Entity.cloudIDAttribute] == nil {
            values[Entity.cloudIDAttribute] = .string(
                entity == "PlayerProfile" ? TimeQuestSchemas.playerProfileCloudID : random.uuidString())
        }
        dataset.append(entity, primaryKey, values)
    }

    public mutating func routine(
        _ pk: Int64, name: String, displayName: String, activeDays: [Int64], isActive: Bool = true,
        createdAt: Double, updatedAt: Double? = nil
    ) {
        add(
            "Routine", pk,
            [
                "name": .string(name), "displayName": .string(displayName), "activeDays": .integerArray(activeDays),
                "isActive": .boolean(isActive), "createdAt": .date(createdAt), "updatedAt": .date(updatedAt ?? createdAt),
            ])
    }

    public mutating func task(_ pk: Int64, routine: Int64?, name: String, displayName: String, referenceSeconds: Int64?, orderIndex: Int64)
    {
        add(
            "RoutineTask", pk,
            [
                "name": .string(name), "displayName": .string(displayName),
                "referenceDurationSeconds": referenceSeconds.map { .integer($0) } ?? .null,
                "orderIndex": .integer(orderIndex), "routine": routine.map { .integer($0) } ?? .null,
            ])
    }

    public mutating func session(
        _ pk: Int64, routine: Int64?, startedAt: Double, completedAt: Double?, isCalibration: Bool, xpEarned: Int64
    ) {
        add(
            "GameSession", pk,
            [
                "startedAt": .date(startedAt), "completedAt": completedAt.map { .date($0) } ?? .null,
                "isCalibration": .boolean(isCalibration), "xpEarned": .integer(xpEarned), "routine": routine.map { .integer($0) } ?? .null,
            ])
    }

    public mutating func estimation(
        _ pk: Int64, session: Int64?, taskDisplayName: String, estimatedSeconds: Double, actualSeconds: Double,
        orderIndex: Int64, recordedAt: Double
    ) {
        let difference = actualSeconds - estimatedSeconds
        let accuracy = actualSeconds == 0 ? 0 : max(0, 100 - abs(difference) / actualSeconds * 100)
        let rating = accuracy >= 90 ? "spot_on" : accuracy >= 75 ? "close" : accuracy >= 50 ? "off" : "way_off"
        add(
            "TaskEstimation", pk,
            [
                "taskDisplayName": .string(taskDisplayName), "estimatedSeconds": .double(estimatedSeconds),
                "actualSeconds": .double(actualSeconds), "differenceSeconds": .double(difference),
                "accuracyPercent": .double(accuracy), "ratingRawValue": .string(rating), "orderIndex": .integer(orderIndex),
                "recordedAt": .date(recordedAt), "session": session.map { .integer($0) } ?? .null,
            ])
    }

    public mutating func profile(
        _ pk: Int64, totalXP: Int64, currentStreak: Int64, lastPlayedDate: Double?, createdAt: Double,
        notificationsEnabled: Bool = true, notificationHour: Int64 = 7, notificationMinute: Int64 = 30, soundEnabled: Bool = true
    ) {
        add(
            "PlayerProfile", pk,
            [
                "totalXP": .integer(totalXP), "currentStreak": .integer(currentStreak),
                "lastPlayedDate": lastPlayedDate.map { .date($0) } ?? .null, "createdAt": .date(createdAt),
                "notificationsEnabled": .boolean(notificationsEnabled), "notificationHour": .integer(notificationHour),
                "notificationMinute": .integer(notificationMinute), "soundEnabled": .boolean(soundEnabled),
            ])
    }

    public mutating func setMaximumPrimaryKeyFloor(_ entity: String, _ value: Int64) {
        dataset.maximumPrimaryKeyFloor[entity] = value
    }

    /// A random duration in whole and fractional seconds, for estimates and actual times.
    public mutating func seconds(_ range: ClosedRange<Double>) -> Double {
        (Double.random(in: range, using: &random) * 10).rounded() / 10
    }

    public mutating func jitter() -> Double {
        Double(Int.random(in: 0..<1_000_000, using: &random)) / 1_000_000
    }

    /// The typical app content: routines with ordered tasks, played sessions with one
    /// estimation per task, one profile.
    public mutating func addTypicalContent(
        routines plan: [(name: String, display: String, days: [Int64], tasks: [String])], sessionsPerRoutine: Int
    ) {
        var taskPK: Int64 = 0
        var sessionPK: Int64 = 0
        var estimationPK: Int64 = 0
        var totalXP: Int64 = 0
        for (routineIndex, item) in plan.enumerated() {
            let routinePK = Int64(routineIndex + 1)
            let created = Self.march2025 + Double(routineIndex) * 3600 + jitter()
            routine(
                routinePK, name: item.name, displayName: item.display, activeDays: item.days, createdAt: created,
                updatedAt: created + 86_400)
            for (order, title) in item.tasks.enumerated() {
                taskPK += 1
                let name = title.lowercased().replacingOccurrences(of: " ", with: "_")
                task(
                    taskPK, routine: routinePK, name: name, displayName: title,
                    referenceSeconds: order % 2 == 0 ? Int64(60 * (order + 2)) : nil, orderIndex: Int64(order))
            }
            for sessionIndex in 0..<sessionsPerRoutine {
                sessionPK += 1
                let started = created + Double(sessionIndex + 1) * 86_400 + jitter()
                var elapsed = 0.0
                var xp: Int64 = 0
                for (order, title) in item.tasks.enumerated() {
                    estimationPK += 1
                    let estimate = seconds(30...600)
                    let actual = seconds(30...600)
                    elapsed += actual
                    xp += 10
                    estimation(
                        estimationPK, session: sessionPK, taskDisplayName: title, estimatedSeconds: estimate, actualSeconds: actual,
                        orderIndex: Int64(order), recordedAt: started + elapsed)
                }
                totalXP += xp
                session(
                    sessionPK, routine: routinePK, startedAt: started, completedAt: started + elapsed + 1.5,
                    isCalibration: sessionIndex < 1, xpEarned: xp)
            }
        }
        profile(
            1, totalXP: totalXP, currentStreak: Int64(sessionsPerRoutine),
            lastPlayedDate: Self.march2025 + Double(sessionsPerRoutine) * 86_400, createdAt: Self.march2025 - 60)
    }

    public static let typicalRoutines: [(name: String, display: String, days: [Int64], tasks: [String])] = [
        ("morning", "Morning Routine", [2, 3, 4, 5, 6], ["Wake Up", "Brush Teeth", "Get Dressed", "Eat Breakfast"]),
        ("school_prep", "School Prep", [2, 3, 4, 5, 6], ["Pack Bag", "Shoes On", "Jacket"]),
        ("bedtime", "Bedtime", [1, 2, 3, 4, 5, 6, 7], ["Bath", "Pajamas", "Brush Teeth", "Read", "Lights Out"]),
    ]
}
