import Foundation

// The front door: every verb an app needs is a static function of `QuestBak`, in the files of
// this folder (Backup, Restore, Migration, Inspection, Rescue). They wrap the pipelines and add what an
// app expects of a library: `URL`s and `Date`s, work folders made and removed here, `Sendable`
// options, one error type (`QuestBakError`), progress, and cancellation.
//
// Cancellation is Swift concurrency's: every long operation is an `async` function that honours
// the cancellation of the task that calls it. The task's cancellation handler sets a
// `Cancellation` flag, which the pipelines check between batches of records and once more before
// they put their output in place: the record loops run on GRDB's and the hand-off's own threads,
// where `Task.isCancelled` cannot see the calling task. A cancelled operation throws
// `QuestBakError` of category `.cancelled` and leaves no output and no temporary file.

extension QuestBak {
    /// What a long operation's progress handler is called with, every few thousand records of an
    /// entity and once when an entity is done; it is called on the operation's own threads.
    public typealias ProgressHandler = @Sendable (RecordProgress) -> Void

    /// Runs a pipeline with a private work folder (removed afterwards, whatever happens) and a
    /// cancellation flag the calling task's cancellation sets; any error becomes a `QuestBakError`.
    ///
    /// The pipeline runs on the calling task (a nonisolated `async` function runs on the global
    /// concurrent executor, not the caller's actor).
    static func perform<Result>(
        _ body: (_ workDirectory: URL, _ cancellation: Cancellation) throws -> Result
    ) async throws(QuestBakError) -> Result {
        let cancellation = Cancellation()
        do {
            return try await withTaskCancellationHandler {
                try cancellation.check()
                let workDirectory = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(workDirectory) }
                return try body(workDirectory, cancellation)
            } onCancel: {
                cancellation.cancel()
            }
        } catch {
            throw QuestBakError(error)
        }
    }

    /// Runs a short operation, which has no progress and nothing to cancel; any error becomes a
    /// `QuestBakError`.
    static func performNow<Result>(_ body: () throws -> Result) throws(QuestBakError) -> Result {
        do {
            return try body()
        } catch {
            throw QuestBakError(error)
        }
    }

    /// Where a repair log's entries go, opened before the operation so that a log file that
    /// cannot be made refuses the operation up front: once a store is in place, failing over its
    /// log would hide what was done (and where the old store was kept).
    struct RepairLogOutput {
        let url: URL
        let output: AtomicOutputFile

        /// nil when no log is wanted.
        static func open(_ url: URL?) throws -> RepairLogOutput? {
            try url.map { RepairLogOutput(url: $0, output: try AtomicOutputFile(destination: $0, overwrite: true)) }
        }

        /// Writes every entry of `logs`, in order (a migration chain's steps, the earlier first),
        /// one JSON object a line, before the work folder that holds them is removed.
        func write(_ logs: [RepairLog]) throws {
            var lines = Data()
            func flush() throws {
                try lines.withUnsafeBytes { try FramedTar.writeAll(output.fileDescriptor, $0, path: url.path) }
                lines.removeAll(keepingCapacity: true)
            }
            for log in logs {
                try log.forEachEntryLine { line in
                    lines.append(Data(line.utf8))
                    lines.append(0x0A)
                    if lines.count >= 1 << 20 { try flush() }
                }
            }
            try flush()
            try output.commit()
        }
    }
}

/// The app knowledge an operation may use besides what a store carries: the public face of the
/// library's app profiles.
///
/// By default (``none``) nothing is assumed: a store is read by the model it carries in
/// `Z_MODELCACHE`, and records are matched by cloudID and the model's uniqueness constraints.
/// An app profile adds what no model says: the schemas of an app's versions (to read archives
/// written by schema, formats 1 and 2, and to restore at another version), natural keys that
/// match records without a cloudID, singletons and merge rules. Pass one explicitly in an
/// operation's options; the library never applies one on its own.
///
/// ``timeQuest`` is the one profile the library ships. Profiles of other apps cannot be declared
/// yet: their shape is the engine's, still changing, and an app's own store needs none.
public struct KnownSchemas: Sendable {
    /// The app profiles whose schemas a store or archive may be (their natural keys, singletons
    /// and merge rules come with them).
    package var profiles: [AppProfile]

    /// The given app profiles.
    package init(_ profiles: [AppProfile]) {
        self.profiles = profiles
    }

    /// Every schema of the profiles, oldest first within each.
    package var schemas: [ModelVersion] { profiles.flatMap(\.versions) }

    /// No schema: every store is read by its own model, or by its tables.
    public static let none = KnownSchemas([])
    /// TimeQuest's schemas, for TimeQuest's stores and archives.
    public static let timeQuest = KnownSchemas([.timeQuest])
}

extension QuestBak {
    /// The suffix of a replaced store's backup (`default.store.questbak-backup-20260131T120000Z`):
    /// the time of the replace, in UTC.
    package static func backupStamp(_ date: Date) -> String {
        let text = DateText.iso8601(secondsSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down)) ?? "unknown"
        return text.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
    }
}
