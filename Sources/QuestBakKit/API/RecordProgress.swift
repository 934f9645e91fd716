import CoreDataStore
import QuestBakArchive

/// How far a long operation is through one entity's records: what an operation's `progress`
/// callback receives, every few thousand records of an entity, and once when an entity is done.
/// `rowsTotal` is nil when the operation cannot know it in advance.
public struct RecordProgress: Sendable, Equatable {
    /// What is being done, when the operation does more than one thing ("read a", "restore").
    public var step: String?
    /// The entity whose records are being read or written.
    public var entity: String
    /// Records of `entity` done so far.
    public var rowsDone: Int
    /// Records of `entity` in all, when known.
    public var rowsTotal: Int?

    /// A report of `rowsDone` of `rowsTotal` records of `entity`, in `step`.
    public init(step: String? = nil, entity: String, rowsDone: Int, rowsTotal: Int?) {
        self.step = step
        self.entity = entity
        self.rowsDone = rowsDone
        self.rowsTotal = rowsTotal
    }
}

/// Counts one entity's records at a time and tells `report` every `stride` records and when
/// the entity changes or the operation ends, so that a caller's callback costs nothing per row;
/// at the same points it checks `cancellation`, so a cancelled operation stops between batches.
package final class RecordProgressCounter {
    private let report: ((RecordProgress) -> Void)?
    private let cancellation: Cancellation?
    private let totals: [String: Int]
    private let step: String?
    private let stride: Int
    private var entity: String?
    private var done = 0

    package init(
        report: ((RecordProgress) -> Void)?, totals: [String: Int], step: String? = nil, stride: Int = 4096,
        cancellation: Cancellation? = nil
    ) {
        self.report = report
        self.cancellation = cancellation
        self.totals = totals
        self.step = step
        self.stride = stride
    }

    /// Counts `rows` of entity `name`; throws `CancellationError` at an entity's start or a
    /// stride's end once the operation is cancelled.
    package func count(_ name: String, by rows: Int = 1) throws {
        guard report != nil || cancellation != nil else { return }
        if name != entity {
            try cancellation?.check()
            finishEntity()
            entity = name
            done = 0
            send()
        }
        let before = done / stride
        done += rows
        if done / stride != before {
            try cancellation?.check()
            send()
        }
    }

    /// The last entity's count, as it ends.
    package func finishEntity() {
        if entity != nil { send() }
        entity = nil
    }

    private func send() {
        guard let entity else { return }
        report?(RecordProgress(step: step, entity: entity, rowsDone: done, rowsTotal: totals[entity]))
    }
}
