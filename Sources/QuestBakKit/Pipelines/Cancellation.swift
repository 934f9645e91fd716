import Foundation

/// A flag a long operation checks between batches of records, and a `CancellationError` when it
/// is set. The public API sets it from the calling task's cancellation handler
/// (`withTaskCancellationHandler`): the pipelines' record loops run on GRDB's and the hand-off's
/// own threads, where `Task.isCancelled` cannot see the task, so the flag is what crosses threads.
package final class Cancellation: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false

    package init() {}

    package func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
    }

    package var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Throws `CancellationError` once `cancel` was called; whatever the operation made is then
    /// removed by its own failure path, as for any other error.
    package func check() throws {
        if isCancelled { throw CancellationError() }
    }
}
