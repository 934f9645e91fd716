import Foundation

/// One piece of work started on another thread now, its result (or error) taken later: the
/// caller goes on with other work meanwhile, on the other core. The caller takes the result on
/// every path, after a failure of its own too, so that no work outlives the operation that
/// started it (e.g. one still reading a store that a restore is about to delete and write again).
package final class BackgroundResult<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is written once on the work's thread (or by `fill`) before `group`
    // leaves, and read only after `group.wait()`, which orders the read after the write.
    private let group = DispatchGroup()
    private var result: Result<Value, Error>?

    package init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async(group: group) { self.result = Result { try work() } }
    }

    /// One whose work runs elsewhere and hands its result over by `fill`, exactly once: for
    /// several results worked out one after another on one thread (`CloudIDChecks`).
    package init() { group.enter() }

    /// The result of the work `init()` left to the caller; a second call is a programming error.
    package func fill(_ result: Result<Value, Error>) {
        self.result = result
        group.leave()
    }

    /// Waits for the work; its value, or its error thrown.
    package func value() throws -> Value {
        group.wait()
        return try result!.get()
    }

    /// Waits for the work; its error, if it failed.
    package func error() -> Error? {
        group.wait()
        if case .failure(let error) = result { return error }
        return nil
    }
}
