import Foundation
import QuestBakArchive

/// Another app's restore's second core: its record lines decoded (`ModelMemberEncoding.LineDecoder`)
/// and, between them, its archive read (the tar's decompression and framing, each member's
/// SHA-256, its lines cut at their newlines: `TarPieceCutter.cutAhead`), ahead of the
/// transaction's thread, which then checks what it takes, in its order, and inserts. One
/// `WorkAhead` does both, in the order they were asked for: the decoder's core was half idle
/// while the transaction's thread, which sets the pace, spent an eighth of its time reading the
/// archive. (A third thread for the reading, when both cores were full, gained nothing: session 32.)
/// A piece the decoder has not cut by the time the reader needs it, the reader cuts itself.
// @unchecked: a `WorkAhead`, used as it says (every method from the owner's thread).
final class RestoreAhead: TarPiecesAhead, @unchecked Sendable {
    typealias Line = (entity: String, line: Data)
    typealias Decoded = Result<ModelMemberEncoding.Row, Error>
    private enum Job {
        case decode(Line)
        case cutAhead
    }
    private enum Done {
        case row(Decoded)
        case cutAhead
    }
    private let work = WorkAhead<Job, Done>()
    /// The archive's pieces, cut ahead from `start` on when given (`readAhead`).
    private var tarPieces: TarPieces?
    /// How many pieces may wait, cut ahead: each at most one read of the tar (256 KiB of lines),
    /// so that memory stays flat at any size.
    static let piecesAhead = 4

    var started: Bool { work.started }

    /// Submits a line to decode (owner only); its row is taken by `next`, in order.
    func submit(_ line: Line) {
        work.submit(.decode(line))
    }

    /// The archive's pieces are to be cut ahead too, once started (before `start`).
    func readAhead(_ pieces: TarPieces) {
        tarPieces = pieces
    }

    /// Starts the second core: it decodes every line submitted so far and every one after it,
    /// and cuts the archive's pieces ahead from here on, as the reader takes them.
    func start(_ decode: @escaping (Line) -> Decoded) {
        let cutter = tarPieces?.cutter
        work.start { job in
            switch job {
            case .decode(let line): return .row(decode(line))
            case .cutAhead:
                cutter?.cutAhead(keeping: Self.piecesAhead)
                return .cutAhead
            }
        }
        guard let tarPieces else { return }
        for _ in 0..<Self.piecesAhead { work.submit(.cutAhead) }
        tarPieces.readAhead(self)
    }

    /// The row (or error) of the earliest line submitted and not yet taken.
    func next() -> Decoded {
        while true {
            if case .row(let row) = work.next() { return row }
        }
    }

    /// Another piece cut ahead, in place of the one the reader took.
    func pieceTaken() {
        work.submit(.cutAhead)
    }

    /// Gives back a row once inserted: destroyed on the second core, where it was made.
    func recycle(_ row: consuming Decoded) {
        work.recycle(.row(row))
    }

    func stop() {
        work.stop()
    }
}
