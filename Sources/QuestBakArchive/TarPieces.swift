import Crypto
import Foundation

/// What a tar stream holds next, as `ArchiveReader` checks it: a member's header, its bytes (or
/// its lines), the end of its data with its SHA-256, or the error reading it met there.
package enum TarPiece {
    /// The next member's header; nil at the archive's end.
    case entry(TarEntry?)
    /// A member's next bytes, as one read of the tar gave them.
    case bytes(Data)
    /// A member of lines: one read of the tar, cut at its newlines.
    case lines(TarLines)
    /// The end of the member's data: the SHA-256 of all of it (hex), and its last line when it
    /// does not end with a newline (a member of lines whose unfinished line was not too long).
    case end(sha256: String, lastLine: Data?)
    /// What reading the tar threw (`TarReadError`), at the point where it threw it.
    case failure(Error)
}

/// One read of a member of lines, as `ArchiveReader.readLines` used to cut it itself.
package struct TarLines {
    /// How many of the member's bytes the read gave.
    var count: Int
    /// The lines the read completed, in order, each without its newline.
    var lines: [Data]
    /// Whether the line the read left unfinished is longer than a line may be: the reader
    /// refuses it here unless it refused a line before; the rest of the member is only hashed.
    var unfinishedTooLong: Bool
}

/// Cuts a tar stream into `TarPiece`s: the tar's framing, the decompression under it, each
/// member's SHA-256, and a member of lines cut at its newlines. Whatever it reads or throws it
/// gives as a piece, in the stream's order; `ArchiveReader` makes every check of them, in the
/// order it always made them, on its own thread. The pieces are the same whichever thread cuts
/// them, so what a read finds or throws is too: the reader's (`next`, when none is ready), or
/// another with time to spare, a few pieces ahead (`cutAhead`: a restore's line decoder, between
/// its lines, `RestoreAhead`). Whichever thread gets there first cuts the next piece: when the
/// decoder is busy (long lines) the reader cuts its own, as it always did; when the decoder is
/// ahead (short lines, the inserts setting the pace) it cuts them all.
// @unchecked: every member but the two constants is used under `lock`, by one thread at a time.
package final class TarPieceCutter: @unchecked Sendable {
    private let tar: TarArchiveReader
    private let lock = NSLock()
    /// The members read as lines (their paths), once the manifest has named them (set before
    /// any other thread cuts), and how long an unfinished line may grow before it is refused.
    var lineMembers: Set<String> = []
    private let lineBytes: Int
    private var member: (path: String, isLines: Bool)?
    private var hasher = SHA256()
    /// A member of lines' unfinished line, carried to the next read.
    private var pending = Data()
    /// The member's unfinished line grew past `lineBytes`: its rest is only hashed.
    private var tooLong = false
    private var atEnd = false
    private var failure: Error?
    /// Set once the reader is done with the stream (its file is closed next): a piece asked
    /// for after it, by a thread cutting ahead, reads nothing.
    private var closed = false
    /// The reader refused a line of the current member, whose rest it only hashes: its lines are
    /// not cut (up to `Limits.checksumAfterLineErrorBytes` of them, each a `Data`).
    private var hashingOnly = false
    /// The thread that made the cutter (the reader's), and how many pieces another cut: what
    /// shows that they were cut ahead (`RestoreAheadTests`).
    private let maker = pthread_self()
    private var cutByAnother = 0
    private var buffer = [UInt8](repeating: 0, count: TarPieceCutter.lineReadBytes)
    /// Pieces cut ahead (`cutAhead`), in order, not yet taken (`next`).
    private var ready: [TarPiece] = []

    /// The reads a member of lines is cut from (`ArchiveReader.readLines`'s buffer, as it was),
    /// and any other member's (`readAll`'s).
    static let lineReadBytes = 256 * 1024
    static let byteReadBytes = 64 * 1024

    struct Closed: Error {}

    init(_ tar: TarArchiveReader, lineBytes: Int) {
        self.tar = tar
        self.lineBytes = lineBytes
    }

    /// The stream's next piece (the reader's thread): the first cut ahead, or else cut now;
    /// after a failure, that failure again.
    package func next() -> TarPiece {
        lock.lock()
        defer { lock.unlock() }
        if closed { return .failure(Closed()) }
        if !ready.isEmpty { return ready.removeFirst() }
        return cut()
    }

    /// Cuts the piece after those ready, unless `depth` are (a thread other than the reader's,
    /// between its own work). Memory stays flat: at most `depth` pieces wait, each one read of
    /// the tar (256 KiB of lines at most).
    package func cutAhead(keeping depth: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed, ready.count < depth else { return }
        if pthread_equal(pthread_self(), maker) == 0 { cutByAnother += 1 }
        ready.append(cut())
    }

    private func cut() -> TarPiece {
        if let failure { return .failure(failure) }
        do {
            return try read()
        } catch {
            failure = error
            return .failure(error)
        }
    }

    /// No piece is read after this returns (one being read is finished first).
    func close() {
        lock.withLock { closed = true }
    }

    /// The rest of the current member is only hashed, not cut into lines (the reader refused a
    /// line of it); pieces cut before this still hold theirs, which the reader passes over.
    func hashOnly() {
        lock.withLock { hashingOnly = true }
    }

    /// How many pieces a thread other than the one that made the cutter has cut.
    package var piecesCutByAnotherThread: Int {
        lock.withLock { cutByAnother }
    }

    private func read() throws -> TarPiece {
        guard let member else {
            // Asked again past the end (a reading ahead), the tar is not read again.
            if atEnd { return .entry(nil) }
            let entry = try tar.nextEntry()
            if let entry {
                self.member = (entry.path, lineMembers.contains(entry.path))
                hasher = SHA256()
                pending = Data()
                tooLong = false
                hashingOnly = false
            } else {
                atEnd = true
            }
            return .entry(entry)
        }
        let wanted = member.isLines ? Self.lineReadBytes : Self.byteReadBytes
        let count = try buffer.withUnsafeMutableBytes { try tar.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted])) }
        if count == 0 {
            self.member = nil
            let lastLine = member.isLines && !tooLong && !pending.isEmpty ? pending : nil
            pending = Data()
            return .end(sha256: hasher.finalize().hexString, lastLine: lastLine)
        }
        return buffer.withUnsafeBytes { whole in
            let bytes = UnsafeRawBufferPointer(rebasing: whole[0..<count])
            hasher.update(bufferPointer: bytes)
            guard member.isLines else { return .bytes(Data(bytes)) }
            guard !hashingOnly else { return .lines(TarLines(count: count, lines: [], unfinishedTooLong: false)) }
            guard !tooLong else { return .lines(TarLines(count: count, lines: [], unfinishedTooLong: true)) }
            return .lines(cut(bytes))
        }
    }

    /// The lines `bytes` completes, the first one joined to the unfinished line before it.
    /// `memchr`, not `firstIndex(of:)`, whose loop over each byte was a fifteenth of the
    /// transaction's thread in another app's import.
    private func cut(_ bytes: UnsafeRawBufferPointer) -> TarLines {
        var lines: [Data] = []
        guard let base = bytes.baseAddress else { return TarLines(count: 0, lines: [], unfinishedTooLong: false) }
        var start = 0
        while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
            let newline = base.distance(to: UnsafeRawPointer(found))
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            if pending.isEmpty {
                lines.append(Data(line))
            } else {
                pending.append(contentsOf: line)
                lines.append(pending)
                pending = Data()
            }
            start = newline + 1
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        if pending.count > lineBytes {
            tooLong = true
            pending = Data()
        }
        return TarLines(count: bytes.count, lines: lines, unfinishedTooLong: tooLong)
    }
}

/// Told each time the reader takes a piece (its thread), so that it can have another cut ahead.
package protocol TarPiecesAhead: AnyObject {
    func pieceTaken()
}

/// A tar stream's pieces in order, for `ArchiveReader`: cut on the reader's thread, or, once
/// `readAhead` is called, cut ahead where another thread has time to spare (a restore's line
/// decoder, between its lines: `RestoreAhead`), so that the thread reading the archive (a
/// restore's, where its SQLite transaction is open) spends less on decompression, tar framing,
/// hashing and cutting lines.
package final class TarPieces {
    package let cutter: TarPieceCutter
    private var ahead: TarPiecesAhead?

    init(_ cutter: TarPieceCutter) {
        self.cutter = cutter
    }

    /// `ahead` is told of every piece taken from here on (and has them cut ahead with `cutter`).
    package func readAhead(_ ahead: TarPiecesAhead) {
        self.ahead = ahead
    }

    private func next() -> TarPiece {
        let piece = cutter.next()
        ahead?.pieceTaken()
        return piece
    }

    /// The next member's header, nil at the archive's end; what is left of the member before it
    /// is passed over (as a tar reader passes over a member's unread data).
    func nextEntry() throws -> TarEntry? {
        while true {
            switch next() {
            case .entry(let entry): return entry
            case .failure(let error): throw error
            case .bytes, .lines, .end: continue
            }
        }
    }

    /// The rest of the current member is only hashed (`TarPieceCutter.hashOnly`).
    func hashOnly() {
        cutter.hashOnly()
    }

    /// The current member's next piece of data (`.bytes` or `.lines`), or its `.end`.
    func nextData() throws -> TarPiece {
        let piece = next()
        switch piece {
        case .failure(let error): throw error
        case .entry: preconditionFailure("TarPieces: a member's data ended without its end")
        case .bytes, .lines, .end: return piece
        }
    }
}
