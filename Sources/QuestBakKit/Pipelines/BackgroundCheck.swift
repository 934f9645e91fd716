import Foundation

/// A check that runs on a thread of its own while its caller does other work; `result()` waits
/// for it. The caller must call `result()` on every path (also after a failure of its own), so
/// that no check outlives the operation that started it, e.g. one still reading a store that a
/// restore is about to delete and write again.
final class BackgroundCheck<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` is written once, before `done` is left, and read only after
    // `done.wait()` returns, which orders the write before the read.
    private let done = DispatchGroup()
    private var outcome: Result<Value, Error>?

    init(_ check: @escaping @Sendable () throws -> Value) {
        done.enter()
        DispatchQueue.global().async {
            self.outcome = Result { try check() }
            self.done.leave()
        }
    }

    /// The check's value, or its error, once it has finished.
    func result() throws -> Value {
        done.wait()
        guard let outcome else { preconditionFailure("BackgroundCheck finished without an outcome") }
        return try outcome.get()
    }
}
