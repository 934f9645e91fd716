import Foundation

/// A model archive's record lines (by entity name) decoded on a second core ahead of the
/// restore's inserts, into the row or the error `ModelMemberEncoding.LineDecoder` gives: a
/// `WorkAhead` of those types, made concrete in the module that declares it, so that its work
/// is specialized for them. The restore (another module) calls these methods, which are not generic.
// @unchecked: a `WorkAhead`, used as it says (the owner's methods from one thread).
package final class ModelLinesAhead: @unchecked Sendable {
    package typealias Line = (entity: String, line: Data)
    package typealias Decoded = Result<ModelMemberEncoding.Row, Error>
    private let work = WorkAhead<Line, Decoded>()

    package init() {}

    package var started: Bool { work.started }
    package func submit(_ line: Line) { work.submit(line) }
    package func start(_ decode: @escaping (Line) -> Decoded) { work.start(decode) }
    package func next() -> Decoded { work.next() }
    package func stop() { work.stop() }
}
